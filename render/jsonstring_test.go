package render

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec"
)

// TestJSONString: strings come out as encoding/json writes them (HTML characters left alone)
// made inert, from strings and from bytes alike.
func TestJSONString(t *testing.T) {
	cases := []string{"", "plain", `quo"te`, `back\slash`, "é and 日本", "<&>", "line\u2028sep\u2029", "bad \xff utf8",
		"cut \xe6\x97", "\xed\xa0\x80 surrogate", `{"a":"b"}`}
	var all strings.Builder
	for c := range 0x80 {
		all.WriteByte(byte(c))
	}
	cases = append(cases, all.String())
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		cases = append(cases, string(b))
	}
	for range 2000 {
		cases = append(cases, string(mostlyText(rng, 48)))
	}
	for _, s := range cases {
		if err := sameAsEncodingJSON(s); err != nil {
			t.Error(err)
		}
	}
}

// TestJSONStringSweep: strings of 0 to 40 bytes with one byte or character that is not plain
// at every place, so at every place of a word and of the last 7 bytes, appended after other
// bytes and into spare room, come out as encoding/json writes them, made inert, and as text
// exactly when codec.Printable says so.
func TestJSONStringSweep(t *testing.T) {
	odd := []string{`"`, `\`, "\n", "\t", "\r", "\x00", "\x01", "\x1f", "\x7f", "#", "]", "~", " ", "\x80", "\xff",
		"\xc3", "é", "\u0085", "\u009b", "\u202e", "\u2028", "\u00a0", "日", "\U0001F600", "\xe6\x97", "\xed\xa0\x80", "\ufffd"}
	base := "abcdefghijklmnopqrstuvwxyz0123456789ABCDE"
	bad := 0
	for n := 0; n <= 40; n++ {
		for p := 0; p <= n; p++ {
			for _, o := range odd {
				s := base[:p] + o + base[p:n]
				if err := appendedAfter(s); err != nil {
					t.Error(err)
					if bad++; bad > 10 {
						t.FailNow()
					}
				}
			}
		}
	}
}

// appendedAfter says how appendJSONString and appendBytesValue write s after other bytes, into
// a buffer with room to spare or none, when it is not as they write it alone, or when it
// differs from encoding/json's (sameAsEncodingJSON) or codec.Printable's verdict.
func appendedAfter(s string) error {
	if err := sameAsEncodingJSON(s); err != nil {
		return err
	}
	if err := bytesValueAsPrintable([]byte(s)); err != nil {
		return err
	}
	str, val := string(appendJSONString(nil, s)), string(appendBytesValue(nil, []byte(s)))
	for _, prefix := range []string{"", `ab"`} {
		for _, spare := range []int{0, 5, 19} {
			buf := append(make([]byte, 0, len(prefix)+spare), prefix...)
			if got := string(appendJSONString(buf, []byte(s))); got != prefix+str {
				return fmt.Errorf("%q after %q, %d spare: %s, want %s", s, prefix, spare, got, prefix+str)
			}
			if got := string(appendBytesValue(buf, []byte(s))); got != prefix+val {
				return fmt.Errorf("value %q after %q, %d spare: %s, want %s", s, prefix, spare, got, prefix+val)
			}
		}
	}
	return nil
}

// TestBytesValueMemory: a value that turns out not to be text after a long start of text does
// not leave the line's buffer grown to the whole value (its hex goes out in pieces).
func TestBytesValueMemory(t *testing.T) {
	v := append([]byte(strings.Repeat("text ", 1000)), make([]byte, 8<<20)...)
	var out countWriter
	j := NewJSON(&out)
	b := j.bytesValue(make([]byte, 0, 1024), v)
	if n := int64(len(b)) + out.n; n != int64(2*len(v)+len(`,"value":"","encoding":"hex"`)) {
		t.Fatalf("%d bytes written, want the value's hex", n)
	}
	if cap(b) > 1<<20 {
		t.Errorf("the buffer grew to %d bytes for a value of %d", cap(b), len(v))
	}
}

// FuzzJSONString: any bytes come out as encoding/json writes them, made inert, and as text
// exactly when codec.Printable says so.
func FuzzJSONString(f *testing.F) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 20 {
		f.Add(mostlyText(rng, 64))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := sameAsEncodingJSON(string(b)); err != nil {
			t.Error(err)
		}
		if err := bytesValueAsPrintable(b); err != nil {
			t.Error(err)
		}
	})
}

// sameAsEncodingJSON says how appendJSONString writes s, from a string and from bytes, when
// it is not as encoding/json does, made inert.
func sameAsEncodingJSON(s string) error {
	var want strings.Builder
	enc := json.NewEncoder(&inertJSON{w: &want})
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	w := strings.TrimSuffix(want.String(), "\n")
	if got := string(appendJSONString(nil, s)); got != w {
		return fmt.Errorf("%q: %s, want %s", s, got, w)
	}
	if got := string(appendJSONString(nil, []byte(s))); got != w {
		return fmt.Errorf("bytes %q: %s, want %s", s, got, w)
	}
	return nil
}

// mostlyText is up to n bytes, mostly printable ASCII as record values are, with runs of
// plain bytes between quotes, backslashes, controls, DEL, characters of two to four bytes,
// and bytes that are not UTF-8: each at every place of a word, in tests run enough.
func mostlyText(rng *rand.Rand, n int) []byte {
	odd := []string{`"`, `\`, "\n", "\x00", "\x1f", "\x7f", "é", "\u0085", "\u202e", "日", "\U0001F600", "\xff", "\xe6\x97", "\u00a0"}
	var b []byte
	for len(b) < n {
		if rng.IntN(4) == 0 {
			b = append(b, odd[rng.IntN(len(odd))]...)
			continue
		}
		for range rng.IntN(12) {
			b = append(b, byte(0x20+rng.IntN(0x5f)))
		}
	}
	return b[:rng.IntN(len(b)+1)]
}

// TestJSONStringInert: DEL, the C1 controls and the bidirectional controls are escaped, and
// the string reads back as it was.
func TestJSONStringInert(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"del\x7f", `"del\u007f"`},
		{"\u009b31m\u0085", `"\u009b31m\u0085"`},
		{"abc\u202edcba\u2066\u200f", `"abc\u202edcba\u2066\u200f"`},
		{"\x1b]0;title\a\r", `"\u001b]0;title\u0007\r"`},
	} {
		got := string(appendJSONString(nil, c.in))
		if got != c.want {
			t.Errorf("%q: %s, want %s", c.in, got, c.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back != c.in {
			t.Errorf("%s reads back as %q, %v", got, back, err)
		}
		var out strings.Builder
		(&inertJSON{w: &out}).Write(mustMarshal(t, c.in))
		if out.String() != c.want {
			t.Errorf("encoding/json's %q made inert: %s, want %s", c.in, out.String(), c.want)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBytesValue: bytes are text exactly when codec.Printable says so, and hex otherwise.
func TestBytesValue(t *testing.T) {
	cases := [][]byte{nil, []byte("text"), []byte("tab\tand\nnewline"), []byte{0}, []byte{0x7f}, []byte("é"), []byte("\xff"),
		[]byte("\u00a0 nbsp"), []byte("\u200b zero width"), []byte(`{"json":true}`)}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]byte, rng.IntN(6))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		cases = append(cases, b, mostlyText(rng, 48))
	}
	for _, v := range cases {
		if err := bytesValueAsPrintable(v); err != nil {
			t.Error(err)
		}
	}
}

// bytesValueAsPrintable says how appendBytesValue writes v when it is not as a JSON string
// exactly when codec.Printable(v), and as hex otherwise.
func bytesValueAsPrintable(v []byte) error {
	want := `"` + hex.EncodeToString(v) + `"`
	if codec.Printable(v) {
		want = string(appendJSONString(nil, string(v)))
	}
	if got := string(appendBytesValue(nil, v)); got != want {
		return fmt.Errorf("%q: %s, want %s", v, got, want)
	}
	return nil
}

// BenchmarkJSONString escapes strings of about 2 KB of each kind a record value may hold, the
// writes of the JSON lines and Parquet field trees.
func BenchmarkJSONString(b *testing.B) {
	kinds := []struct{ name, unit string }{
		{"ascii", "plain text, the most common value. "},
		{"json", `{"user":"user-1","event":"click","tags":["a","b"]},`},
		{"controls", "a\n\tb\n"},
		{"latin", "café crème, déjà vu; "},
		{"cjk", "日本語のテキスト、"},
	}
	for _, k := range kinds {
		s := []byte(strings.Repeat(k.unit, 2048/len(k.unit)+1))
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			buf := make([]byte, 0, 4*len(s))
			for b.Loop() {
				buf = appendJSONString(buf[:0], s)
			}
		})
	}
}
