package analysis

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// Series holds values over time, in named lines, for plots: one mark per value while they are
// few, buckets of time past a limit. Its size is bounded by the limit and the number of lines,
// however long the capture: when the marks outgrow the limit, the values that fall in the same
// bucket (of one line) merge into one mark, and the buckets double in width until the marks
// fit (or each line is one bucket).
type Series struct {
	limit int
	// width is the buckets' width; 0 while every value is its own mark (exact).
	width  time.Duration
	origin time.Time
	exact  []Mark
	// buckets holds the marks by line and bucket index, once width > 0.
	buckets map[bucketKey]*Mark
	// first and last are the times of the first and last values.
	first, last time.Time
}

type bucketKey struct {
	line  string
	index int64
}

// Mark is one value, or the values of one line in one bucket of time.
type Mark struct {
	Line string
	// Start is the value's time, or its bucket's start; Width is 0 for one value.
	Start time.Time
	Width time.Duration
	Count int
	// Sum, Min and Max are of the values it holds.
	Sum, Min, Max float64
}

// Mean is the mean of the values the mark holds.
func (m Mark) Mean() float64 { return m.Sum / float64(max(m.Count, 1)) }

// NewSeries returns a Series of up to limit marks (at least 1), one per value until then.
func NewSeries(limit int) *Series { return &Series{limit: max(limit, 1)} }

// NewBucketed returns a Series whose values are always bucketed, width wide at first (width > 0):
// counts over time, say bytes per second.
func NewBucketed(limit int, width time.Duration) *Series {
	return &Series{limit: max(limit, 1), width: max(width, 1), buckets: map[bucketKey]*Mark{}}
}

// Add adds value v of line at t.
func (s *Series) Add(line string, t time.Time, v float64) {
	if s.first.IsZero() && s.last.IsZero() {
		s.first, s.last = t, t
		if s.width > 0 {
			s.origin = t.Truncate(s.width)
		}
	}
	if t.Before(s.first) {
		s.first = t
	}
	if t.After(s.last) {
		s.last = t
	}
	if s.width == 0 {
		s.exact = append(s.exact, Mark{Line: line, Start: t, Count: 1, Sum: v, Min: v, Max: v})
		if len(s.exact) > s.limit {
			s.bucket()
		}
		return
	}
	s.merge(Mark{Line: line, Start: t, Count: 1, Sum: v, Min: v, Max: v})
	for len(s.buckets) > s.limit && s.width <= s.last.Sub(s.first) && s.width < maxWidth {
		s.widen()
	}
}

// bucket turns the exact marks into buckets as wide as needed to hold a fraction of the limit
// over the span seen so far.
func (s *Series) bucket() {
	span := s.last.Sub(s.first)
	s.width = max(span/time.Duration(max(s.limit/2, 1)), time.Microsecond)
	s.origin = s.first.Truncate(s.width)
	s.buckets = map[bucketKey]*Mark{}
	for _, m := range s.exact {
		s.merge(m)
	}
	s.exact = nil
	for len(s.buckets) > s.limit && s.width <= span && s.width < maxWidth {
		s.widen()
	}
}

// maxWidth bounds the buckets' width, which doubles: a span of a century is one bucket.
const maxWidth = 1 << 61

// widen doubles the buckets' width and merges their marks.
func (s *Series) widen() {
	old := s.buckets
	s.width *= 2
	s.origin = s.first.Truncate(s.width)
	s.buckets = make(map[bucketKey]*Mark, len(old)/2+1)
	for _, k := range slices.SortedFunc(maps.Keys(old), compareBuckets) {
		s.merge(*old[k])
	}
}

// merge adds m (a value or a narrower bucket) into its bucket.
func (s *Series) merge(m Mark) {
	d := m.Start.Sub(s.origin)
	i := int64(d / s.width)
	if d%s.width < 0 {
		i-- // floor, for values before the origin
	}
	k := bucketKey{m.Line, i}
	b := s.buckets[k]
	if b == nil {
		s.buckets[k] = &Mark{Line: m.Line, Start: s.origin.Add(time.Duration(i) * s.width), Width: s.width, Count: m.Count,
			Sum: m.Sum, Min: m.Min, Max: m.Max}
		return
	}
	b.Count += m.Count
	b.Sum += m.Sum
	b.Min, b.Max = min(b.Min, m.Min), max(b.Max, m.Max)
}

func compareBuckets(a, b bucketKey) int {
	return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.index, b.index))
}

// Marks returns the marks by line, then time (values of one time in the order added).
func (s *Series) Marks() []Mark {
	if s.width == 0 {
		out := slices.Clone(s.exact)
		slices.SortStableFunc(out, func(a, b Mark) int { return cmp.Or(cmp.Compare(a.Line, b.Line), a.Start.Compare(b.Start)) })
		return out
	}
	out := make([]Mark, 0, len(s.buckets))
	for _, k := range slices.SortedFunc(maps.Keys(s.buckets), compareBuckets) {
		out = append(out, *s.buckets[k])
	}
	return out
}

// Width is the buckets' width: 0 when each mark is one value.
func (s *Series) Width() time.Duration { return s.width }

// Span returns the times of the first and last values (zero without any).
func (s *Series) Span() (first, last time.Time) { return s.first, s.last }
