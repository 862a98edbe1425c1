package render

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kdissect/kdissect/codec"
)

// Stats gathers counts over a whole capture and writes them as tables: per API and version,
// per error code, per connection, per topic. Feed it every entry with Add (entries need Facts).
type Stats struct {
	apis   map[[2]int16]*apiStat
	errors map[int16]*errStat
	conns  map[int]*connStat
	topics map[string]*topicStat
}

type apiStat struct {
	name                          string
	requests, responses, answered int
	noResponse                    int
	bytes                         int64
	latencies                     []time.Duration
}

type errStat struct {
	count int
	apis  []string
}

type connStat struct {
	stream             int
	client, server     string
	clientID, software string
	messages           int
	bytes              int64
	first, last        time.Time
}

type topicStat struct {
	produced, fetched           int
	producedBytes, fetchedBytes int64
}

// NewStats returns an empty collector.
func NewStats() *Stats {
	return &Stats{apis: map[[2]int16]*apiStat{}, errors: map[int16]*errStat{}, conns: map[int]*connStat{}, topics: map[string]*topicStat{}}
}

// Add counts one entry.
func (s *Stats) Add(e *Entry) {
	m := e.Msg
	if m == nil {
		return
	}
	c := s.conns[e.Stream]
	if c == nil {
		c = &connStat{stream: e.Stream, first: e.Time}
		if e.Request {
			c.client, c.server = e.Src, e.Dst
		} else {
			c.client, c.server = e.Dst, e.Src
		}
		s.conns[e.Stream] = c
	}
	c.messages++
	c.bytes += int64(m.Size)
	if e.Time.Before(c.first) {
		c.first = e.Time
	}
	if e.Time.After(c.last) {
		c.last = e.Time
	}
	if m.ClientID != nil && c.clientID == "" {
		c.clientID = *m.ClientID
	}
	if e.Facts != nil && e.Facts.Software != "" {
		c.software = e.Facts.Software
	}
	if m.APIKey < 0 {
		return // SASL tokens, unknown responses
	}
	a := s.apis[[2]int16{m.APIKey, m.Version}]
	if a == nil {
		a = &apiStat{name: m.APIName}
		s.apis[[2]int16{m.APIKey, m.Version}] = a
	}
	a.bytes += int64(m.Size)
	if !m.Response {
		a.requests++
		if e.NoResponse {
			a.noResponse++
		}
	} else {
		a.responses++
		if e.RequestFrame > 0 {
			a.answered++
			a.latencies = append(a.latencies, e.Latency)
		}
	}
	if e.Facts == nil {
		return
	}
	for _, code := range e.Facts.Errors {
		es := s.errors[code]
		if es == nil {
			es = &errStat{}
			s.errors[code] = es
		}
		es.count++
		if !slices.Contains(es.apis, m.APIName) {
			es.apis = append(es.apis, m.APIName)
		}
	}
	for _, r := range e.Facts.RecordSets {
		t := s.topics[r.Key()]
		if t == nil {
			t = &topicStat{}
			s.topics[r.Key()] = t
		}
		switch {
		case !codec.CarriesRecords(m.APIKey, m.Response):
		case m.Response:
			t.fetched += r.Records
			t.fetchedBytes += int64(r.Bytes)
		default:
			t.produced += r.Records
			t.producedBytes += int64(r.Bytes)
		}
	}
}

// percentile is the smallest latency at or above fraction p of the sorted latencies.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64)
}

// Write writes the four tables.
func (s *Stats) Write(w io.Writer) error {
	var apiRows [][]string
	apiKeys := slices.SortedFunc(maps.Keys(s.apis), func(a, b [2]int16) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	for _, k := range apiKeys {
		a := s.apis[k]
		slices.Sort(a.latencies)
		lat := []string{"", "", "", ""}
		if n := len(a.latencies); n > 0 {
			lat = []string{ms(percentile(a.latencies, 0.5)), ms(percentile(a.latencies, 0.9)), ms(percentile(a.latencies, 0.99)), ms(a.latencies[n-1])}
		}
		unanswered := max(0, a.requests-a.noResponse-a.answered)
		apiRows = append(apiRows, append([]string{strconv.Itoa(int(k[0])), a.name, strconv.Itoa(int(k[1])), strconv.Itoa(a.requests),
			strconv.Itoa(a.responses), strconv.Itoa(unanswered), strconv.FormatInt(a.bytes, 10)}, lat...))
	}
	var errRows [][]string
	for _, c := range slices.Sorted(maps.Keys(s.errors)) {
		e := s.errors[c]
		errRows = append(errRows, []string{strconv.Itoa(int(c)), codec.ErrorName(c), strconv.Itoa(e.count), strings.Join(e.apis, ", ")})
	}
	var connRows [][]string
	for _, id := range slices.Sorted(maps.Keys(s.conns)) {
		c := s.conns[id]
		span := c.first.UTC().Format("15:04:05.000") + " - " + c.last.UTC().Format("15:04:05.000")
		connRows = append(connRows, []string{strconv.Itoa(id), c.client, c.server, c.clientID, c.software,
			strconv.Itoa(c.messages), strconv.FormatInt(c.bytes, 10), span})
	}
	var topicRows [][]string
	for _, n := range slices.Sorted(maps.Keys(s.topics)) {
		tp := s.topics[n]
		topicRows = append(topicRows, []string{n, strconv.Itoa(tp.produced), strconv.FormatInt(tp.producedBytes, 10),
			strconv.Itoa(tp.fetched), strconv.FormatInt(tp.fetchedBytes, 10)})
	}
	tables := []struct {
		title   string
		numeric bool
		header  []string
		rows    [][]string
	}{
		{"Messages per API and version (latency in ms, over the paired responses)", true,
			[]string{"key", "API", "version", "requests", "responses", "unanswered", "bytes", "p50", "p90", "p99", "max"}, apiRows},
		{"\nError codes in responses", true, []string{"code", "name", "count", "APIs"}, errRows},
		{"\nConnections", true, []string{"stream", "client", "broker", "client id", "software", "messages", "bytes", "first - last (UTC)"}, connRows},
		{"\nRecords per topic (bytes are the records fields on the wire)", false,
			[]string{"topic", "produced records", "produced bytes", "fetched records", "fetched bytes"}, topicRows},
	}
	for _, tb := range tables {
		fmt.Fprintln(w, tb.title)
		t := newTable(w, len(tb.header), tb.numeric)
		t.Header(tb.header)
		for _, r := range tb.rows {
			if err := t.Append(r); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return nil
}
