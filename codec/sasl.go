package codec

import (
	"bytes"
	"strings"

	"github.com/kdissect/kdissect/codec/wire"
)

// Redacted replaces secrets in field values unless the codec was asked to show them.
const Redacted = "<redacted>"

// secretFields are bytes fields whose values are credentials: delegation-token HMACs and
// SCRAM salted passwords.
var secretFields = map[string]bool{"Hmac": true, "SaltedPassword": true}

// redact hides a secret node's value and marks it, so that hex dumps can mask its bytes too.
func redact(n *Node) {
	n.Value, n.Secret = Redacted, true
	n.Children = nil
}

// SASL mechanisms, as kdissect recognises them from a token's content.
const (
	mechPlain       = "PLAIN"
	mechScram       = "SCRAM"
	mechOAuthBearer = "OAUTHBEARER"
	mechOpaque      = "GSSAPI or other (opaque)"
)

// saslMechanism guesses a token's mechanism from its bytes: SASL tokens do not say which
// mechanism they belong to, but each mechanism's messages have a recognisable shape.
func saslMechanism(data []byte) string {
	switch {
	case bytes.Contains(data, []byte("\x01auth=")):
		return mechOAuthBearer
	case bytes.Count(data, []byte{0}) == 2 && plainNames(data):
		return mechPlain
	case Printable(data) && len(data) > 2 && (bytes.HasPrefix(data, []byte("n,")) || bytes.HasPrefix(data, []byte("y,")) ||
		bytes.HasPrefix(data, []byte("p=")) || bytes.HasPrefix(data, []byte("r=")) || bytes.HasPrefix(data, []byte("c=")) ||
		bytes.HasPrefix(data, []byte("v=")) || bytes.HasPrefix(data, []byte("e="))):
		return mechScram
	}
	return mechOpaque
}

// plainNames reports whether a token with two NULs starts like PLAIN's "authzid NUL authcid NUL":
// printable names and a user name. The password after them may be any bytes (a Latin-1 password
// is not UTF-8), and must be recognised all the same, or it would be shown as an opaque token.
func plainNames(data []byte) bool {
	a := bytes.IndexByte(data, 0)
	b := a + 1 + bytes.IndexByte(data[a+1:], 0)
	return b > a+1 && Printable(data[:a]) && Printable(data[a+1:b])
}

// saslToken decodes one SASL token (data at frame offset base) into nodes that tile it, and
// names the mechanism. Secrets (PLAIN passwords, SCRAM proofs and server signatures, OAuth
// bearer tokens) are redacted unless show is set.
func saslToken(data []byte, base int, show bool) ([]*Node, string) {
	mech := saslMechanism(data)
	var parts []*Node
	// piece covers data[from:to] with a node; hidden pieces are redacted.
	piece := func(name string, from, to int, secret bool) {
		n := &Node{Name: name, Type: wire.SASL, Offset: base + from, Size: to - from, Value: string(data[from:to])}
		if !Printable(data[from:to]) {
			n.Value = data[from:to] // shown in hex
		}
		if secret && !show {
			redact(n)
		}
		parts = append(parts, n)
	}
	switch mech {
	case mechPlain:
		// authzid NUL authcid NUL passwd
		a := bytes.IndexByte(data, 0)
		b := a + 1 + bytes.IndexByte(data[a+1:], 0)
		piece("authzid", 0, a+1, false)
		parts[0].Value = string(data[:a])
		piece("user", a+1, b+1, false)
		parts[1].Value = string(data[a+1 : b])
		piece("password", b+1, len(data), true)
	case mechScram, mechOAuthBearer:
		sep := byte(',')
		if mech == mechOAuthBearer {
			sep = 1
		}
		from := 0
		// The GS2 header ("n,," or "y,," or "p=cb,,", with an optional authzid between the
		// commas) opens client-first messages of both mechanisms.
		if g := gs2Header(data); g > 0 {
			piece("gs2 header", 0, g, false)
			from = g
		}
		for from < len(data) {
			to := bytes.IndexByte(data[from:], sep)
			end := len(data)
			if to >= 0 {
				end = from + to + 1
			}
			attr := strings.TrimRight(string(data[from:end]), "\x01,")
			key, val, hasVal := strings.Cut(attr, "=")
			name := scramNames[key]
			if mech == mechOAuthBearer {
				name = key
			}
			if name == "" || !hasVal {
				name, val = "attribute", attr
			}
			secret := (mech == mechScram && (key == "p" || key == "v")) || (mech == mechOAuthBearer && key == "auth")
			piece(name, from, end, secret)
			if n := parts[len(parts)-1]; !n.Secret {
				n.Value = val
			}
			from = end
		}
	default:
		parts = append(parts, &Node{Name: "opaque token", Type: wire.Bytes, Offset: base, Size: len(data), Value: data})
	}
	return parts, mech
}

// gs2Header returns the length of a GS2 header at the start of data, or 0.
func gs2Header(data []byte) int {
	if len(data) < 3 || !(data[0] == 'n' || data[0] == 'y' || data[0] == 'p') {
		return 0
	}
	first := bytes.IndexByte(data, ',')
	if first < 0 {
		return 0
	}
	second := bytes.IndexByte(data[first+1:], ',')
	if second < 0 {
		return 0
	}
	return first + 1 + second + 1
}

// decodeSASL gives a bytes node holding a SASL token (SaslAuthenticate's AuthBytes) children
// that decode the token, and hides its raw value: the raw bytes may hold a password.
func decodeSASL(n *Node, show bool) {
	data, ok := n.Value.([]byte)
	if !ok || len(data) == 0 {
		return
	}
	head := n.Size - len(data)
	parts, mech := saslToken(data, n.Offset+head, show)
	n.Children, n.Value = parts, mech+" token"
}

// scramNames names SCRAM's attributes (RFC 5802).
var scramNames = map[string]string{
	"n": "user", "a": "authzid", "r": "nonce", "s": "salt", "i": "iterations",
	"c": "channel binding", "p": "proof", "v": "server signature", "e": "error", "m": "extension",
}
