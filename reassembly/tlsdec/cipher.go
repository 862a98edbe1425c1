package tlsdec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"

	"golang.org/x/crypto/chacha20poly1305"
)

type aeadKind uint8

const (
	aesGCM aeadKind = iota + 1
	chacha
)

// suite is a cipher suite kdissect can decrypt.
type suite struct {
	tls13  bool
	hash   func() hash.Hash
	aead   aeadKind
	keyLen int
}

// suites are the AEAD cipher suites of TLS 1.2 (RFC 5288, RFC 5289, RFC 7905) and TLS 1.3
// whose records kdissect decrypts. The key exchange does not matter: the key log gives the
// master or traffic secrets.
var suites = map[uint16]suite{
	// TLS 1.2, AES-128-GCM with SHA-256
	0x009c: {false, sha256.New, aesGCM, 16}, // TLS_RSA_WITH_AES_128_GCM_SHA256
	0x009e: {false, sha256.New, aesGCM, 16}, // TLS_DHE_RSA_WITH_AES_128_GCM_SHA256
	0xc02b: {false, sha256.New, aesGCM, 16}, // TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
	0xc02f: {false, sha256.New, aesGCM, 16}, // TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
	// TLS 1.2, AES-256-GCM with SHA-384
	0x009d: {false, sha512.New384, aesGCM, 32}, // TLS_RSA_WITH_AES_256_GCM_SHA384
	0x009f: {false, sha512.New384, aesGCM, 32}, // TLS_DHE_RSA_WITH_AES_256_GCM_SHA384
	0xc02c: {false, sha512.New384, aesGCM, 32}, // TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
	0xc030: {false, sha512.New384, aesGCM, 32}, // TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
	// TLS 1.2, ChaCha20-Poly1305 with SHA-256
	0xcca8: {false, sha256.New, chacha, 32}, // TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
	0xcca9: {false, sha256.New, chacha, 32}, // TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
	0xccaa: {false, sha256.New, chacha, 32}, // TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256
	// TLS 1.3
	0x1301: {true, sha256.New, aesGCM, 16},    // TLS_AES_128_GCM_SHA256
	0x1302: {true, sha512.New384, aesGCM, 32}, // TLS_AES_256_GCM_SHA384
	0x1303: {true, sha256.New, chacha, 32},    // TLS_CHACHA20_POLY1305_SHA256
}

// SuiteName is the IANA name of a cipher suite, or its number in hex.
func SuiteName(id uint16) string { return tls.CipherSuiteName(id) }

// VersionName is "TLS 1.2" for 0x0303 and so on.
func VersionName(v uint16) string {
	switch v {
	case 0x0300:
		return "SSL 3.0"
	case 0x0301, 0x0302, 0x0303, 0x0304:
		return fmt.Sprintf("TLS 1.%d", v-0x0301)
	}
	return fmt.Sprintf("TLS version 0x%04x", v)
}

// errAuth is returned when a record does not authenticate.
var errAuth = errors.New("message authentication failed")

// protector removes the protection of one direction's records.
type protector struct {
	aead cipher.AEAD
	// iv is the 4-byte salt of TLS 1.2 AES-GCM (the rest of the nonce is in each record) or
	// the 12-byte IV that the sequence number is XORed into.
	iv    []byte
	seq   uint64
	tls13 bool
}

func newProtector(s suite, key, iv []byte) (*protector, error) {
	var a cipher.AEAD
	var err error
	switch s.aead {
	case aesGCM:
		var b cipher.Block
		if b, err = aes.NewCipher(key); err == nil {
			a, err = cipher.NewGCM(b)
		}
	case chacha:
		a, err = chacha20poly1305.New(key)
	default:
		err = errors.New("unknown AEAD")
	}
	if err != nil {
		return nil, err
	}
	return &protector{aead: a, iv: iv, tls13: s.tls13}, nil
}

// ivLen is the length of the write IV of a suite: 4 bytes of salt for TLS 1.2 AES-GCM
// (RFC 5288), 12 bytes otherwise.
func (s suite) ivLen() int {
	if !s.tls13 && s.aead == aesGCM {
		return 4
	}
	return 12
}

// explicitNonce is the length of the per-record nonce that TLS 1.2 AES-GCM records start with.
const explicitNonce = 8

// open decrypts one record (hdr is its 5-byte header) and advances the sequence number. In
// TLS 1.3 it returns the inner content type and the content without padding.
func (p *protector) open(hdr []byte, payload []byte) (byte, []byte, error) {
	var nonce [12]byte
	typ := hdr[0]
	var aad []byte
	switch {
	case p.tls13:
		// RFC 8446 section 5.3: the IV XOR the sequence number; the record header as data.
		copy(nonce[:], p.iv)
		xorSeq(&nonce, p.seq)
		aad = hdr[:5]
	default:
		if len(p.iv) == 4 {
			// RFC 5288 section 3: salt || explicit nonce carried by the record.
			if len(payload) < explicitNonce {
				return 0, nil, errors.New("record too short for its explicit nonce")
			}
			copy(nonce[:4], p.iv)
			copy(nonce[4:], payload[:explicitNonce])
			payload = payload[explicitNonce:]
		} else {
			// RFC 7905 section 2: the IV XOR the sequence number.
			copy(nonce[:], p.iv)
			xorSeq(&nonce, p.seq)
		}
		n := len(payload) - p.aead.Overhead()
		if n < 0 {
			return 0, nil, errors.New("record too short for its authentication tag")
		}
		// RFC 5246 section 6.2.3.3: seq_num + type + version + length of the plaintext.
		aad = binary.BigEndian.AppendUint64(make([]byte, 0, 13), p.seq)
		aad = append(aad, hdr[0], hdr[1], hdr[2], byte(n>>8), byte(n))
	}
	if len(payload) < p.aead.Overhead() {
		return 0, nil, errors.New("record too short for its authentication tag")
	}
	plain, err := p.aead.Open(nil, nonce[:], payload, aad)
	if err != nil {
		return 0, nil, errAuth
	}
	p.seq++
	if p.tls13 {
		// RFC 8446 section 5.2: content, content type, zero padding.
		i := len(plain) - 1
		for i >= 0 && plain[i] == 0 {
			i--
		}
		if i < 0 {
			return 0, nil, errors.New("decrypted record has no content type")
		}
		return plain[i], plain[:i], nil
	}
	return typ, plain, nil
}

func xorSeq(nonce *[12]byte, seq uint64) {
	for i := 0; i < 8; i++ {
		nonce[4+i] ^= byte(seq >> (56 - 8*i))
	}
}

// keys12 derives the TLS 1.2 write keys and IVs of both sides from the master secret
// (RFC 5246 section 6.3; AEAD suites have no MAC keys).
func keys12(s suite, master, clientRandom, serverRandom []byte) (client, server *protector, err error) {
	ivLen := s.ivLen()
	seed := append(append([]byte{}, serverRandom...), clientRandom...)
	kb := prf12(s.hash, master, "key expansion", seed, 2*s.keyLen+2*ivLen)
	ck, sk := kb[:s.keyLen], kb[s.keyLen:2*s.keyLen]
	civ, siv := kb[2*s.keyLen:2*s.keyLen+ivLen], kb[2*s.keyLen+ivLen:]
	if client, err = newProtector(s, ck, civ); err != nil {
		return nil, nil, err
	}
	server, err = newProtector(s, sk, siv)
	return client, server, err
}

// keys13 derives a TLS 1.3 record protector from a traffic secret (RFC 8446 section 7.3).
func keys13(s suite, secret []byte) (*protector, error) {
	key := expandLabel(s.hash, secret, "key", nil, s.keyLen)
	iv := expandLabel(s.hash, secret, "iv", nil, 12)
	return newProtector(s, key, iv)
}

// nextSecret is the traffic secret after a KeyUpdate (RFC 8446 section 7.2).
func nextSecret(s suite, secret []byte) []byte {
	return expandLabel(s.hash, secret, "traffic upd", nil, s.hash().Size())
}
