package main

import (
	"slices"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := slices.Clone(c.in)
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v; want %v", c.in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("median reordered its argument: %v, was %v", c.in, in)
		}
	}
}

// TestCoresRows: the speedup is one core's time over k cores', the ceiling k runs' work side
// by side over one alone, and the share the speedup's of the ceiling, each the median of the
// rounds.
func TestCoresRows(t *testing.T) {
	s := time.Second
	o := coresOptions{cores: 2, formats: []string{"json", "diagram"}}
	rounds := map[string][]coresRound{
		// speedups 1.5, 2, 1.6; ceilings 2·3/4 = 1.5, 2·4/4 = 2, 2·4/5 = 1.6: shares 1, 1, 1.
		"json": {{one: 3 * s, many: 2 * s, together: 4 * s}, {one: 4 * s, many: 2 * s, together: 4 * s}, {one: 4 * s, many: 2500 * time.Millisecond, together: 5 * s}},
		// speedup 1.2 of a ceiling 1.5: 80%.
		"diagram": {{one: 6 * s, many: 5 * s, together: 8 * s}},
	}
	got := coresRows(o, rounds, map[string]bool{"json": true})
	want := [][]string{
		{"json", "4.00 s", "2.00 s", "1.60× (1.50–2.00)", "1.60× (1.50–2.00)", "100%", "identical"},
		{"diagram", "6.00 s", "5.00 s", "1.20× (1.20–1.20)", "1.50× (1.50–1.50)", "80%", "DIFFERS"},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("coresRows:\n got %q\nwant %q", got, want)
	}
}

func TestCoreList(t *testing.T) {
	if got := coreList(1); got != "0" {
		t.Errorf("coreList(1) = %q", got)
	}
	if got := coreList(4); got != "0-3" {
		t.Errorf("coreList(4) = %q", got)
	}
}
