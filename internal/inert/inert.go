// Package inert is kdissect's one rule for the strings it writes to a terminal or a text file.
// Every string in a capture (a client id, a topic, a record's value, an error message) and in
// a user's message definitions was chosen by someone else, and a terminal obeys some of the
// characters it is shown: ESC starts a sequence that moves the cursor, clears the screen or
// sets the window's title, CR and LF write over a line or make a fake one, C1 controls act
// as ESC sequences on some terminals, and the bidirectional controls reorder what follows.
//
// The rule: printable text is shown as it is. The C0 controls (U+0000–U+001F), DEL, the C1
// controls (U+0080–U+009F), the bidirectional controls (Unicode's Bidi_Control: U+061C,
// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the line and paragraph separators
// (U+2028, U+2029) are escaped visibly, as Go writes them in a quoted string: \n, \r, \t,
// \x1b, \x7f, \u009b, \u202e. A byte that is not part of valid UTF-8 is shown as \xff.
// Escaped text holds none of these characters, so escaping it again changes nothing.
//
// The JSON lines follow the same rule in JSON's syntax (Escaped says which characters).
package inert

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/kdissect/kdissect/internal/ascii"
)

// Escaped reports whether the rule escapes r: a C0 or C1 control, DEL, a bidirectional
// control, or a line or paragraph separator.
func Escaped(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r < 0x061c:
		return false
	}
	switch r {
	case 0x061c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
		0x2066, 0x2067, 0x2068, 0x2069:
		return true
	}
	return false
}

// String returns s as the rule shows it: s itself when nothing in it is escaped.
func String(s string) string {
	i := clean(s, false)
	if i == len(s) {
		return s
	}
	return string(appendFrom(append(make([]byte, 0, len(s)+16), s[:i]...), s, i, false, false))
}

// Append appends s to b as the rule shows it.
func Append[T ~string | ~[]byte](b []byte, s T) []byte {
	i := clean(s, false)
	b = append(b, s[:i]...)
	if i == len(s) {
		return b
	}
	return appendFrom(b, s, i, false, false)
}

// Quote returns s in double quotes, escaped as the rule says and with its quotes and
// backslashes escaped too, so that where it ends is plain: what strconv.Quote writes for
// any ordinary string.
func Quote(s string) string { return string(AppendQuote(make([]byte, 0, len(s)+2), s)) }

// AppendQuote appends Quote(s) to b.
func AppendQuote[T ~string | ~[]byte](b []byte, s T) []byte {
	b = append(b, '"')
	i := clean(s, true)
	b = append(b, s[:i]...)
	if i < len(s) {
		b = appendFrom(b, s, i, true, false)
	}
	return append(b, '"')
}

// clean is the length of the longest start of s that the rule leaves as it is (with quoted,
// the quote and the backslash are escaped too).
func clean[T ~string | ~[]byte](s T, quoted bool) int {
	i := 0
	if !quoted {
		i = ascii.PrintableWords(s) // most of what kdissect writes
	}
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || quoted && (c == '"' || c == '\\') {
				return i
			}
			i++
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 || Escaped(r) {
			return i
		}
		i += size
	}
	return len(s)
}

func decodeRune[T ~string | ~[]byte](s T) (rune, int) {
	if len(s) > utf8.UTFMax {
		s = s[:utf8.UTFMax]
	}
	return utf8.DecodeRuneInString(string(s)) // no copy: the conversion of a short operand is on the stack
}

const hexDigits = "0123456789abcdef"

// appendFrom appends s[i:] escaped; with keepLF, a newline stays as it is (Writer's lines).
func appendFrom[T ~string | ~[]byte](b []byte, s T, i int, quoted, keepLF bool) []byte {
	start := i
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != 0x7f && !(quoted && (c == '"' || c == '\\')) || c == '\n' && keepLF {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendByte(b, c)
			i++
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
		case Escaped(r):
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}

// appendByte appends the escape of an ASCII control, DEL, quote or backslash, in Go's forms:
// a letter where Go has one (\n), its hex otherwise (\x1b).
func appendByte(b []byte, c byte) []byte {
	const short, letters = "\a\b\f\n\r\t\v\"\\", "abfnrtv\"\\"
	if i := strings.IndexByte(short, c); i >= 0 {
		return append(b, '\\', letters[i])
	}
	return append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
}

// Writer passes lines of text to a terminal under the rule: everything written is escaped
// but the newlines that end its lines. It guards a stream of messages, such as stderr, that
// quote strings from elsewhere; a string that could hold a newline is escaped with String
// where the message is made. Each Write is escaped on its own: a character cut in two by
// the end of a Write shows as the escapes of its bytes.
type Writer struct {
	w   io.Writer
	buf []byte
}

// NewWriter writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Unwrap is the writer underneath, for what must reach it as it is (a progress line's
// carriage returns) and for asking whether it is a terminal.
func (w *Writer) Unwrap() io.Writer { return w.w }

// Write escapes p and writes it. It reports len(p) when everything was written.
func (w *Writer) Write(p []byte) (int, error) {
	i := clean(p, false)
	for i < len(p) && p[i] == '\n' {
		i += 1 + clean(p[i+1:], false)
	}
	if i == len(p) {
		return w.w.Write(p)
	}
	w.buf = appendFrom(append(w.buf[:0], p[:i]...), p, i, false, true)
	if _, err := w.w.Write(w.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
