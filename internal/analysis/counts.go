package analysis

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// APIs counts messages per API and version, with the latency of the paired responses: the
// table "apis".
type APIs struct {
	apis map[[2]int16]*apiCount
}

type apiCount struct {
	name                          string
	requests, responses, answered int
	noResponse                    int
	bytes                         int64
	latencies                     []time.Duration
}

// NewAPIs returns the analysis of the table "apis".
func NewAPIs() *APIs { return &APIs{apis: map[[2]int16]*apiCount{}} }

// Add counts one message.
func (s *APIs) Add(e *model.Entry) {
	m := e.Msg
	if m == nil || m.APIKey < 0 {
		return // SASL tokens, unknown responses
	}
	k := [2]int16{m.APIKey, m.Version}
	a := s.apis[k]
	if a == nil {
		a = &apiCount{name: m.APIName}
		s.apis[k] = a
	}
	a.bytes += int64(m.Size)
	switch {
	case !m.Response:
		a.requests++
		if e.NoResponse {
			a.noResponse++
		}
	default:
		a.responses++
		if e.RequestFrame > 0 {
			a.answered++
			a.latencies = append(a.latencies, e.Latency)
		}
	}
}

// Tables returns the table "apis": one row per API and version, by key and version.
func (s *APIs) Tables() []model.Table {
	t := model.Table{Name: "apis", Title: "Messages per API and version (latency in ms, over the paired responses)",
		Columns: []model.Column{
			{Name: "api_key", Head: "key", Kind: model.Int}, {Name: "api_name", Head: "API", Kind: model.String},
			{Name: "api_version", Head: "version", Kind: model.Int}, {Name: "requests", Kind: model.Int},
			{Name: "responses", Kind: model.Int}, {Name: "unanswered", Kind: model.Int},
			{Name: "no_response", Head: "no response", Kind: model.Int}, {Name: "bytes", Kind: model.Int},
			{Name: "latency_p50_us", Head: "p50", Kind: model.Duration, Optional: true},
			{Name: "latency_p90_us", Head: "p90", Kind: model.Duration, Optional: true},
			{Name: "latency_p99_us", Head: "p99", Kind: model.Duration, Optional: true},
			{Name: "latency_max_us", Head: "max", Kind: model.Duration, Optional: true},
		}}
	for _, k := range slices.SortedFunc(maps.Keys(s.apis), func(a, b [2]int16) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) {
		a := s.apis[k]
		slices.Sort(a.latencies)
		// Produce with acks=0 is never answered, so that requests = responses + unanswered +
		// no_response when every response is paired.
		unanswered := max(0, a.requests-a.noResponse-a.answered)
		row := []any{int64(k[0]), a.name, int64(k[1]), int64(a.requests), int64(a.responses), int64(unanswered),
			int64(a.noResponse), a.bytes, nil, nil, nil, nil}
		if n := len(a.latencies); n > 0 {
			row[8], row[9], row[10], row[11] = Percentile(a.latencies, 0.5), Percentile(a.latencies, 0.9),
				Percentile(a.latencies, 0.99), a.latencies[n-1]
		}
		t.AddRow(row...)
	}
	return []model.Table{t}
}

// Percentile is the smallest of the sorted durations at or above fraction p of them (the
// nearest-rank percentile); 0 for none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Errors counts the error codes of responses: the table "errors".
type Errors struct {
	errors map[int16]*errCount
}

type errCount struct {
	count int
	apis  []string
}

// NewErrors returns the analysis of the table "errors".
func NewErrors() *Errors { return &Errors{errors: map[int16]*errCount{}} }

// Add counts the error codes of one message.
func (s *Errors) Add(e *model.Entry) {
	if e.Msg == nil || e.Msg.APIKey < 0 || e.Facts == nil {
		return
	}
	for _, code := range e.Facts.Errors {
		c := s.errors[code]
		if c == nil {
			c = &errCount{}
			s.errors[code] = c
		}
		c.count++
		if !slices.Contains(c.apis, e.Msg.APIName) {
			c.apis = append(c.apis, e.Msg.APIName)
		}
	}
}

// Tables returns the table "errors": one row per error code, by code.
func (s *Errors) Tables() []model.Table {
	t := model.Table{Name: "errors", Title: "Error codes in responses", Columns: []model.Column{
		{Name: "error_code", Head: "code", Kind: model.Int}, {Name: "error_name", Head: "name", Kind: model.String},
		{Name: "count", Kind: model.Int}, {Name: "api_names", Head: "APIs", Kind: model.Strings},
	}}
	for _, code := range slices.Sorted(maps.Keys(s.errors)) {
		c := s.errors[code]
		t.AddRow(int64(code), codec.ErrorName(code), int64(c.count), c.apis)
	}
	return []model.Table{t}
}

// Connections counts messages and bytes per connection: the table "connections".
type Connections struct {
	conns map[int]*connCount
}

type connCount struct {
	client, server     string
	clientID, software string
	messages           int
	bytes              int64
	first, last        time.Time
}

// NewConnections returns the analysis of the table "connections".
func NewConnections() *Connections { return &Connections{conns: map[int]*connCount{}} }

// Add counts one message (SASL tokens too) on its connection.
func (s *Connections) Add(e *model.Entry) {
	m := e.Msg
	if m == nil {
		return
	}
	c := s.conns[e.Stream]
	if c == nil {
		c = &connCount{first: e.Time, client: e.Src, server: e.Dst}
		if !e.Request {
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
}

// Tables returns the table "connections": one row per connection, by stream.
func (s *Connections) Tables() []model.Table {
	t := model.Table{Name: "connections", Title: "Connections", Columns: []model.Column{
		{Name: "stream", Kind: model.Int}, {Name: "client", Kind: model.String}, {Name: "broker", Kind: model.String},
		{Name: "client_id", Head: "client id", Kind: model.String}, {Name: "software", Kind: model.String},
		{Name: "messages", Kind: model.Int}, {Name: "bytes", Kind: model.Int},
		{Name: "first_time", Kind: model.Time, Only: model.JSON}, {Name: "last_time", Kind: model.Time, Only: model.JSON},
		{Name: "span", Head: "first - last (UTC)", Kind: model.String, Only: model.Text},
	}}
	for _, id := range slices.Sorted(maps.Keys(s.conns)) {
		c := s.conns[id]
		span := c.first.Format("15:04:05.000") + " - " + c.last.Format("15:04:05.000")
		t.AddRow(int64(id), c.client, c.server, c.clientID, c.software, int64(c.messages), c.bytes, c.first.UTC(), c.last.UTC(), span)
	}
	return []model.Table{t}
}

// Topics counts the records produced and fetched per topic: the table "topics".
type Topics struct {
	topics map[string]*topicCount
}

type topicCount struct {
	produced, fetched           int
	producedBytes, fetchedBytes int64
}

// NewTopics returns the analysis of the table "topics".
func NewTopics() *Topics { return &Topics{topics: map[string]*topicCount{}} }

// Add counts the record sets of one message.
func (s *Topics) Add(e *model.Entry) {
	m := e.Msg
	if m == nil || m.APIKey < 0 || e.Facts == nil {
		return
	}
	for _, r := range e.Facts.RecordSets {
		t := s.topics[r.Key()]
		if t == nil {
			t = &topicCount{}
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

// Tables returns the table "topics": one row per topic, by name.
func (s *Topics) Tables() []model.Table {
	t := model.Table{Name: "topics", Title: "Records per topic (bytes are the records fields on the wire)", Columns: []model.Column{
		{Name: "topic", Kind: model.String},
		{Name: "produced_records", Head: "produced records", Kind: model.Int}, {Name: "produced_bytes", Head: "produced bytes", Kind: model.Int},
		{Name: "fetched_records", Head: "fetched records", Kind: model.Int}, {Name: "fetched_bytes", Head: "fetched bytes", Kind: model.Int},
	}}
	for _, n := range slices.Sorted(maps.Keys(s.topics)) {
		c := s.topics[n]
		t.AddRow(n, int64(c.produced), c.producedBytes, int64(c.fetched), c.fetchedBytes)
	}
	return []model.Table{t}
}
