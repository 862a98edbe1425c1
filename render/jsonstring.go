package render

import (
	"encoding/binary"
	"encoding/hex"
	"io"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/kdissect/kdissect/internal/ascii"
	"github.com/kdissect/kdissect/internal/inert"
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
// HTML escaping off (quotes, backslashes and control characters; invalid UTF-8 becomes
// U+FFFD; U+2028 and U+2029, as JavaScript wants), and under package inert's rule, so that a
// line viewed raw on a terminal is inert too: DEL, the C1 controls and the bidirectional
// controls are escaped (\u009b, \u202e). Every JSON line and Parquet field tree writes its
// strings through it: record values are often JSON text themselves, full of quotes.
func appendJSONString[T ~string | ~[]byte](b []byte, s T) []byte {
	b, _ = appendEscaped(b, s, false)
	return b
}

// appendBytesValue appends the value of a bytes field as the JSON lines show it: a string of
// the text when the bytes are printable UTF-8 (codec.Printable), of their hex otherwise.
func appendBytesValue(b, v []byte) []byte {
	b, ok := appendTextValue(b, v)
	if ok {
		return b
	}
	b = append(b, '"')
	b = hex.AppendEncode(b, v)
	return append(b, '"')
}

// appendTextValue appends v as a JSON string and reports true when it is printable text
// (codec.Printable); otherwise it returns b as it was (perhaps grown) and false. It decides and
// escapes in one pass.
func appendTextValue(b, v []byte) ([]byte, bool) {
	start := len(b)
	b, ok := appendEscaped(b, v, true)
	if !ok {
		b = b[:start]
	}
	return b, ok
}

// appendEscaped is appendJSONString; with printable set, it stops at the first byte that
// makes s not printable text (codec.Printable) and reports false.
func appendEscaped[T ~string | ~[]byte](b []byte, s T, printable bool) ([]byte, bool) {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	// words is where whole words may be tried again. After a try that went less than a word,
	// the next wait bytes go one at a time, and the wait doubles up to 256 bytes with each
	// such try: text dense with controls or with letters beyond ASCII would otherwise pay for
	// a try at every few bytes. A string shorter than a word never tries.
	words, wait := 0, 8
	if len(s) < 8 {
		words = len(s)
	}
	for i := 0; i < len(s); {
		c := s[i]
		if plainJSON[c] {
			if i < words {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			from := i
			b, i = appendASCII(b, s, i)
			if start = i; i == from { // in the last 7 bytes: c goes with the bytes after it
				i++
			}
			if words = i; i-from < 8 {
				words, wait = i+wait, min(2*wait, 256)
			} else {
				wait = 8
			}
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
		case inert.Escaped(r):
			b = append(b, s[start:i]...)
			b = appendRuneEscape(b, r)
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

// appendASCII appends s[i:] escaped while it holds printable ASCII, and returns where it
// stopped: at a byte that is not, or in the last 7 bytes of s. It takes 8 bytes at a time,
// copied whole before they are looked at, and escapes a quote or a backslash in place: record
// values are often JSON text, with a quote every few bytes, where copying each run between
// two quotes would cost more than the bytes.
func appendASCII[T ~string | ~[]byte](b []byte, s T, i int) ([]byte, int) {
	for i+8 <= len(s) {
		if cap(b)-len(b) < 16 {
			// Room for a word and an escape, at least doubled; not room for all of s at
			// once, which may not be text after all.
			b = slices.Grow(b, min(len(s)-i, max(len(b), 4096))+16)
		}
		n, w := len(b), ascii.Word(s[i:])
		binary.LittleEndian.PutUint64(b[n:n+8], w)
		m := ascii.Unprintable(w) | ascii.Holds(w, '"') | ascii.Holds(w, '\\')
		if m == 0 {
			b, i = b[:n+8], i+8
			continue
		}
		k := ascii.First(m)
		if c := s[i+k]; c == '"' || c == '\\' {
			b = append(b[:n+k], '\\', c)
			i += k + 1
			continue
		}
		return b[:n+k], i + k
	}
	return b, i
}

// appendRuneEscape appends r, a character of the Basic Multilingual Plane, as a JSON escape.
func appendRuneEscape(b []byte, r rune) []byte {
	const hexDigits = "0123456789abcdef"
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// inertJSON is JSON text from encoding/json made inert: DEL and the characters inert.Escaped
// names, raw inside its strings, are escaped. Outside strings JSON text is ASCII without
// controls, so the text means the same. Each Write must hold whole characters, as a
// json.Encoder's do (one Write per value).
type inertJSON struct {
	w   io.Writer
	buf []byte
}

func (j *inertJSON) Write(p []byte) (int, error) {
	j.buf = j.buf[:0]
	start := 0
	for i := 0; i < len(p); {
		c := p[i]
		if c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if inert.Escaped(r) {
			j.buf = appendRuneEscape(append(j.buf, p[start:i]...), r)
			start = i + size
		}
		i += size
	}
	if start == 0 {
		return j.w.Write(p)
	}
	if _, err := j.w.Write(append(j.buf, p[start:]...)); err != nil {
		return 0, err
	}
	return len(p), nil
}
