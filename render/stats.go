package render

import (
	"fmt"
	"io"
	"slices"
	"sort"
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
	if m.APIKey == 18 && !m.Response {
		name, version := codec.Find(m.Fields, "ClientSoftwareName"), codec.Find(m.Fields, "ClientSoftwareVersion")
		if name != nil && version != nil {
			c.software = fmt.Sprintf("%v %v", name.Value, version.Value)
		}
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
		case !m.Response && m.APIKey == 0: // Produce
			t.produced += r.Records
			t.producedBytes += int64(r.Bytes)
		case m.Response && (m.APIKey == 1 || m.APIKey == 78): // Fetch, ShareFetch
			t.fetched += r.Records
			t.fetchedBytes += int64(r.Bytes)
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
	keys := make([][2]int16, 0, len(s.apis))
	for k := range s.apis {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	fmt.Fprintln(w, "Messages per API and version (latency in ms, over the paired responses)")
	t := newTable(w, 11, true)
	t.Header("key", "API", "version", "requests", "responses", "unanswered", "bytes", "p50", "p90", "p99", "max")
	for _, k := range keys {
		a := s.apis[k]
		slices.Sort(a.latencies)
		lat := []string{"", "", "", ""}
		if n := len(a.latencies); n > 0 {
			lat = []string{ms(percentile(a.latencies, 0.5)), ms(percentile(a.latencies, 0.9)), ms(percentile(a.latencies, 0.99)), ms(a.latencies[n-1])}
		}
		unanswered := max(0, a.requests-a.noResponse-a.answered)
		row := append([]string{strconv.Itoa(int(k[0])), a.name, strconv.Itoa(int(k[1])), strconv.Itoa(a.requests),
			strconv.Itoa(a.responses), strconv.Itoa(unanswered), strconv.FormatInt(a.bytes, 10)}, lat...)
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nError codes in responses")
	codes := make([]int16, 0, len(s.errors))
	for c := range s.errors {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	t = newTable(w, 4, true)
	t.Header("code", "name", "count", "APIs")
	for _, c := range codes {
		e := s.errors[c]
		if err := t.Append([]string{strconv.Itoa(int(c)), codec.ErrorName(c), strconv.Itoa(e.count), strings.Join(e.apis, ", ")}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nConnections")
	streams := make([]int, 0, len(s.conns))
	for id := range s.conns {
		streams = append(streams, id)
	}
	slices.Sort(streams)
	t = newTable(w, 8, true)
	t.Header("stream", "client", "broker", "client id", "software", "messages", "bytes", "first - last (UTC)")
	for _, id := range streams {
		c := s.conns[id]
		span := c.first.UTC().Format("15:04:05.000") + " - " + c.last.UTC().Format("15:04:05.000")
		if err := t.Append([]string{strconv.Itoa(id), c.client, c.server, c.clientID, c.software,
			strconv.Itoa(c.messages), strconv.FormatInt(c.bytes, 10), span}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nRecords per topic (bytes are the records fields on the wire)")
	names := make([]string, 0, len(s.topics))
	for n := range s.topics {
		names = append(names, n)
	}
	slices.Sort(names)
	t = newTable(w, 5, false)
	t.Header("topic", "produced records", "produced bytes", "fetched records", "fetched bytes")
	for _, n := range names {
		tp := s.topics[n]
		if err := t.Append([]string{n, strconv.Itoa(tp.produced), strconv.FormatInt(tp.producedBytes, 10),
			strconv.Itoa(tp.fetched), strconv.FormatInt(tp.fetchedBytes, 10)}); err != nil {
			return err
		}
	}
	return t.Render()
}
