package render

import (
	"fmt"
	"io"
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

// us shows microseconds as milliseconds, to the microsecond.
func us(v int64) string {
	return strconv.FormatFloat(float64(v)/1000, 'f', 3, 64)
}

// Write writes the four tables.
func (s *Stats) Write(w io.Writer) error {
	r := s.rows()
	var apiRows [][]string
	for _, a := range r.apis {
		lat := []string{"", "", "", ""}
		if a.P50 != nil {
			lat = []string{us(*a.P50), us(*a.P90), us(*a.P99), us(*a.Max)}
		}
		apiRows = append(apiRows, append([]string{strconv.Itoa(int(a.APIKey)), a.APIName, strconv.Itoa(int(a.APIVersion)),
			strconv.Itoa(a.Requests), strconv.Itoa(a.Responses), strconv.Itoa(a.Unanswered), strconv.FormatInt(a.Bytes, 10)}, lat...))
	}
	var errRows [][]string
	for _, e := range r.errors {
		errRows = append(errRows, []string{strconv.Itoa(int(e.ErrorCode)), e.ErrorName, strconv.Itoa(e.Count), strings.Join(e.APINames, ", ")})
	}
	var connRows [][]string
	for _, c := range r.conns {
		span := c.FirstTime.Format("15:04:05.000") + " - " + c.LastTime.Format("15:04:05.000")
		connRows = append(connRows, []string{strconv.Itoa(c.Stream), c.Client, c.Broker, c.ClientID, c.Software,
			strconv.Itoa(c.Messages), strconv.FormatInt(c.Bytes, 10), span})
	}
	var topicRows [][]string
	for _, tp := range r.topics {
		topicRows = append(topicRows, []string{tp.Topic, strconv.Itoa(tp.ProducedRecords), strconv.FormatInt(tp.ProducedBytes, 10),
			strconv.Itoa(tp.FetchedRecords), strconv.FormatInt(tp.FetchedBytes, 10)})
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
