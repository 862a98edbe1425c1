package analysis

import "testing"

// TestSequences: how a batch's sequence numbers are judged against those seen before on its
// partition.
func TestSequences(t *testing.T) {
	type batch struct{ base, n int64 }
	tests := []struct {
		name          string
		batches       []batch
		gap, dup, ooo int
	}{
		{"in order", []batch{{0, 5}, {5, 3}, {8, 1}}, 0, 0, 0},
		{"a retry", []batch{{0, 5}, {5, 3}, {5, 3}}, 0, 1, 0},
		{"a retry of an older batch", []batch{{0, 5}, {5, 3}, {0, 5}}, 0, 1, 0},
		{"a gap", []batch{{0, 5}, {10, 2}}, 1, 0, 0},
		{"a gap of one", []batch{{0, 5}, {6, 1}}, 1, 0, 0},
		{"the gap filled late", []batch{{0, 5}, {10, 2}, {5, 5}}, 1, 0, 1},
		{"the gap filled late, then a retry of the filler", []batch{{0, 5}, {10, 2}, {5, 5}, {5, 5}}, 1, 1, 1},
		{"overlapping what was seen", []batch{{0, 5}, {3, 4}}, 0, 0, 1},
		{"a first batch that does not start at 0", []batch{{7, 2}, {9, 1}}, 0, 0, 0},
		{"empty batches are not judged", []batch{{0, 5}, {20, 0}, {5, 1}}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s sequences
			gaps, dups, ooo := 0, 0, 0
			for _, b := range tt.batches {
				g, d, o := s.check(b.base, b.n)
				gaps, dups, ooo = gaps+int(b2i(g)), dups+int(b2i(d)), ooo+int(b2i(o))
			}
			if gaps != tt.gap || dups != tt.dup || ooo != tt.ooo {
				t.Errorf("gaps %d, duplicates %d, out of order %d; want %d, %d, %d", gaps, dups, ooo, tt.gap, tt.dup, tt.ooo)
			}
		})
	}
}
