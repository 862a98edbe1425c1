// Package ascii tests text eight bytes at a time, as one 64-bit word: whether the bytes are
// all printable ASCII, or whether one of them is a given byte. Most of what kdissect checks
// before writing it (names, record values, JSON text) is printable ASCII, and a word at a time
// costs a fraction of a byte at a time. A test's result is not 0 when some byte of the word
// fails it, and First says which byte is the first to fail: a test may also flag bytes after
// that one (a borrow or a carry runs on from it), never one before.
package ascii

import "math/bits"

const ones, highs = 0x0101010101010101, 0x8080808080808080

// Word is the first 8 bytes of s, s[0] in the low byte; s must hold 8 bytes or more.
func Word[T ~string | ~[]byte](s T) uint64 {
	s = s[:8] // of known length: the loads below need no bounds checks, and are one
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Unprintable is not 0 when a byte of w is not printable ASCII (0x20 to 0x7e): a byte under
// 0x20 (the test is exact for the word, though not for each byte), or one of 0x7f and over,
// whose high bit is set, or set by adding 1.
func Unprintable(w uint64) uint64 {
	return ((w - 0x20*ones) | w | (w + ones)) & highs
}

// Holds is not 0 when a byte of w is c.
func Holds(w uint64, c byte) uint64 {
	x := w ^ ones*uint64(c) // the bytes that are c become 0
	return (x - ones) &^ x & highs
}

// First is the index in its word of the first byte a test's result m flags (m not 0); tests
// are ORed to find the first byte failing any of them.
func First(m uint64) int { return bits.TrailingZeros64(m) / 8 }

// PrintableWords is the length of the longest start of s, in whole words of 8 bytes, that
// holds printable ASCII alone, or len(s) when all of s does and is 8 bytes or more (its end
// checked as a word that overlaps the one before). It checks four words a step while they
// last.
func PrintableWords[T ~string | ~[]byte](s T) int {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w := s[i : i+32]
		if Unprintable(Word(w[:8]))|Unprintable(Word(w[8:16]))|Unprintable(Word(w[16:24]))|Unprintable(Word(w[24:32])) != 0 {
			break // the loop below finds which word
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if Unprintable(Word(s[i:])) != 0 {
			return i
		}
	}
	if i < len(s) && i >= 8 && Unprintable(Word(s[len(s)-8:])) == 0 {
		return len(s)
	}
	return i
}
