package reassembly

import "testing"

// TestEvictRun: the bytes of Evict calls that follow one another (overlapping, touching, in
// either order) gather into one run, given back once it makes evictBytes; bytes away from the
// run give it back and start the next.
func TestEvictRun(t *testing.T) {
	const mb = evictBytes / 2
	type span struct{ lo, hi int }
	tests := []struct {
		name string
		adds []span
		// give is what each add returns; run is the run left.
		give []span
		run  span
	}{
		{"small, gathered", []span{{0, 100}, {100, 300}, {300, 4000}},
			[]span{{}, {}, {}}, span{0, 4000}},
		{"overlapping and backwards", []span{{1000, 2000}, {1500, 2500}, {500, 1000}},
			[]span{{}, {}, {}}, span{500, 2500}},
		{"given back at evictBytes", []span{{0, mb}, {mb, 2 * mb}, {2 * mb, 2*mb + 10}},
			[]span{{}, {0, 2 * mb}, {}}, span{2 * mb, 2*mb + 10}},
		{"one call over evictBytes", []span{{7, 7 + 3*mb}},
			[]span{{7, 7 + 3*mb}}, span{}},
		{"a gap starts the next run", []span{{0, 100}, {101, 200}, {150, 300}},
			[]span{{}, {0, 100}, {}}, span{101, 300}},
		{"before the run, apart", []span{{5000, 6000}, {0, 4999}},
			[]span{{}, {5000, 6000}}, span{0, 4999}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r evictRun
			for i, a := range tc.adds {
				lo, hi := r.add(a.lo, a.hi)
				if got := (span{lo, hi}); got != tc.give[i] {
					t.Errorf("add %d %v: gives back %v, want %v", i, a, got, tc.give[i])
				}
			}
			if got := (span{r.lo, r.hi}); got != tc.run {
				t.Errorf("run left %v, want %v", got, tc.run)
			}
		})
	}
}
