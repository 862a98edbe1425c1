package analysis_test

import (
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
)

// TestSeries adds values to series of several limits: up to its limit each value is a mark;
// past it the marks are buckets that hold every value (their counts, sums, minimums and
// maximums add up) and are no more than the limit.
func TestSeries(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name          string
		limit, values int
		lines         []string
		step          time.Duration
		wantExact     bool
	}{
		{"under the limit", 10, 10, []string{"a"}, time.Millisecond, true},
		{"one past the limit", 10, 11, []string{"a"}, time.Millisecond, false},
		{"many values, two lines", 50, 100000, []string{"a", "b"}, time.Millisecond, false},
		{"values at one time", 5, 100, []string{"a"}, 0, false},
		{"backwards in time", 20, 1000, []string{"a", "b", "c"}, -time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := analysis.NewSeries(c.limit)
			var sum float64
			for i := range c.values {
				v := float64(i % 7)
				sum += v
				s.Add(c.lines[i%len(c.lines)], t0.Add(time.Duration(i)*c.step), v)
			}
			ms := s.Marks()
			if exact := s.Width() == 0; exact != c.wantExact {
				t.Fatalf("width %v, want exact %v", s.Width(), c.wantExact)
			}
			if len(ms) > max(c.limit, len(c.lines)) {
				t.Errorf("%d marks, limit %d", len(ms), c.limit)
			}
			n, got, lo, hi := 0, 0.0, 1e9, -1e9
			for i, m := range ms {
				n += m.Count
				got += m.Sum
				lo, hi = min(lo, m.Min), max(hi, m.Max)
				if m.Width != s.Width() {
					t.Errorf("mark %d width %v, series %v", i, m.Width, s.Width())
				}
				if i > 0 && ms[i-1].Line == m.Line && m.Start.Before(ms[i-1].Start) {
					t.Errorf("mark %d out of order", i)
				}
			}
			if n != c.values || got != sum || lo != 0 || hi != float64(min(c.values-1, 6)) {
				t.Errorf("marks hold %d values summing to %v (%v..%v), want %d summing to %v", n, got, lo, hi, c.values, sum)
			}
		})
	}
}

// TestBucketed: a bucketed series counts per bucket of its width, and widens past its limit.
func TestBucketed(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := analysis.NewBucketed(100, time.Second)
	for i := range 10 {
		s.Add("t", t0.Add(time.Duration(i)*300*time.Millisecond), 1)
	}
	ms := s.Marks()
	if len(ms) != 3 || ms[0].Count != 4 || ms[1].Count != 3 || ms[2].Count != 3 || ms[0].Width != time.Second {
		t.Fatalf("marks %+v", ms)
	}
	for i := range 1000 {
		s.Add("t", t0.Add(time.Duration(i)*time.Second), 1)
	}
	if n := len(s.Marks()); n > 100 || s.Width() <= time.Second {
		t.Errorf("%d marks of %v", n, s.Width())
	}
}
