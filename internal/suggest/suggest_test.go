package suggest

import "testing"

// TestNearest: a mistyped name is matched to the nearest, by edits (a swap of neighbours is
// one) or as a prefix, ignoring case; a word far from all is matched to none.
func TestNearest(t *testing.T) {
	names := []string{"Produce", "Fetch", "ListOffsets", "Metadata", "FindCoordinator", "NOT_LEADER_OR_FOLLOWER"}
	for _, tt := range []struct{ word, want string }{
		{"Fecth", "Fetch"}, {"fetch", "Fetch"}, {"Prodce", "Produce"}, {"metdata", "Metadata"},
		{"Find", "FindCoordinator"}, {"not_leader", "NOT_LEADER_OR_FOLLOWER"},
		{"xyzzy", ""}, {"F", ""}, {"", ""},
	} {
		if got := Nearest(tt.word, names); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.word, got, tt.want)
		}
	}
}

// TestDistance: the optimal string alignment distance, a swap of neighbours counting once.
func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"schema", "schema", 0}, {"ca", "abc", 3}} {
		if d := distance(tt.a, tt.b); d != tt.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, d, tt.d)
		}
	}
}
