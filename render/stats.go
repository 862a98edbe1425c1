package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// Stats gathers counts over a whole capture and writes them as tables: per API and version,
// per error code, per connection, per topic. Feed it every entry with Add (entries need Facts).
type Stats struct {
	apis   map[[2]int16]*apiStat
	errors map[int16]*errStat
	conns  map[int]*connStat
	topics map[string]*topicStat
	// sessions are the fetch sessions, by stream and session id.
	sessions map[[2]int]*sessionStat
}

// sessionStat is one fetch session (KIP-227) as its connection followed it.
type sessionStat struct {
	requests              int
	firstEpoch, lastEpoch int32
	partitions            int
	added, forgotten      int
	refused               int
	closed                string // "", "client" or "broker"
	followed              bool   // seen from its opening, so partitions is the whole set
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
	return &Stats{apis: map[[2]int16]*apiStat{}, errors: map[int16]*errStat{}, conns: map[int]*connStat{}, topics: map[string]*topicStat{},
		sessions: map[[2]int]*sessionStat{}}
}

// Add counts one entry.
func (s *Stats) Add(e *model.Entry) {
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
	if e.Session != nil {
		s.session(e.Stream, e.Session)
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

// session counts a fetch-session step: requests by their epochs and partitions, and the
// answers that open, refuse or close a session. A request that opens one counts when its
// response names the session.
func (s *Stats) session(stream int, st *codec.SessionStep) {
	row := func(id int32) *sessionStat {
		k := [2]int{stream, int(id)}
		r := s.sessions[k]
		if r == nil {
			r = &sessionStat{firstEpoch: -1, lastEpoch: -1}
			s.sessions[k] = r
		}
		return r
	}
	epoch := func(r *sessionStat, e int32) {
		if r.firstEpoch < 0 {
			r.firstEpoch = e
		}
		r.lastEpoch = max(r.lastEpoch, e)
	}
	switch {
	case st.Response && st.ErrorCode != 0:
		r := row(st.ID)
		r.refused++
		if st.ErrorCode == codec.ErrFetchSessionIDNotFound && r.closed == "" {
			r.closed = "broker"
		}
	case st.Response && st.Action == codec.SessionOpen && st.ID != 0:
		r := row(st.ID)
		r.requests++
		epoch(r, 0)
		r.partitions, r.added, r.followed = len(st.Partitions), r.added+len(st.Added), true
	case st.Response:
	case st.Action == codec.SessionIncremental:
		r := row(st.ID)
		r.requests++
		epoch(r, st.Epoch)
		if !st.Closed {
			r.partitions = len(st.Partitions)
		}
		r.added += len(st.Added)
		r.forgotten += len(st.Forgotten)
	case st.Action == codec.SessionClose:
		r := row(st.ID)
		r.requests++
		if r.closed == "" {
			r.closed = "client"
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
			strconv.Itoa(a.Requests), strconv.Itoa(a.Responses), strconv.Itoa(a.Unanswered), strconv.Itoa(a.NoResponse), strconv.FormatInt(a.Bytes, 10)}, lat...))
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
	var sessionRows [][]string
	for _, x := range r.sessions {
		epochs := ""
		if x.FirstEpoch >= 0 {
			epochs = fmt.Sprintf("%d - %d", x.FirstEpoch, x.LastEpoch)
		}
		partitions := "?" // the session opened before the capture, or on another connection
		if x.Followed {
			partitions = strconv.Itoa(x.Partitions)
		}
		sessionRows = append(sessionRows, []string{strconv.Itoa(x.Stream), strconv.Itoa(int(x.SessionID)), strconv.Itoa(x.Requests), epochs,
			partitions, strconv.Itoa(x.Added), strconv.Itoa(x.Forgotten), strconv.Itoa(x.Refused), x.ClosedBy})
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
		// optional: the table is left out when it has no row.
		optional bool
	}{
		{"Messages per API and version (latency in ms, over the paired responses)", true,
			[]string{"key", "API", "version", "requests", "responses", "unanswered", "no response", "bytes", "p50", "p90", "p99", "max"}, apiRows, false},
		{"\nError codes in responses", true, []string{"code", "name", "count", "APIs"}, errRows, false},
		{"\nConnections", true, []string{"stream", "client", "broker", "client id", "software", "messages", "bytes", "first - last (UTC)"}, connRows, false},
		{"\nRecords per topic (bytes are the records fields on the wire)", false,
			[]string{"topic", "produced records", "produced bytes", "fetched records", "fetched bytes"}, topicRows, false},
		{"\nFetch sessions (KIP-227; partitions: the session's set after its last request, ? when it opened before the capture or elsewhere)", true,
			[]string{"stream", "session", "requests", "epochs", "partitions", "added", "forgotten", "refused", "closed by"}, sessionRows, true},
	}
	for _, tb := range tables {
		if tb.optional && len(tb.rows) == 0 {
			continue // most captures have no fetch session
		}
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
