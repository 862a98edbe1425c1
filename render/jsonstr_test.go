package render

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// marshalString is encoding/json's encoding of s, HTML characters not escaped: the oracle.
func marshalString(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// TestAppendString: strings are escaped as encoding/json escapes them, given as strings and as
// bytes: every single byte, every character around the ASCII and UTF-8 boundaries, U+2028 and
// U+2029, invalid and cut UTF-8, and random mixes of them.
func TestAppendString(t *testing.T) {
	e := newJSONEscapes()
	check := func(s string) {
		t.Helper()
		want := marshalString(t, s)
		if got := string(appendString(nil, s, e)); got != want {
			t.Fatalf("string %q: got %s, want %s", s, got, want)
		}
		if got := string(appendString([]byte("x"), []byte(s), e)); got != "x"+want {
			t.Fatalf("bytes %q: got %s, want x%s", s, got, want)
		}
	}
	cases := []string{"", "plain", `{"event":"login","user":1}`, "tab\there", "nl\n", "\x00\x01\x1f\x7f",
		"<a href=\"x\">&amp;</a>", "\u2028\u2029", "é ü 日本 🎉", "\xff\xfe", "cut \xe6\x97", "\xe2\x80", "\xed\xa0\x80"}
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	for _, r := range []rune{0x7f, 0x80, 0xa0, 0x7ff, 0x800, 0xfffd, 0xffff, 0x10000, 0x10ffff} {
		cases = append(cases, string(r))
	}
	for _, s := range cases {
		check(s)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "\"", "\\", "\n", "\x00", "é", "\u2028", "\xff", "\xe6\x97\xa5", "\xe6", " "}
	for range 2000 {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		check(string(b))
	}
}
