package tlsdec

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

// Records of RFC 8448 section 3, protected with TLS_AES_128_GCM_SHA256.
const (
	// {client} send handshake record: the client's Finished, the client handshake keys' record 0.
	rfc8448ClientFinishedRecord = `17 03 03 00 35 75 ec 4d c2 38 cc e6 0b 29 80 44 a7 1e 21 9c 56 cc 77 b0 51 7f e9 b9 3c
		7a 4b fc 44 d8 7f 38 f8 03 38 ac 98 fc 46 de b3 84 bd 1c ae ac ab 68 67 d7 26 c4 05 46`
	// {client} send application_data record: 00 01 02 ... 31, client application record 0.
	rfc8448ClientAppRecord = `17 03 03 00 43 a2 3f 70 54 b6 2c 94 d0 af fa fe 82 28 ba 55 cb ef ac ea 42 f9 14 aa 66
		bc ab 3f 2b 98 19 a8 a5 b4 6b 39 5b d5 4a 9a 20 44 1e 2b 62 97 4e 1f 5a 62 92 a2 97 70 14 bd 1e 3d ea e6
		3a ee bb 21 69 49 15 e4`
	// {server} send application_data record: the same bytes, server application record 1 (its
	// NewSessionTicket was record 0).
	rfc8448ServerAppRecord = `17 03 03 00 43 2e 93 7e 11 ef 4a c7 40 e5 38 ad 36 00 5f c4 a4 69 32 fc 32 25 d0 5f 82
		aa 1b 36 e3 0e fa f9 7d 90 e6 df fc 60 2d cb 50 1a 59 a8 fc c4 9c 4b f2 e5 f0 a2 1c 00 47 c2 ab f3 32 54
		0d d0 32 e1 67 c2 95 5d`
	// {client} send alert record (close_notify), client application record 1.
	rfc8448ClientAlertRecord = `17 03 03 00 13 c9 87 27 60 65 56 66 b7 4d 7f f1 15 3e fd 6d b6 d0 b0 e3`
	// {server} send alert record (close_notify), server application record 2.
	rfc8448ServerAlertRecord = `17 03 03 00 13 b5 8f d6 71 66 eb f5 99 d2 47 20 cf be 7e fa 7a 88 64 a9`
)

func TestOpenRFC8448Records(t *testing.T) {
	s := suites[0x1301]
	payload := make([]byte, 50)
	for i := range payload {
		payload[i] = byte(i)
	}
	for _, tc := range []struct {
		name, secret, record string
		seq                  uint64
		typ                  byte
		want                 []byte
	}{
		{"client Finished", rfc8448ClientHS, rfc8448ClientFinishedRecord, 0, TypeHandshake, nil},
		{"client data", rfc8448ClientApp, rfc8448ClientAppRecord, 0, TypeApplicationData, payload},
		{"server data", rfc8448ServerApp, rfc8448ServerAppRecord, 1, TypeApplicationData, payload},
		{"client close_notify", rfc8448ClientApp, rfc8448ClientAlertRecord, 1, TypeAlert, []byte{1, 0}},
		{"server close_notify", rfc8448ServerApp, rfc8448ServerAlertRecord, 2, TypeAlert, []byte{1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := keys13(s, unhex(t, tc.secret))
			if err != nil {
				t.Fatal(err)
			}
			p.seq = tc.seq
			r, n, err := ParseRecord(unhex(t, tc.record))
			if err != nil || n == 0 {
				t.Fatalf("ParseRecord: %d, %v", n, err)
			}
			typ, plain, err := p.open(r.Header, r.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if typ != tc.typ {
				t.Errorf("content type %d, want %d", typ, tc.typ)
			}
			if tc.want != nil && !bytes.Equal(plain, tc.want) {
				t.Errorf("plaintext % x", plain)
			}
			if tc.typ == TypeHandshake && (len(plain) != 36 || plain[0] != hsFinished) {
				t.Errorf("Finished: % x", plain)
			}
			if p.seq != tc.seq+1 {
				t.Errorf("sequence number %d after the record", p.seq)
			}
			// The same record again has the next sequence number: it must not authenticate.
			if _, _, err := p.open(r.Header, r.Payload); err != errAuth {
				t.Errorf("replayed record: %v, want an authentication failure", err)
			}
		})
	}
}

// sealRecord protects a record as RFC 5288 (TLS 1.2 AES-GCM), RFC 7905 (TLS 1.2
// ChaCha20-Poly1305) and RFC 8446 section 5.2 (TLS 1.3) say, written here independently of
// protector.open.
func sealRecord(t *testing.T, s suite, key, iv []byte, seq uint64, typ byte, content []byte, pad int) []byte {
	t.Helper()
	var a cipher.AEAD
	var err error
	if s.aead == aesGCM {
		b, _ := aes.NewCipher(key)
		a, err = cipher.NewGCM(b)
	} else {
		a, err = chacha20poly1305.New(key)
	}
	if err != nil {
		t.Fatal(err)
	}
	var seqBytes [8]byte
	binary.BigEndian.PutUint64(seqBytes[:], seq)
	xored := func() []byte {
		n := bytes.Clone(iv)
		for i := range 8 {
			n[4+i] ^= seqBytes[i]
		}
		return n
	}
	if s.tls13 {
		inner := append(append(bytes.Clone(content), typ), make([]byte, pad)...)
		n := len(inner) + a.Overhead()
		hdr := []byte{TypeApplicationData, 3, 3, byte(n >> 8), byte(n)}
		return a.Seal(hdr, xored(), inner, hdr)
	}
	n := len(content)
	aad := append(seqBytes[:], typ, 3, 3, byte(n>>8), byte(n))
	var nonce, explicit []byte
	if s.aead == aesGCM {
		explicit = []byte{0xde, 0xad, 0xbe, 0xef, 0, 0, 0, byte(seq)} // any value the sender likes
		nonce = append(bytes.Clone(iv), explicit...)
	} else {
		nonce = xored()
	}
	body := a.Seal(explicit, nonce, content, aad)
	return append([]byte{typ, 3, 3, byte(len(body) >> 8), byte(len(body))}, body...)
}

// Each AEAD, each version: records sealed by sealRecord open to their content, in sequence.
func TestOpenEachAEAD(t *testing.T) {
	for _, id := range []uint16{0xc02b, 0xc02c, 0xcca9, 0x1301, 0x1302, 0x1303} {
		s := suites[id]
		t.Run(SuiteName(id), func(t *testing.T) {
			key := bytes.Repeat([]byte{0x42}, s.keyLen)
			iv := bytes.Repeat([]byte{0x17}, s.ivLen())
			p, err := newProtector(s, key, iv)
			if err != nil {
				t.Fatal(err)
			}
			for seq, content := range [][]byte{[]byte("first"), {}, bytes.Repeat([]byte("kafka"), 3000)} {
				rec := sealRecord(t, s, key, iv, uint64(seq), TypeApplicationData, content, seq*7)
				r, _, err := ParseRecord(rec)
				if err != nil {
					t.Fatal(err)
				}
				typ, plain, err := p.open(r.Header, r.Payload)
				if err != nil {
					t.Fatalf("record %d: %v", seq, err)
				}
				if typ != TypeApplicationData || !bytes.Equal(plain, content) {
					t.Fatalf("record %d: type %d, %d bytes", seq, typ, len(plain))
				}
			}
			// A flipped bit anywhere fails authentication.
			rec := sealRecord(t, s, key, iv, 3, TypeApplicationData, []byte("tampered"), 0)
			rec[len(rec)-3] ^= 1
			r, _, _ := ParseRecord(rec)
			if _, _, err := p.open(r.Header, r.Payload); err != errAuth {
				t.Errorf("tampered record: %v", err)
			}
		})
	}
}

// The TLS 1.2 key block is cut into client key, server key, client IV, server IV
// (RFC 5246 section 6.3).
func TestKeys12(t *testing.T) {
	s := suites[0xc02b]
	master := bytes.Repeat([]byte{1}, 48)
	cr, sr := bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 32)
	kb := prf12(sha256.New, master, "key expansion", append(bytes.Clone(sr), cr...), 40)
	client, server, err := keys12(s, master, cr, sr)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p       *protector
		key, iv []byte
		name    string
	}{{client, kb[0:16], kb[32:36], "client"}, {server, kb[16:32], kb[36:40], "server"}} {
		rec := sealRecord(t, s, tc.key, tc.iv, 0, TypeApplicationData, []byte("hello"), 0)
		r, _, _ := ParseRecord(rec)
		if _, plain, err := tc.p.open(r.Header, r.Payload); err != nil || string(plain) != "hello" {
			t.Errorf("%s keys: %q, %v", tc.name, plain, err)
		}
	}
}
