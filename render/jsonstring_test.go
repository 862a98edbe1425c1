package render

import (
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec"
)

// TestJSONString: strings come out as encoding/json writes them (HTML characters left alone),
// from strings and from bytes alike.
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
		enc := json.NewEncoder(&want)
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
