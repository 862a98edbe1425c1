package tlsdec

import (
	"crypto/hmac"
	"encoding/binary"
	"hash"

	"golang.org/x/crypto/hkdf"
)

// prf12 is the TLS 1.2 PRF (RFC 5246 section 5): P_hash(secret, label + seed), cut to n bytes.
func prf12(h func() hash.Hash, secret []byte, label string, seed []byte, n int) []byte {
	ls := append([]byte(label), seed...)
	mac := hmac.New(h, secret)
	mac.Write(ls)
	a := mac.Sum(nil) // A(1)
	out := make([]byte, 0, n+mac.Size())
	for len(out) < n {
		mac.Reset()
		mac.Write(a)
		mac.Write(ls)
		out = mac.Sum(out)
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(a[:0])
	}
	return out[:n]
}

// expandLabel is TLS 1.3's HKDF-Expand-Label (RFC 8446 section 7.1).
func expandLabel(h func() hash.Hash, secret []byte, label string, context []byte, n int) []byte {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full)+len(context))
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(len(full)))
	info = append(info, full...)
	info = append(info, byte(len(context)))
	info = append(info, context...)
	out := make([]byte, n)
	if _, err := hkdf.Expand(h, secret, info).Read(out); err != nil {
		// Only when n exceeds 255 hash lengths, which no caller asks for.
		panic("tlsdec: " + err.Error())
	}
	return out
}
