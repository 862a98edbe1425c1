package ascii

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// wordTests are the tests and what each says of a single byte.
var wordTests = []struct {
	name  string
	test  func(uint64) uint64
	fails func(c byte) bool
}{
	{"Unprintable", Unprintable, func(c byte) bool { return c < 0x20 || c > 0x7e }},
	{"Holds quote", func(w uint64) uint64 { return Holds(w, '"') }, func(c byte) bool { return c == '"' }},
	{"Holds zero", func(w uint64) uint64 { return Holds(w, 0) }, func(c byte) bool { return c == 0 }},
	{"Holds 0xff", func(w uint64) uint64 { return Holds(w, 0xff) }, func(c byte) bool { return c == 0xff }},
}

// words are 8-byte words to test: every byte value at every place among printable bytes, after
// a failing byte, and before one, and random words whose bytes are mostly the edge values.
func words() [][8]byte {
	var ws [][8]byte
	edges := []byte{0, 1, 0x1f, 0x20, '"', 0x21, '\\', 0x7e, 0x7f, 0x80, 0xfe, 0xff}
	for c := range 256 {
		for p := range 8 {
			for _, around := range []byte{'a', 0x00, 0xff, 0x7f, '"'} {
				w := [8]byte{'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'}
				w[p] = byte(c)
				if p > 0 {
					w[p-1] = around
				}
				if p < 7 {
					w[p+1] = around
				}
				ws = append(ws, w)
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		var w [8]byte
		for i := range w {
			if rng.IntN(3) == 0 {
				w[i] = byte(rng.IntN(256))
			} else {
				w[i] = edges[rng.IntN(len(edges))]
			}
		}
		ws = append(ws, w)
	}
	return ws
}

// TestWordTests: a test flags a word exactly when one of its bytes fails, and First names the
// first byte that does.
func TestWordTests(t *testing.T) {
	ws := words()
	for _, wt := range wordTests {
		t.Run(wt.name, func(t *testing.T) {
			bad := 0
			for _, w := range ws {
				first := -1
				for i, c := range w {
					if wt.fails(c) {
						first = i
						break
					}
				}
				m := wt.test(Word(w[:]))
				switch {
				case (m != 0) != (first >= 0):
					t.Errorf("%q: flagged %v, a byte fails: %v", w, m != 0, first >= 0)
				case m != 0 && First(m) != first:
					t.Errorf("%q: first flagged %d, first failing %d", w, First(m), first)
				default:
					continue
				}
				if bad++; bad > 10 {
					t.FailNow()
				}
			}
		})
	}
}

// TestWord: the first byte of the string is the word's low byte, from strings and bytes alike.
func TestWord(t *testing.T) {
	b := []byte("kafka!\x00\xff and more")
	want := binary.LittleEndian.Uint64(b)
	if got := Word(b); got != want {
		t.Errorf("Word(bytes) = %#x, want %#x", got, want)
	}
	if got := Word(string(b)); got != want {
		t.Errorf("Word(string) = %#x, want %#x", got, want)
	}
}

// TestPrintableWords: the length returned is in whole words of printable bytes, or all of s,
// and no shorter than it must be.
func TestPrintableWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		s := make([]byte, rng.IntN(80))
		for i := range s {
			s[i] = byte(0x20 + rng.IntN(0x5f))
		}
		bad := -1
		if len(s) > 0 && rng.IntN(2) == 0 {
			bad = rng.IntN(len(s))
			s[bad] = []byte{0, 0x1f, 0x7f, 0x80, 0xff}[rng.IntN(5)]
		}
		n := PrintableWords(s)
		clean := len(s)
		if bad >= 0 {
			clean = bad
		}
		want := clean / 8 * 8 // whole words before the bad byte
		if clean == len(s) && len(s) >= 8 {
			want = len(s)
		}
		if n != want {
			t.Fatalf("%q (bad at %d): %d, want %d", s, bad, n, want)
		}
	}
}
