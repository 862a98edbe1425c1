package inert

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"orders", "orders"},
		{"café 🙂 ü", "café 🙂 ü"},
		{`back\slash "quoted"`, `back\slash "quoted"`},
		{"\x1b]0;title\a", `\x1b]0;title\a`},
		{"\x1b[2J\x1b[1A\x1b[2K", `\x1b[2J\x1b[1A\x1b[2K`},
		{"a\rb\nc\td", `a\rb\nc\td`},
		{"del\x7f", `del\x7f`},
		{"nul\x00", `nul\x00`},
		{"csi\u009b31m", `csi\u009b31m`},
		{"\u0080\u009f", `\u0080\u009f`},
		{"abc\u202edcba", `abc\u202edcba`},
		{"\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"bad\xff\xfe utf8 \xc2", `bad\xff\xfe utf8 \xc2`},
		{"cut \xe2\x80", `cut \xe2\x80`},
		{"\u00a0\u2030\u2065", "\u00a0\u2030\u2065"}, // next to the escaped ones, but printable
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := string(Append([]byte("x"), []byte(c.in))); got != "x"+c.want {
			t.Errorf("Append(%q) = %q, want %q", c.in, got, "x"+c.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"client-1", `"client-1"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\x1b[31mred\x1b[0m", `"\x1b[31mred\x1b[0m"`},
		{"\u009b\u202e\xff", `"\u009b\u202e\xff"`},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestWriter(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, s := range []string{"kdissect: plain line\n", "kdissect: topic \x1b[2J\r\u202e\xff\n", "two\nlines\n"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	want := "kdissect: plain line\nkdissect: topic \\x1b[2J\\r\\u202e\\xff\ntwo\nlines\n"
	if out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
	if w.Unwrap() != &out {
		t.Error("Unwrap is not the writer underneath")
	}
}

// checkShown fails t if shown holds anything the rule escapes, or bytes that are not UTF-8.
func checkShown(t *testing.T, in, shown string, newlines bool) {
	t.Helper()
	if !utf8.ValidString(shown) {
		t.Fatalf("%q shown as %q: not UTF-8", in, shown)
	}
	for _, r := range shown {
		if Escaped(r) && !(newlines && r == '\n') {
			t.Fatalf("%q shown as %q: holds %U", in, shown, r)
		}
	}
}

// FuzzString checks the rule's promises on any string: nothing it escapes is left, escaping
// twice changes nothing, a quoted string reads back as the original, and the Writer keeps
// only newlines.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;t\a", "\r\n", "\u009b\u202e", "\xff\xc2", `"\`, "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		shown := String(s)
		checkShown(t, s, shown, false)
		if again := String(shown); again != shown {
			t.Fatalf("String(%q) = %q, escaped again %q", s, shown, again)
		}
		if shown == s && clean(s, false) != len(s) {
			t.Fatalf("%q left as it is but not clean", s)
		}
		q := Quote(s)
		checkShown(t, s, q, false)
		if back, err := strconv.Unquote(q); err != nil || back != s {
			t.Fatalf("Quote(%q) = %s reads back as %q, %v", s, q, back, err)
		}
		var out bytes.Buffer
		NewWriter(&out).Write([]byte(s))
		checkShown(t, s, out.String(), true)
		if strings.Count(out.String(), "\n") != strings.Count(s, "\n") {
			t.Fatalf("Writer turned %q into %q: the newlines changed", s, out.String())
		}
	})
}

// TestCleanEveryByte checks clean, which reads printable ASCII 8 bytes at a time, against a
// rune-by-rune reading of the rule: every byte value, at every place of strings of printable
// ASCII that span several words (and a part of one), alone and after a character of several
// bytes.
func TestCleanEveryByte(t *testing.T) {
	want := func(s string, quoted bool) int {
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || Escaped(r) || quoted && (r == '"' || r == '\\') {
				return i
			}
			i += size
		}
		return len(s)
	}
	for _, base := range []string{strings.Repeat("abcdefgh", 3), strings.Repeat("abcdefgh", 5), "é" + strings.Repeat("~ !}", 5), strings.Repeat("x", 7), "abcdefghijklm"} {
		for at := range len(base) + 1 {
			for c := range 256 {
				s := base[:at] + string([]byte{byte(c)}) + base[at:]
				for _, quoted := range []bool{false, true} {
					if got, w := clean(s, quoted), want(s, quoted); got != w {
						t.Fatalf("clean(%q, %v) = %d, want %d", s, quoted, got, w)
					}
					if got, w := clean([]byte(s), quoted), want(s, quoted); got != w {
						t.Fatalf("clean([]byte(%q), %v) = %d, want %d", s, quoted, got, w)
					}
				}
			}
		}
	}
}

// BenchmarkWriter writes a summary's line, all of it printable, as the summary does.
func BenchmarkWriter(b *testing.B) {
	line := []byte(`  6017    0.123456  12 127.0.0.1:60212 -> 127.0.0.1:9094 Request  Fetch v18                    corr 1234   client "kbench-consumer-2"  108 bytes  topics kbench-orders[0,1]  session 11 epoch 3: updates kbench-orders[4]; 10 partitions` + "\n")
	w := NewWriter(io.Discard)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		w.Write(line)
	}
}
