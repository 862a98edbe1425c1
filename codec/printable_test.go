package codec

import (
	"math/rand/v2"
	"testing"
	"unicode"
	"unicode/utf8"
)

// printableByDefinition is Printable as its comment says it: valid UTF-8 of printable
// characters and ordinary white space.
func printableByDefinition(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' && r != '\r' {
			return false
		}
	}
	return true
}

// TestPrintable: the fast path agrees with the definition on every byte, characters around
// the UTF-8 boundaries, invalid and cut sequences, and random mixes of them.
func TestPrintable(t *testing.T) {
	var cases [][]byte
	for c := range 256 {
		cases = append(cases, []byte{byte(c)}, []byte{'a', byte(c), 'b'})
	}
	for _, s := range []string{"", "user-1", "{\"a\":1}\n", "é日本🎉", "\u2028", "\ufffd", "\xef\xbf\xbd", "\xed\xa0\x80", "\xc0\xaf", "\xe6\x97", "\u00ad", "\u200b"} {
		cases = append(cases, []byte(s))
	}
	// Every byte at every place of two words, for the eight bytes read at a time.
	for c := range 256 {
		for at := range 17 {
			b := []byte("abcdefghijklmnopq")
			b[at] = byte(c)
			cases = append(cases, b)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", " ", "\x7f", "\x00", "\t", "é", "\u2028", "\xff", "\xe6\x97\xa5", "\xe6", "\u0301"}
	for range 3000 {
		var b []byte
		for range rng.IntN(10) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		cases = append(cases, b)
	}
	for _, b := range cases {
		if got, want := Printable(b), printableByDefinition(b); got != want {
			t.Errorf("Printable(%q) = %v, want %v", b, got, want)
		}
	}
}
