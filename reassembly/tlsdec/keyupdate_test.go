package tlsdec

import (
	"bytes"
	"fmt"
	"testing"
)

// label13 is an HkdfLabel written out byte by byte (RFC 8446 section 7.1).
func label13(label string, n int) []byte {
	full := "tls13 " + label
	return append(append([]byte{byte(n >> 8), byte(n), byte(len(full))}, full...), 0)
}

// synth13 writes the records of one side of a TLS 1.3 connection, with keys derived by the
// standard library's HKDF from label13, independently of the code under test.
type synth13 struct {
	t       *testing.T
	s       suite
	secret  []byte
	key, iv []byte
	seq     uint64
	out     []byte
}

func (w *synth13) setSecret(secret []byte) {
	w.secret = secret
	w.key = stdExpand(w.t, w.s, secret, label13("key", w.s.keyLen), w.s.keyLen)
	w.iv = stdExpand(w.t, w.s, secret, label13("iv", 12), 12)
	w.seq = 0
}

func (w *synth13) record(typ byte, content []byte, pad int) {
	w.out = append(w.out, sealRecord(w.t, w.s, w.key, w.iv, w.seq, typ, content, pad)...)
	w.seq++
}

func (w *synth13) keyUpdate(requested byte) {
	w.record(TypeHandshake, hsMsg(hsKeyUpdate, []byte{requested}), 0)
	n := w.s.hash().Size()
	w.setSecret(stdExpand(w.t, w.s, w.secret, label13("traffic upd", n), n))
}

// A TLS 1.3 connection with TLS_AES_256_GCM_SHA384 (which crypto/tls never picks when it
// talks to itself): handshake messages split across records and records holding several,
// padding, a NewSessionTicket, and KeyUpdates on both sides.
func TestConnKeyUpdate(t *testing.T) {
	const id = 0x1302
	s := suites[id]
	random := bytes.Repeat([]byte{0x5a}, 32)
	secret := func(b byte) []byte { return bytes.Repeat([]byte{b}, 48) }
	keyLog := fmt.Sprintf("%s %x %x\n%s %x %x\n%s %x %x\n%s %x %x\n",
		LabelClientHandshake, random, secret(1), LabelServerHandshake, random, secret(2),
		LabelClientTraffic0, random, secret(3), LabelServerTraffic0, random, secret(4))

	plainRecord := func(typ byte, body []byte) []byte {
		return append([]byte{typ, 3, 3, byte(len(body) >> 8), byte(len(body))}, body...)
	}
	client := &synth13{t: t, s: s}
	server := &synth13{t: t, s: s}
	client.out = plainRecord(TypeHandshake, hsMsg(hsClientHello, buildClientHello(random, sniExt("broker.example"))))
	server.out = plainRecord(TypeHandshake, hsMsg(hsServerHello, buildServerHello(bytes.Repeat([]byte{7}, 32), id, 0x0304)))
	server.out = append(server.out, plainRecord(TypeChangeCipherSpec, []byte{1})...)
	server.setSecret(secret(2))
	flight := append(hsMsg(8, make([]byte, 10)), hsMsg(11, make([]byte, 3000))...) // EncryptedExtensions, Certificate
	flight = append(flight, hsMsg(15, make([]byte, 80))...)                        // CertificateVerify
	flight = append(flight, hsMsg(hsFinished, make([]byte, 48))...)
	server.record(TypeHandshake, flight[:7], 0) // a record boundary inside a message header
	server.record(TypeHandshake, flight[7:2000], 5)
	server.record(TypeHandshake, flight[2000:], 0)
	server.setSecret(secret(4))
	server.record(TypeHandshake, hsMsg(4, make([]byte, 100)), 0) // NewSessionTicket
	client.out = append(client.out, plainRecord(TypeChangeCipherSpec, []byte{1})...)
	client.setSecret(secret(1))
	client.record(TypeHandshake, hsMsg(hsFinished, make([]byte, 48)), 0)
	client.setSecret(secret(3))

	var want [2][]byte
	send := func(w *synth13, side int, msg string, pad int) {
		w.record(TypeApplicationData, []byte(msg), pad)
		want[side] = append(want[side], msg...)
	}
	send(client, 0, "request 1", 0)
	send(server, 1, "response 1", 100)
	client.keyUpdate(1)
	send(client, 0, "request 2 after the client's update", 0)
	server.keyUpdate(0)
	send(server, 1, "response 2 after the server's update", 0)
	client.keyUpdate(0)
	client.keyUpdate(0)
	send(client, 0, "request 3 after two more", 3)
	client.record(TypeAlert, []byte{1, 0}, 0)

	ss := &session{chunks: []chunk{{0, client.out[:300]}, {1, server.out}, {0, client.out[300:]}}, sent: want}
	c, r := decrypt(t, ss, mustKeys(t, []byte(keyLog)), false, 11)
	if c.State() != Decrypting {
		t.Fatalf("state %v: %v", c.State(), c.Err())
	}
	for side := range 2 {
		if !bytes.Equal(r.data[side], want[side]) {
			t.Errorf("side %d: %q, want %q", side, r.data[side], want[side])
		}
	}
	if got := c.Info().String(); got != "TLS 1.3 TLS_AES_256_GCM_SHA384" {
		t.Errorf("info %q", got)
	}
}
