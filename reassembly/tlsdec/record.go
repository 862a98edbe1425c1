package tlsdec

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"golang.org/x/crypto/cryptobyte"

	"github.com/kdissect/kdissect/internal/plural"
)

// Record content types (RFC 8446 section 5.1).
const (
	TypeChangeCipherSpec = 20
	TypeAlert            = 21
	TypeHandshake        = 22
	TypeApplicationData  = 23
	TypeHeartbeat        = 24
)

// RecordHeaderLen is the length of a record header: type, version, length.
const RecordHeaderLen = 5

// MaxRecordLen is the largest record payload any TLS version allows (TLS 1.2's
// TLSCiphertext, RFC 5246 section 6.2.3).
const MaxRecordLen = 1<<14 + 2048

// Record is one TLS record as it is on the wire.
type Record struct {
	Type    uint8
	Version uint16
	// Header is the 5-byte header and Payload what follows it; both point into the input.
	Header, Payload []byte
}

// ParseRecord reads the record at the start of b. It returns the record and its length on the
// wire, or n == 0 and no error when b holds only part of a record. An error means that b does
// not start with a TLS record.
func ParseRecord(b []byte) (r Record, n int, err error) {
	if len(b) == 0 {
		return r, 0, nil
	}
	if b[0] < TypeChangeCipherSpec || b[0] > TypeHeartbeat {
		return r, 0, fmt.Errorf("not a TLS record: content type %d", b[0])
	}
	if len(b) >= 2 && b[1] != 3 {
		return r, 0, fmt.Errorf("not a TLS record: version %d.x", b[1])
	}
	if len(b) < RecordHeaderLen {
		return r, 0, nil
	}
	size := int(b[3])<<8 | int(b[4])
	if size > MaxRecordLen {
		return r, 0, fmt.Errorf("not a TLS record: length %d exceeds %d", size, MaxRecordLen)
	}
	if len(b) < RecordHeaderLen+size {
		return r, 0, nil
	}
	return Record{Type: b[0], Version: uint16(b[1])<<8 | uint16(b[2]), Header: b[:RecordHeaderLen],
		Payload: b[RecordHeaderLen : RecordHeaderLen+size]}, RecordHeaderLen + size, nil
}

// Handshake message types (RFC 8446 section 4).
const (
	hsClientHello = 1
	hsServerHello = 2
	hsFinished    = 20
	hsKeyUpdate   = 24
)

// maxKeptMessage bounds the handshake messages whose bodies are kept (hellos, KeyUpdate).
const maxKeptMessage = 1 << 18

// hsReader cuts a direction's handshake bytes, which may be split across records, into
// handshake messages. It keeps the bodies of the messages it needs and skips the others.
type hsReader struct {
	hdr  [4]byte
	nhdr int
	left int // body bytes of the current message still to come
	keep bool
	body []byte
}

// feed takes handshake bytes and calls fn for each message completed; body is nil for the
// messages not kept.
func (h *hsReader) feed(data []byte, fn func(typ byte, body []byte) error) error {
	for len(data) > 0 {
		if h.nhdr < 4 {
			n := copy(h.hdr[h.nhdr:], data)
			h.nhdr += n
			data = data[n:]
			if h.nhdr < 4 {
				return nil
			}
			h.left = int(h.hdr[1])<<16 | int(h.hdr[2])<<8 | int(h.hdr[3])
			switch h.hdr[0] {
			case hsClientHello, hsServerHello, hsKeyUpdate:
				if h.left > maxKeptMessage {
					return fmt.Errorf("handshake message of type %d claims %s", h.hdr[0], plural.Count(h.left, "byte"))
				}
				h.keep, h.body = true, make([]byte, 0, h.left)
			default:
				h.keep, h.body = false, nil
			}
		}
		n := min(h.left, len(data))
		if h.keep {
			h.body = append(h.body, data[:n]...)
		}
		h.left -= n
		data = data[n:]
		if h.left == 0 {
			typ, body := h.hdr[0], h.body
			h.nhdr, h.body = 0, nil
			if err := fn(typ, body); err != nil {
				return err
			}
		}
	}
	return nil
}

// clientHello is what kdissect takes from a ClientHello.
type clientHello struct {
	random []byte
	sni    string
	// earlyData: the client offers 0-RTT data.
	earlyData bool
}

// serverHello is what kdissect takes from a ServerHello.
type serverHello struct {
	version uint16 // the negotiated version: supported_versions, else legacy_version
	random  []byte
	suite   uint16
	// retry: this is a HelloRetryRequest (RFC 8446 section 4.1.3).
	retry bool
}

// helloRetryRandom is the Random of a HelloRetryRequest: SHA-256("HelloRetryRequest").
var helloRetryRandom = sha256.Sum256([]byte("HelloRetryRequest"))

var errHello = errors.New("malformed hello")

func parseClientHello(b []byte) (*clientHello, error) {
	s := cryptobyte.String(b)
	var version uint16
	var random, sid, suites, comp cryptobyte.String
	if !s.ReadUint16(&version) || !s.ReadBytes((*[]byte)(&random), 32) ||
		!s.ReadUint8LengthPrefixed(&sid) || !s.ReadUint16LengthPrefixed(&suites) ||
		!s.ReadUint8LengthPrefixed(&comp) {
		return nil, fmt.Errorf("ClientHello: %w", errHello)
	}
	ch := &clientHello{random: append([]byte{}, random...)}
	if s.Empty() {
		return ch, nil
	}
	var exts cryptobyte.String
	if !s.ReadUint16LengthPrefixed(&exts) {
		return nil, fmt.Errorf("ClientHello extensions: %w", errHello)
	}
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
			return nil, fmt.Errorf("ClientHello extensions: %w", errHello)
		}
		switch typ {
		case 0: // server_name (RFC 6066 section 3)
			var list cryptobyte.String
			if !data.ReadUint16LengthPrefixed(&list) {
				return nil, fmt.Errorf("ClientHello server_name: %w", errHello)
			}
			for !list.Empty() {
				var nameType uint8
				var name cryptobyte.String
				if !list.ReadUint8(&nameType) || !list.ReadUint16LengthPrefixed(&name) {
					return nil, fmt.Errorf("ClientHello server_name: %w", errHello)
				}
				if nameType == 0 && ch.sni == "" {
					ch.sni = printableName(name)
				}
			}
		case 42: // early_data
			ch.earlyData = true
		}
	}
	return ch, nil
}

// printableName keeps a host name readable whatever bytes it holds.
func printableName(b []byte) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c > 0x20 && c < 0x7f {
			out = append(out, c)
		} else {
			out = append(out, '?')
		}
	}
	return string(out)
}

func parseServerHello(b []byte) (*serverHello, error) {
	s := cryptobyte.String(b)
	sh := &serverHello{}
	var random, sid cryptobyte.String
	var comp uint8
	if !s.ReadUint16(&sh.version) || !s.ReadBytes((*[]byte)(&random), 32) ||
		!s.ReadUint8LengthPrefixed(&sid) || !s.ReadUint16(&sh.suite) || !s.ReadUint8(&comp) {
		return nil, fmt.Errorf("ServerHello: %w", errHello)
	}
	sh.random = append([]byte{}, random...)
	sh.retry = [32]byte(sh.random) == helloRetryRandom
	if s.Empty() {
		return sh, nil
	}
	var exts cryptobyte.String
	if !s.ReadUint16LengthPrefixed(&exts) {
		return nil, fmt.Errorf("ServerHello extensions: %w", errHello)
	}
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
			return nil, fmt.Errorf("ServerHello extensions: %w", errHello)
		}
		if typ == 43 { // supported_versions: the selected version
			if !data.ReadUint16(&sh.version) {
				return nil, fmt.Errorf("ServerHello supported_versions: %w", errHello)
			}
		}
	}
	return sh, nil
}

// alertText names an alert (RFC 8446 section 6).
func alertText(level, desc byte) string {
	names := map[byte]string{0: "close_notify", 10: "unexpected_message", 20: "bad_record_mac",
		22: "record_overflow", 40: "handshake_failure", 42: "bad_certificate", 43: "unsupported_certificate",
		44: "certificate_revoked", 45: "certificate_expired", 46: "certificate_unknown",
		47: "illegal_parameter", 48: "unknown_ca", 49: "access_denied", 50: "decode_error",
		51: "decrypt_error", 70: "protocol_version", 71: "insufficient_security", 80: "internal_error",
		86: "inappropriate_fallback", 90: "user_canceled", 109: "missing_extension",
		110: "unsupported_extension", 112: "unrecognized_name", 113: "bad_certificate_status_response",
		115: "unknown_psk_identity", 116: "certificate_required", 120: "no_application_protocol"}
	name, ok := names[desc]
	if !ok {
		name = fmt.Sprintf("alert %d", desc)
	}
	if level == 2 {
		return "fatal " + name
	}
	return name
}
