package tlsdec

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/crypto/cryptobyte"
)

func TestParseRecord(t *testing.T) {
	full := append([]byte{22, 3, 1, 0, 4}, 1, 2, 3, 4)
	for _, tc := range []struct {
		name string
		in   []byte
		n    int
		err  string
	}{
		{"empty", nil, 0, ""},
		{"one byte", full[:1], 0, ""},
		{"header cut", full[:4], 0, ""},
		{"body cut", full[:8], 0, ""},
		{"whole", full, 9, ""},
		{"and more", append(bytes.Clone(full), 23, 3), 9, ""},
		{"empty record", []byte{21, 3, 3, 0, 0}, 5, ""},
		{"type 19", []byte{19, 3, 3, 0, 1, 0}, 0, "content type 19"},
		{"type 25", []byte{25}, 0, "content type 25"},
		{"version 2", []byte{22, 2}, 0, "version 2.x"},
		{"HTTP", []byte("GET / HTTP/1.1\r\n"), 0, "content type 71"},
		{"too long", []byte{23, 3, 3, 0x48, 0x01}, 0, "length 18433"},
		{"longest", append([]byte{23, 3, 3, 0x48, 0x00}, make([]byte, MaxRecordLen)...), 5 + MaxRecordLen, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, n, err := ParseRecord(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || n != tc.n {
				t.Fatalf("n %d err %v, want %d", n, err, tc.n)
			}
			if n > 0 && (len(r.Header) != 5 || len(r.Payload) != n-5 || r.Type != tc.in[0] || r.Version>>8 != 3) {
				t.Errorf("record %+v", r)
			}
		})
	}
}

func hsMsg(typ byte, body []byte) []byte {
	return append([]byte{typ, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
}

// Handshake messages are found whatever the record boundaries: split inside the header,
// inside the body, several in one piece.
func TestHandshakeReader(t *testing.T) {
	stream := hsMsg(hsClientHello, bytes.Repeat([]byte{7}, 300))
	stream = append(stream, hsMsg(11, bytes.Repeat([]byte{8}, 5000))...) // Certificate: skipped
	stream = append(stream, hsMsg(hsFinished, nil)...)
	stream = append(stream, hsMsg(hsKeyUpdate, []byte{1})...)
	for _, size := range []int{1, 2, 3, 5, 7, 300, 4096, len(stream)} {
		var h hsReader
		var types []byte
		var bodies [][]byte
		for off := 0; off < len(stream); off += size {
			err := h.feed(stream[off:min(off+size, len(stream))], func(typ byte, body []byte) error {
				types, bodies = append(types, typ), append(bodies, body)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(types, []byte{hsClientHello, 11, hsFinished, hsKeyUpdate}) {
			t.Fatalf("pieces of %d: types %v", size, types)
		}
		if len(bodies[0]) != 300 || bodies[1] != nil || len(bodies[2]) != 0 || !bytes.Equal(bodies[3], []byte{1}) {
			t.Fatalf("pieces of %d: bodies %d %v %v %v", size, len(bodies[0]), bodies[1] != nil, bodies[2], bodies[3])
		}
	}
	var h hsReader
	if err := h.feed(hsMsg(hsClientHello, nil)[:1], nil); err != nil {
		t.Fatal(err)
	}
	if err := h.feed([]byte{0x10, 0, 0}, nil); err == nil {
		t.Error("a 1 MiB ClientHello is believed")
	}
}

// buildClientHello writes a ClientHello body with the given extensions.
func buildClientHello(random []byte, exts func(b *cryptobyte.Builder)) []byte {
	var b cryptobyte.Builder
	b.AddUint16(0x0303)
	b.AddBytes(random)
	b.AddUint8LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes(make([]byte, 32)) })
	b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddUint16(0x1301); b.AddUint16(0xc02b) })
	b.AddUint8LengthPrefixed(func(b *cryptobyte.Builder) { b.AddUint8(0) })
	if exts != nil {
		b.AddUint16LengthPrefixed(exts)
	}
	return b.BytesOrPanic()
}

func sniExt(name string) func(b *cryptobyte.Builder) {
	return func(b *cryptobyte.Builder) {
		b.AddUint16(10) // supported_groups, to be skipped
		b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) {
			b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddUint16(29) })
		})
		b.AddUint16(0)
		b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) {
			b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) {
				b.AddUint8(0)
				b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes([]byte(name)) })
			})
		})
	}
}

func buildServerHello(random []byte, suite uint16, version uint16) []byte {
	var b cryptobyte.Builder
	b.AddUint16(0x0303)
	b.AddBytes(random)
	b.AddUint8LengthPrefixed(func(b *cryptobyte.Builder) {})
	b.AddUint16(suite)
	b.AddUint8(0)
	if version != 0 {
		b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) {
			b.AddUint16(43)
			b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddUint16(version) })
		})
	}
	return b.BytesOrPanic()
}

func TestHellos(t *testing.T) {
	random := bytes.Repeat([]byte{0xab}, 32)
	ch, err := parseClientHello(buildClientHello(random, sniExt("broker.example")))
	if err != nil || !bytes.Equal(ch.random, random) || ch.sni != "broker.example" {
		t.Fatalf("ClientHello: %+v, %v", ch, err)
	}
	ch, err = parseClientHello(buildClientHello(random, nil))
	if err != nil || ch.sni != "" {
		t.Fatalf("ClientHello without extensions: %+v, %v", ch, err)
	}
	if _, err := parseClientHello(buildClientHello(random, sniExt("x"))[:60]); err == nil {
		t.Error("a cut ClientHello is read")
	}
	ch, _ = parseClientHello(buildClientHello(random, sniExt("bad\x00name\n")))
	if ch.sni != "bad?name?" {
		t.Errorf("SNI %q", ch.sni)
	}

	sh, err := parseServerHello(buildServerHello(random, 0x1301, 0x0304))
	if err != nil || sh.version != 0x0304 || sh.suite != 0x1301 || sh.retry {
		t.Fatalf("TLS 1.3 ServerHello: %+v, %v", sh, err)
	}
	sh, err = parseServerHello(buildServerHello(random, 0xc02b, 0))
	if err != nil || sh.version != 0x0303 || sh.suite != 0xc02b {
		t.Fatalf("TLS 1.2 ServerHello: %+v, %v", sh, err)
	}
	sh, err = parseServerHello(buildServerHello(helloRetryRandom[:], 0x1301, 0x0304))
	if err != nil || !sh.retry {
		t.Fatalf("HelloRetryRequest: %+v, %v", sh, err)
	}
}
