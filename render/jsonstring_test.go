package render

import (
	"encoding/hex"
	"encoding/json"
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
	for _, s := range cases {
		var want strings.Builder
		enc := json.NewEncoder(&inertJSON{w: &want})
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		w := strings.TrimSuffix(want.String(), "\n")
		if got := string(appendJSONString(nil, s)); got != w {
			t.Errorf("%q: %s, want %s", s, got, w)
		}
		if got := string(appendJSONString(nil, []byte(s))); got != w {
			t.Errorf("bytes %q: %s, want %s", s, got, w)
		}
	}
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
		cases = append(cases, b)
	}
	for _, v := range cases {
		want := `"` + hex.EncodeToString(v) + `"`
		if codec.Printable(v) {
			want = string(appendJSONString(nil, string(v)))
		}
		if got := string(appendBytesValue(nil, v)); got != want {
			t.Errorf("%q: %s, want %s", v, got, want)
		}
	}
}
