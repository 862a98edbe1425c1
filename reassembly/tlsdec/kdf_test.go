package tlsdec

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"strings"
	"testing"
)

// unhex reads hex with any spacing, as RFCs print it.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex in test: %v", err)
	}
	return b
}

// The TLS 1.2 PRF test vectors posted to the IETF TLS working group list
// (https://www.ietf.org/mail-archive/web/tls/current/msg03416.html), P_SHA256 and P_SHA384.
func TestPRF12Vectors(t *testing.T) {
	for _, tc := range []struct {
		name                string
		sha384              bool
		secret, seed, label string
		out                 string
	}{
		{
			name: "P_SHA256", secret: "9b be 43 6b a9 40 f0 17 b1 76 52 84 9a 71 db 35",
			seed: "a0 ba 9f 93 6c da 31 18 27 a6 f7 96 ff d5 19 8c", label: "test label",
			out: `e3 f2 29 ba 72 7b e1 7b 8d 12 26 20 55 7c d4 53 c2 aa b2 1d 07 c3 d4 95 32 9b 52 d4 e6 1e db 5a
			      6b 30 17 91 e9 0d 35 c9 c9 a4 6b 4e 14 ba f9 af 0f a0 22 f7 07 7d ef 17 ab fd 37 97 c0 56 4b ab
			      4f bc 91 66 6e 9d ef 9b 97 fc e3 4f 79 67 89 ba a4 80 82 d1 22 ee 42 c5 a7 2e 5a 51 10 ff f7 01
			      87 34 7b 66`,
		},
		{
			name: "P_SHA384", sha384: true, secret: "b8 0b 73 3d 6c ee fc dc 71 56 6e a4 8e 55 67 df",
			seed: "cd 66 5c f6 a8 44 7d d6 ff 8b 27 55 5e db 74 65", label: "test label",
			out: `7b 0c 18 e9 ce d4 10 ed 18 04 f2 cf a3 4a 33 6a 1c 14 df fb 49 00 bb 5f d7 94 21 07 e8 1c 83 cd
			      e9 ca 0f aa 60 be 9f e3 4f 82 b1 23 3c 91 46 a0 e5 34 cb 40 0f ed 27 00 88 4f 9d c2 36 f8 0e dd
			      8b fa 96 11 44 c9 e8 d7 92 ec a7 22 a7 b3 2f c3 d4 16 d4 73 eb c2 c5 fd 4a bf da d0 5d 91 84 25
			      9b 5b f8 cd 4d 90 fa 0d 31 e2 de c4 79 e4 f1 a2 60 66 f2 ee a9 a6 92 36 a3 e5 26 55 c9 e9 ae e6
			      91 c8 f3 a2 68 54 30 8d 5e aa 3b e8 5e 09 90 70 3d 73 e5 6f`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.out)
			h := sha256.New
			if tc.sha384 {
				h = sha512.New384
			}
			got := prf12(h, unhex(t, tc.secret), tc.label, unhex(t, tc.seed), len(want))
			if !bytes.Equal(got, want) {
				t.Errorf("PRF:\n got %x\nwant %x", got, want)
			}
		})
	}
}

// RFC 8448 section 3 (simple 1-RTT handshake, TLS_AES_128_GCM_SHA256): the traffic secrets
// derived from the handshake and master secrets, and the keys and IVs derived from them.
const (
	rfc8448HandshakeSecret = "1d c8 26 e9 36 06 aa 6f dc 0a ad c1 2f 74 1b 01 04 6a a6 b9 9f 69 1e d2 21 a9 f0 ca 04 3f be ac"
	rfc8448HelloHash       = "86 0c 06 ed c0 78 58 ee 8e 78 f0 e7 42 8c 58 ed d6 b4 3f 2c a3 e6 e9 5f 02 ed 06 3c f0 e1 ca d8"
	rfc8448ClientHS        = "b3 ed db 12 6e 06 7f 35 a7 80 b3 ab f4 5e 2d 8f 3b 1a 95 07 38 f5 2e 96 00 74 6a 0e 27 a5 5a 21"
	rfc8448ServerHS        = "b6 7b 7d 69 0c c1 6c 4e 75 e5 42 13 cb 2d 37 b4 e9 c9 12 bc de d9 10 5d 42 be fd 59 d3 91 ad 38"
	rfc8448ClientApp       = "9e 40 64 6c e7 9a 7f 9d c0 5a f8 88 9b ce 65 52 87 5a fa 0b 06 df 00 87 f7 92 eb b7 c1 75 04 a5"
	rfc8448ServerApp       = "a1 1a f9 f0 55 31 f8 56 ad 47 11 6b 45 a9 50 32 82 04 b4 f4 4b fb 6b 3a 4b 4f 1f 3f cb 63 16 43"
)

func TestExpandLabelRFC8448(t *testing.T) {
	hs := unhex(t, rfc8448HandshakeSecret)
	hash := unhex(t, rfc8448HelloHash)
	// Derive-Secret(handshake secret, "c hs traffic", ClientHello...ServerHello): a context.
	if got := expandLabel(sha256.New, hs, "c hs traffic", hash, 32); !bytes.Equal(got, unhex(t, rfc8448ClientHS)) {
		t.Errorf("client handshake traffic secret %x", got)
	}
	if got := expandLabel(sha256.New, hs, "s hs traffic", hash, 32); !bytes.Equal(got, unhex(t, rfc8448ServerHS)) {
		t.Errorf("server handshake traffic secret %x", got)
	}
	for _, tc := range []struct{ name, secret, key, iv string }{
		{"server handshake", rfc8448ServerHS, "3f ce 51 60 09 c2 17 27 d0 f2 e4 e8 6e e4 03 bc", "5d 31 3e b2 67 12 76 ee 13 00 0b 30"},
		{"client handshake", rfc8448ClientHS, "db fa a6 93 d1 76 2c 5b 66 6a f5 d9 50 25 8d 01", "5b d3 c7 1b 83 6e 0b 76 bb 73 26 5f"},
		{"server application", rfc8448ServerApp, "9f 02 28 3b 6c 9c 07 ef c2 6b b9 f2 ac 92 e3 56", "cf 78 2b 88 dd 83 54 9a ad f1 e9 84"},
		{"client application", rfc8448ClientApp, "17 42 2d da 59 6e d5 d9 ac d8 90 e3 c6 3f 50 51", "5b 78 92 3d ee 08 57 90 33 e5 23 d9"},
	} {
		sec := unhex(t, tc.secret)
		if got := expandLabel(sha256.New, sec, "key", nil, 16); !bytes.Equal(got, unhex(t, tc.key)) {
			t.Errorf("%s key %x", tc.name, got)
		}
		if got := expandLabel(sha256.New, sec, "iv", nil, 12); !bytes.Equal(got, unhex(t, tc.iv)) {
			t.Errorf("%s iv %x", tc.name, got)
		}
	}
}

// The KeyUpdate secret is HKDF-Expand(secret, HkdfLabel, Hash.length) with the label written
// out here byte by byte (RFC 8446 sections 7.1 and 7.2), computed with the standard library's
// HKDF rather than through expandLabel.
func TestNextSecret(t *testing.T) {
	for _, tc := range []struct {
		id     uint16
		secret string
	}{{0x1301, rfc8448ClientApp}, {0x1302, rfc8448ClientApp + rfc8448ServerApp[:47]}} {
		s := suites[tc.id]
		sec := unhex(t, tc.secret)
		n := s.hash().Size()
		info := []byte{0, byte(n), 17}
		info = append(info, "tls13 traffic upd"...)
		info = append(info, 0)
		want := stdExpand(t, s, sec, info, n)
		if got := nextSecret(s, sec); !bytes.Equal(got, want) {
			t.Errorf("suite %04x: next secret %x, want %x", tc.id, got, want)
		}
	}
}
