// Package suggest finds the name a user most likely meant when a word names nothing: a
// subcommand, an API, an error. It owns the one measure of nearness every such message uses.
package suggest

import "strings"

// Nearest returns the name of names nearest to word, ignoring case: one that word begins (at
// least two letters typed), or one at most two edits away (an insertion, a deletion, a change,
// or two neighbours swapped). It returns "" when none is that near, and the first of equals.
func Nearest(word string, names []string) string {
	w := strings.ToLower(word)
	best, dist := "", 3
	for _, name := range names {
		n := strings.ToLower(name)
		d := distance(w, n)
		if len(w) >= 2 && strings.HasPrefix(n, w) {
			d = min(d, 1)
		}
		if d < dist {
			best, dist = name, d
		}
	}
	return best
}

// distance counts the insertions, deletions, substitutions and swaps of two neighbours that
// make a into b (the optimal string alignment distance), over bytes.
func distance(a, b string) int {
	// d[i][j] is the distance of a[:i] and b[:j]; three rows are enough.
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
