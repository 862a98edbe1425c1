package render

import (
	"encoding/hex"
	"unicode"
	"unicode/utf8"
)

// plainJSON marks the bytes that stand for themselves inside a JSON string: printable ASCII
// but the quote and the backslash.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString appends s as a JSON string, escaped as encoding/json escapes strings with
// HTML escaping off: quotes, backslashes and control characters; invalid UTF-8 becomes
// U+FFFD; U+2028 and U+2029 are escaped, as JavaScript wants. Every JSON line and Parquet
// field tree writes its strings through it: record values are often JSON text themselves,
// full of quotes.
func appendJSONString[T ~string | ~[]byte](b []byte, s T) []byte {
	b, _ = appendEscaped(b, s, false)
	return b
}

// appendBytesValue appends the value of a bytes field as the JSON lines show it: a string of
// the text when the bytes are printable UTF-8 (codec.Printable), of their hex otherwise. It
// decides and escapes in one pass over the bytes, which may be a record's whole value.
func appendBytesValue(b, v []byte) []byte {
	start := len(b)
	if b, ok := appendEscaped(b, v, true); ok {
		return b
	}
	b = append(b[:start], '"')
	b = hex.AppendEncode(b, v)
	return append(b, '"')
}

// appendEscaped is appendJSONString; with printable set, it stops at the first byte that
// makes s not printable text (codec.Printable) and reports false.
func appendEscaped[T ~string | ~[]byte](b []byte, s T, printable bool) ([]byte, bool) {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainJSON[c] {
			i++
			continue
		}
		if c == 0x7f && !printable {
			i++ // DEL needs no escaping, but is not printable
			continue
		}
		if c < utf8.RuneSelf {
			if printable && c != '"' && c != '\\' && c != '\n' && c != '\t' && c != '\r' {
				return b, false
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if printable && (r == utf8.RuneError && size == 1 || !unicode.IsPrint(r)) {
			return b, false
		}
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), true
}
