// Package plural writes counts for people: "1 byte", "2 bytes", "0 messages". Every message
// of kdissect that counts something uses it, so that no message says "1 messages".
package plural

import "strconv"

// Integer is any integer kind a count comes in.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Count is n and the noun, in the plural unless n is 1: Count(1, "byte") is "1 byte",
// Count(3, "byte") "3 bytes", Count(2, "batch") "2 batches". The noun is a regular English
// one: its plural adds "es" after s, x, z, ch and sh, "s" after anything else.
func Count[T Integer](n T, noun string) string { return string(AppendCount(nil, n, noun)) }

// AppendCount appends Count(n, noun) to b.
func AppendCount[T Integer](b []byte, n T, noun string) []byte {
	var zero T
	if n < zero {
		b = strconv.AppendInt(b, int64(n), 10)
	} else {
		b = strconv.AppendUint(b, uint64(n), 10)
	}
	return AppendNoun(append(b, ' '), n, noun)
}

// AppendNoun appends Noun(n, noun) to b, without making the plural a string.
func AppendNoun[T Integer](b []byte, n T, noun string) []byte {
	b = append(b, noun...)
	if n != 1 {
		b = append(b, suffix(noun)...)
	}
	return b
}

// suffix is what the plural of a regular noun adds to it: "es" after s, x, z, ch and sh.
func suffix(noun string) string {
	n := len(noun)
	switch {
	case n == 0:
	case noun[n-1] == 's', noun[n-1] == 'x', noun[n-1] == 'z':
		return "es"
	case noun[n-1] == 'h' && n >= 2 && (noun[n-2] == 'c' || noun[n-2] == 's'):
		return "es"
	}
	return "s"
}

// Noun is the noun alone, in the plural unless n is 1, for when the count is written
// apart from it ("1 TCP connection").
func Noun[T Integer](n T, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + suffix(noun)
}

// Pick is one when n is 1, other otherwise: the words that agree with a count ("was" or
// "were", "it" or "them") and irregular nouns.
func Pick[T Integer](n T, one, other string) string {
	if n == 1 {
		return one
	}
	return other
}
