package analysis

import (
	"maps"
	"slices"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// Rates measures how fast records are produced and fetched per topic: over the capture's time
// span (from the first message shown to the last) and in the busiest second: the table
// "rates". Records and bytes are those of the table "topics": every record of the record
// sets, and the size of the records fields on the wire.
type Rates struct {
	first, last time.Time
	topics      map[string]*topicRate
}

// Measures of a topic, in this order.
const (
	producedRecords = iota
	producedBytes
	fetchedRecords
	fetchedBytes
	measures
)

type topicRate struct {
	total [measures]int64
	// seconds holds the measures in each second (Unix time) that has some.
	seconds map[int64]*[measures]int64
}

// NewRates returns the analysis of the table "rates".
func NewRates() *Rates { return &Rates{topics: map[string]*topicRate{}} }

// Add counts the records a message carries, in its second.
func (r *Rates) Add(e *model.Entry) {
	if e.Msg == nil {
		return
	}
	if r.first.IsZero() || e.Time.Before(r.first) {
		r.first = e.Time
	}
	if e.Time.After(r.last) {
		r.last = e.Time
	}
	m := e.Msg
	if e.Facts == nil || m.APIKey < 0 || !codec.CarriesRecords(m.APIKey, m.Response) {
		return
	}
	sec := e.Time.Unix()
	for _, rs := range e.Facts.RecordSets {
		t := r.topics[rs.Key()]
		if t == nil {
			t = &topicRate{seconds: map[int64]*[measures]int64{}}
			r.topics[rs.Key()] = t
		}
		s := t.seconds[sec]
		if s == nil {
			s = new([measures]int64)
			t.seconds[sec] = s
		}
		i := producedRecords
		if m.Response {
			i = fetchedRecords
		}
		for j, v := range []int64{int64(rs.Records), int64(rs.Bytes)} {
			t.total[i+j] += v
			s[i+j] += v
		}
	}
}

// Tables returns the table "rates": one row per topic, by name. The rates over the span are
// null when the span is shorter than a millisecond.
func (r *Rates) Tables() []model.Table {
	t := model.Table{Name: "rates", HideEmpty: true,
		Title: "Records per topic and second: over the capture's span (first to last message) and in the busiest second",
		Columns: []model.Column{
			{Name: "topic", Kind: model.String},
			{Name: "produced_records_per_s", Head: "produced rec/s", Kind: model.Float},
			{Name: "produced_bytes_per_s", Head: "produced B/s", Kind: model.Float},
			{Name: "fetched_records_per_s", Head: "fetched rec/s", Kind: model.Float},
			{Name: "fetched_bytes_per_s", Head: "fetched B/s", Kind: model.Float},
			{Name: "peak_produced_records", Head: "peak produced rec", Kind: model.Int},
			{Name: "peak_produced_bytes", Head: "peak produced B", Kind: model.Int},
			{Name: "peak_fetched_records", Head: "peak fetched rec", Kind: model.Int},
			{Name: "peak_fetched_bytes", Head: "peak fetched B", Kind: model.Int},
		}}
	span := r.last.Sub(r.first).Seconds()
	for _, name := range slices.Sorted(maps.Keys(r.topics)) {
		tr := r.topics[name]
		row := make([]any, 1, 1+2*measures)
		row[0] = name
		for _, v := range tr.total {
			if span < 0.001 {
				row = append(row, nil)
				continue
			}
			row = append(row, float64(v)/span)
		}
		var peak [measures]int64
		for _, s := range tr.seconds {
			for i, v := range s {
				peak[i] = max(peak[i], v)
			}
		}
		for _, v := range peak {
			row = append(row, v)
		}
		t.AddRow(row...)
	}
	return []model.Table{t}
}

// Throughput returns the bytes carried per topic over time, a line per topic, in buckets of a
// second or wider: those Produce requests carried (produced) and those Fetch responses did
// (fetched). A bucket's Sum is its bytes.
func (r *Rates) Throughput() (produced, fetched *Series) {
	produced, fetched = NewBucketed(SeriesLimit, time.Second), NewBucketed(SeriesLimit, time.Second)
	for _, name := range slices.Sorted(maps.Keys(r.topics)) {
		t := r.topics[name]
		for _, sec := range slices.Sorted(maps.Keys(t.seconds)) {
			s, at := t.seconds[sec], time.Unix(sec, 0)
			if s[producedRecords] > 0 || s[producedBytes] > 0 {
				produced.Add(name, at, float64(s[producedBytes]))
			}
			if s[fetchedRecords] > 0 || s[fetchedBytes] > 0 {
				fetched.Add(name, at, float64(s[fetchedBytes]))
			}
		}
	}
	return produced, fetched
}

// Span returns the times of the first and last messages shown (zero without any).
func (r *Rates) Span() (first, last time.Time) { return r.first, r.last }
