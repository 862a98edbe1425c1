package render

import (
	"bufio"
	"cmp"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/kdissect/kdissect/codec"
)

// The statistics as JSON lines, for --stats with --format json: one object per row of each
// table, with "kind": "stats" and "table" naming the table (apis, errors, connections,
// topics), and the row's values typed and named as in the message lines. They follow the
// message lines, so that the whole output stays JSON lines.

type apiStatJSON struct {
	Kind       string `json:"kind"`
	Table      string `json:"table"`
	APIKey     int16  `json:"api_key"`
	APIName    string `json:"api_name"`
	APIVersion int16  `json:"api_version"`
	Requests   int    `json:"requests"`
	Responses  int    `json:"responses"`
	Unanswered int    `json:"unanswered"`
	// NoResponse counts the requests the broker does not answer (Produce with acks=0), so
	// that requests = responses + unanswered + no_response when every response is paired.
	NoResponse int   `json:"no_response"`
	Bytes      int64 `json:"bytes"`
	// Latencies over the paired responses, absent when none was paired.
	P50 *int64 `json:"latency_p50_us,omitempty"`
	P90 *int64 `json:"latency_p90_us,omitempty"`
	P99 *int64 `json:"latency_p99_us,omitempty"`
	Max *int64 `json:"latency_max_us,omitempty"`
}

type errStatJSON struct {
	Kind      string   `json:"kind"`
	Table     string   `json:"table"`
	ErrorCode int16    `json:"error_code"`
	ErrorName string   `json:"error_name"`
	Count     int      `json:"count"`
	APINames  []string `json:"api_names"`
}

type connStatJSON struct {
	Kind      string    `json:"kind"`
	Table     string    `json:"table"`
	Stream    int       `json:"stream"`
	Client    string    `json:"client"`
	Broker    string    `json:"broker"`
	ClientID  string    `json:"client_id"`
	Software  string    `json:"software"`
	Messages  int       `json:"messages"`
	Bytes     int64     `json:"bytes"`
	FirstTime time.Time `json:"first_time"`
	LastTime  time.Time `json:"last_time"`
}

type topicStatJSON struct {
	Kind            string `json:"kind"`
	Table           string `json:"table"`
	Topic           string `json:"topic"`
	ProducedRecords int    `json:"produced_records"`
	ProducedBytes   int64  `json:"produced_bytes"`
	FetchedRecords  int    `json:"fetched_records"`
	FetchedBytes    int64  `json:"fetched_bytes"`
}

type sessionStatJSON struct {
	Kind       string `json:"kind"`
	Table      string `json:"table"`
	Stream     int    `json:"stream"`
	SessionID  int32  `json:"session_id"`
	Requests   int    `json:"requests"`
	FirstEpoch int32  `json:"first_epoch"`
	LastEpoch  int32  `json:"last_epoch"`
	Partitions int    `json:"partitions"`
	Added      int    `json:"added"`
	Forgotten  int    `json:"forgotten"`
	Refused    int    `json:"refused"`
	ClosedBy   string `json:"closed_by"`
	// Followed: the session was seen from its opening; Partitions is then its whole set.
	Followed bool `json:"followed"`
}

// statRows are the rows of the tables, in order, typed.
type statRows struct {
	apis     []apiStatJSON
	errors   []errStatJSON
	conns    []connStatJSON
	topics   []topicStatJSON
	sessions []sessionStatJSON
}

// rows makes the rows of the tables, for Write and WriteJSON.
func (s *Stats) rows() statRows {
	var r statRows
	us := func(d time.Duration) *int64 { v := d.Microseconds(); return &v }
	for _, k := range slices.SortedFunc(maps.Keys(s.apis), func(a, b [2]int16) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) {
		a := s.apis[k]
		slices.Sort(a.latencies)
		row := apiStatJSON{Kind: "stats", Table: "apis", APIKey: k[0], APIName: a.name, APIVersion: k[1],
			Requests: a.requests, Responses: a.responses, Unanswered: max(0, a.requests-a.noResponse-a.answered), NoResponse: a.noResponse, Bytes: a.bytes}
		if n := len(a.latencies); n > 0 {
			row.P50, row.P90, row.P99, row.Max = us(percentile(a.latencies, 0.5)), us(percentile(a.latencies, 0.9)),
				us(percentile(a.latencies, 0.99)), us(a.latencies[n-1])
		}
		r.apis = append(r.apis, row)
	}
	for _, c := range slices.Sorted(maps.Keys(s.errors)) {
		e := s.errors[c]
		r.errors = append(r.errors, errStatJSON{Kind: "stats", Table: "errors", ErrorCode: c, ErrorName: codec.ErrorName(c), Count: e.count, APINames: e.apis})
	}
	for _, id := range slices.Sorted(maps.Keys(s.conns)) {
		c := s.conns[id]
		r.conns = append(r.conns, connStatJSON{Kind: "stats", Table: "connections", Stream: id, Client: c.client, Broker: c.server,
			ClientID: c.clientID, Software: c.software, Messages: c.messages, Bytes: c.bytes, FirstTime: c.first.UTC(), LastTime: c.last.UTC()})
	}
	for _, n := range slices.Sorted(maps.Keys(s.topics)) {
		tp := s.topics[n]
		r.topics = append(r.topics, topicStatJSON{Kind: "stats", Table: "topics", Topic: n, ProducedRecords: tp.produced,
			ProducedBytes: tp.producedBytes, FetchedRecords: tp.fetched, FetchedBytes: tp.fetchedBytes})
	}
	for _, k := range slices.SortedFunc(maps.Keys(s.sessions), func(a, b [2]int) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) {
		x := s.sessions[k]
		r.sessions = append(r.sessions, sessionStatJSON{Kind: "stats", Table: "fetch_sessions", Stream: k[0], SessionID: int32(k[1]),
			Requests: x.requests, FirstEpoch: x.firstEpoch, LastEpoch: x.lastEpoch, Partitions: x.partitions, Added: x.added,
			Forgotten: x.forgotten, Refused: x.refused, ClosedBy: x.closed, Followed: x.followed})
	}
	return r
}

// WriteJSON writes the statistics as JSON lines, one per row of the tables Write draws, in the
// same order.
func (s *Stats) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(&inertJSON{w: bw})
	enc.SetEscapeHTML(false)
	r := s.rows()
	var lines []any
	for _, x := range r.apis {
		lines = append(lines, x)
	}
	for _, x := range r.errors {
		lines = append(lines, x)
	}
	for _, x := range r.conns {
		lines = append(lines, x)
	}
	for _, x := range r.topics {
		lines = append(lines, x)
	}
	for _, x := range r.sessions {
		lines = append(lines, x)
	}
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return bw.Flush()
}
