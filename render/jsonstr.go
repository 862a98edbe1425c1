package render

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// jsonEscapes is how encoding/json (HTML characters not escaped) writes each character that it
// escapes, learnt from encoding/json itself when a JSON renderer is made, so that strings are
// escaped here exactly as it escapes them, without its reflection and copies: the values of a
// big message are megabytes of text full of quotes.
type jsonEscapes struct {
	// ascii[c] is the text of ASCII character c inside a JSON string; safe[c] says it is c.
	ascii [utf8.RuneSelf]string
	safe  [utf8.RuneSelf]bool
	// invalid is the text of a byte that is not UTF-8; lineSep and paraSep those of U+2028
	// and U+2029.
	invalid, lineSep, paraSep string
}

func newJSONEscapes() *jsonEscapes {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	inner := func(s string) string {
		buf.Reset()
		enc.Encode(s) // a string always encodes
		out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		return string(out[1 : len(out)-1])
	}
	e := &jsonEscapes{invalid: inner("\xff"), lineSep: inner("\u2028"), paraSep: inner("\u2029")}
	for c := range utf8.RuneSelf {
		e.ascii[c] = inner(string(rune(c)))
		e.safe[c] = e.ascii[c] == string(rune(c))
	}
	return e
}

// appendString appends s as a JSON string, quoted and escaped as encoding/json does.
func appendString[T ~string | ~[]byte](b []byte, s T, e *jsonEscapes) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !e.safe[c] {
				b = append(append(b, s[start:i]...), e.ascii[c]...)
				start = i + 1
			}
			i++
			continue
		}
		var head [utf8.UTFMax]byte
		r, size := utf8.DecodeRune(head[:copy(head[:], s[i:min(i+utf8.UTFMax, len(s))])])
		var esc string
		switch {
		case r == utf8.RuneError && size == 1:
			esc = e.invalid
		case r == '\u2028':
			esc = e.lineSep
		case r == '\u2029':
			esc = e.paraSep
		default:
			i += size
			continue
		}
		b = append(append(b, s[start:i]...), esc...)
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
