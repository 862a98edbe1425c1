package analysis

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// Latency measures how long brokers take to answer, per API and broker, per API and topic, and
// per API and client id: the tables "latency" and "slowest". Some requests wait by design, and
// their latency says nothing of the broker's speed; they are counted apart (waits) and left
// out of the percentiles and of the slowest:
//
//   - a Fetch answered with no record after at least nine tenths of its MaxWaitMs: the broker
//     held it for data that did not come;
//   - a JoinGroup answered without error: the broker holds every member's JoinGroup until
//     the group's rebalance completes;
//   - a SyncGroup of a follower (one that sends no assignment): it waits for the leader's.
type Latency struct {
	groups map[latencyKey]*latencyGroup
	// asked holds what requests awaiting their response said, by stream and correlation id.
	asked map[[2]int]asked
	// clientIDs are the client ids of each stream, for responses whose request was not shown.
	clientIDs map[int]string
	slowest   []slowPair
	// windows holds, per API and broker, the answers of each LatencyWindow (Windows).
	windows map[windowKey]*LatencyWindow
	// answers and waits are the latencies over time, per broker (Series).
	answers, waits *Series
}

// windowKey is an API, a broker, and the start of a LatencyWindow.
type windowKey struct {
	api    int16
	broker string
	start  time.Time
}

// latencyKey is one row of the table: an API, and a broker, topic or client id.
type latencyKey struct {
	api  int16
	by   latencyBy
	name string
}

type latencyBy uint8

const (
	byBroker latencyBy = iota
	byTopic
	byClient
)

var latencyByNames = [...]string{byBroker: "broker", byTopic: "topic", byClient: "client_id"}

type latencyGroup struct {
	api          string
	count, waits int
	latencies    []time.Duration // of the answers that are not waits
}

// asked is what a request said that its response's latency depends on.
type asked struct {
	clientID string
	maxWait  time.Duration // Fetch's MaxWaitMs; 0 unknown
	follower bool          // a SyncGroup without assignments
}

// slowPair is one of the slowest pairs.
type slowPair struct {
	frame, requestFrame, stream int
	api, broker, clientID       string
	topics                      []string
	latency                     time.Duration
}

// slowestKept is how many pairs the table "slowest" lists.
const slowestKept = 10

// NewLatency returns the analysis of the tables "latency" and "slowest".
func NewLatency() *Latency {
	return &Latency{groups: map[latencyKey]*latencyGroup{}, asked: map[[2]int]asked{}, clientIDs: map[int]string{},
		windows: map[windowKey]*LatencyWindow{}, answers: NewSeries(SeriesLimit), waits: NewSeries(SeriesLimit)}
}

// Reads names the request fields that tell a wait: Fetch's MaxWaitMs, and SyncGroup's
// assignments, which a shallow decode keeps for their MemberId.
func (l *Latency) Reads() []Read {
	return []Read{{APIKey: codec.KeyFetch, Fields: []string{"MaxWaitMs"}}, {APIKey: codec.KeySyncGroup, Fields: []string{"MemberId"}}}
}

// Add remembers what a request asks, and measures a response paired with its request.
func (l *Latency) Add(e *model.Entry) {
	m := e.Msg
	if m == nil || m.APIKey < 0 {
		return
	}
	k := [2]int{e.Stream, int(m.CorrelationID)}
	if !m.Response {
		a := asked{}
		if m.ClientID != nil {
			a.clientID = *m.ClientID
			l.clientIDs[e.Stream] = a.clientID
		}
		switch m.APIKey {
		case codec.KeyFetch:
			if v, ok := bodyField(m, "MaxWaitMs").(int64); ok && v > 0 {
				a.maxWait = time.Duration(v) * time.Millisecond
			}
		case codec.KeySyncGroup:
			a.follower = bodyField(m, "Assignments") == int64(0)
		}
		if !e.NoResponse {
			l.asked[k] = a
		}
		return
	}
	if e.RequestFrame == 0 {
		return // its request was not captured: no latency
	}
	a, seen := l.asked[k]
	delete(l.asked, k)
	if !seen {
		a.clientID = l.clientIDs[e.Stream]
	}
	wait := waits(e, a)
	topics := entryTopics(e)
	keys := []latencyKey{{m.APIKey, byBroker, e.Src}, {m.APIKey, byClient, a.clientID}}
	for _, t := range topics {
		keys = append(keys, latencyKey{m.APIKey, byTopic, t})
	}
	for _, key := range keys {
		g := l.groups[key]
		if g == nil {
			g = &latencyGroup{api: m.APIName}
			l.groups[key] = g
		}
		g.count++
		if wait {
			g.waits++
		} else {
			g.latencies = append(g.latencies, e.Latency)
		}
	}
	ms := float64(e.Latency) / float64(time.Millisecond)
	if wait {
		l.waits.Add(e.Src, e.Time, ms)
	} else {
		l.answers.Add(e.Src, e.Time, ms)
		l.window(e)
		l.slow(slowPair{frame: e.Frame, requestFrame: e.RequestFrame, stream: e.Stream, api: m.APIName, broker: e.Src,
			clientID: a.clientID, topics: topics, latency: e.Latency})
	}
}

// waits reports whether a response answers a request that waits by design (see Latency).
func waits(e *model.Entry, a asked) bool {
	switch e.Msg.APIKey {
	case codec.KeyFetch:
		return a.maxWait > 0 && records(e) == 0 && e.Latency >= a.maxWait*9/10
	case codec.KeyJoinGroup:
		return e.Facts != nil && len(e.Facts.Errors) == 0
	case codec.KeySyncGroup:
		return a.follower
	}
	return false
}

// slow keeps p if it is among the slowest pairs: by latency, the first shown first.
func (l *Latency) slow(p slowPair) {
	i, _ := slices.BinarySearchFunc(l.slowest, p, func(a, b slowPair) int {
		return cmp.Or(cmp.Compare(b.latency, a.latency), cmp.Compare(a.frame, b.frame))
	})
	if i >= slowestKept {
		return
	}
	l.slowest = slices.Insert(l.slowest, i, p)
	if len(l.slowest) > slowestKept {
		l.slowest = l.slowest[:slowestKept]
	}
}

// Tables returns the tables "latency" (by API key, then broker, topic and client id rows,
// each by name) and "slowest" (slowest first).
func (l *Latency) Tables() []model.Table {
	t := model.Table{Name: "latency", HideEmpty: true,
		Title: "Latency per API and broker, topic or client id (ms; waits: requests that wait by design, left out of the percentiles)",
		Columns: []model.Column{
			{Name: "api_key", Kind: model.Int, Only: model.JSON}, {Name: "api_name", Head: "API", Kind: model.String},
			{Name: "by", Kind: model.String}, {Name: "name", Kind: model.String},
			{Name: "count", Kind: model.Int}, {Name: "waits", Kind: model.Int},
			{Name: "latency_p50_us", Head: "p50", Kind: model.Duration}, {Name: "latency_p90_us", Head: "p90", Kind: model.Duration},
			{Name: "latency_p99_us", Head: "p99", Kind: model.Duration}, {Name: "latency_max_us", Head: "max", Kind: model.Duration},
		}}
	for _, k := range slices.SortedFunc(maps.Keys(l.groups), func(a, b latencyKey) int {
		return cmp.Or(cmp.Compare(a.api, b.api), cmp.Compare(a.by, b.by), cmp.Compare(a.name, b.name))
	}) {
		g := l.groups[k]
		row := []any{int64(k.api), g.api, latencyByNames[k.by], k.name, int64(g.count), int64(g.waits), nil, nil, nil, nil}
		if n := len(g.latencies); n > 0 {
			slices.Sort(g.latencies)
			row[6], row[7], row[8], row[9] = Percentile(g.latencies, 0.5), Percentile(g.latencies, 0.9),
				Percentile(g.latencies, 0.99), g.latencies[n-1]
		}
		t.AddRow(row...)
	}
	s := model.Table{Name: "slowest", HideEmpty: true, Title: "The slowest answers (ms), waits left out",
		Columns: []model.Column{
			{Name: "frame", Kind: model.Int}, {Name: "request_frame", Head: "request", Kind: model.Int},
			{Name: "stream", Kind: model.Int}, {Name: "api_name", Head: "API", Kind: model.String},
			{Name: "broker", Kind: model.String}, {Name: "client_id", Head: "client id", Kind: model.String},
			{Name: "topics", Kind: model.Strings}, {Name: "latency_us", Head: "latency", Kind: model.Duration},
		}}
	for _, p := range l.slowest {
		s.AddRow(int64(p.frame), int64(p.requestFrame), int64(p.stream), p.api, p.broker, p.clientID, p.topics, p.latency)
	}
	return []model.Table{t, s}
}

// bodyField is the value of the top-level body field of m named name (an array's count), or
// nil when m has none.
func bodyField(m *codec.Message, name string) any {
	if m.HeaderFields > len(m.Fields) {
		return nil
	}
	for _, n := range m.Fields[m.HeaderFields:] {
		if n.Name == name {
			return n.Value
		}
	}
	return nil
}

// entryTopics are the topics a message names: their names, or the ids of those it names by
// id only.
func entryTopics(e *model.Entry) []string {
	if e.Facts == nil {
		return nil
	}
	if len(e.Facts.Topics) > 0 {
		return slices.Clone(e.Facts.Topics)
	}
	var ts []string
	for _, id := range e.Facts.TopicIDs {
		ts = append(ts, id.String())
	}
	return ts
}

// records counts the records a message carries.
func records(e *model.Entry) int {
	n := 0
	if e.Facts != nil {
		for _, r := range e.Facts.RecordSets {
			n += r.Records
		}
	}
	return n
}

// LatencyWindow is how long the brokers took to answer, per API and broker, over a time
// window (Latency.Windows), waits left out.
type LatencyWindow struct {
	APIKey     int16
	API        string
	Broker     string
	Start      time.Time
	Count      int
	Total, Max time.Duration
	// Slowest is the answer that took Max.
	Slowest FrameRef
}

// LatencyWindowLength is how long a LatencyWindow lasts.
const LatencyWindowLength = 10 * time.Second

// window counts response e in its window.
func (l *Latency) window(e *model.Entry) {
	k := windowKey{e.Msg.APIKey, e.Src, e.Time.Truncate(LatencyWindowLength)}
	w := l.windows[k]
	if w == nil {
		w = &LatencyWindow{APIKey: k.api, API: e.Msg.APIName, Broker: k.broker, Start: k.start}
		l.windows[k] = w
	}
	w.Count++
	w.Total += e.Latency
	if w.Count == 1 || e.Latency > w.Max {
		w.Max, w.Slowest = e.Latency, FrameRef{e.Frame, e.Stream, e.Time}
	}
}

// Windows returns the windows, by API key, start and broker.
func (l *Latency) Windows() []LatencyWindow {
	out := make([]LatencyWindow, 0, len(l.windows))
	for _, w := range l.windows {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b LatencyWindow) int {
		return cmp.Or(cmp.Compare(a.APIKey, b.APIKey), a.Start.Compare(b.Start), cmp.Compare(a.Broker, b.Broker))
	})
	return out
}

// BrokerLatency is how long one broker took to answer one API over the capture
// (Latency.Brokers), waits left out.
type BrokerLatency struct {
	APIKey      int16
	API, Broker string
	Count       int
	P50         time.Duration
}

// Brokers returns the latencies per API and broker of the answers that are not waits, by
// API key and broker.
func (l *Latency) Brokers() []BrokerLatency {
	var out []BrokerLatency
	for k, g := range l.groups {
		if k.by != byBroker || len(g.latencies) == 0 {
			continue
		}
		sorted := slices.Clone(g.latencies)
		slices.Sort(sorted)
		out = append(out, BrokerLatency{APIKey: k.api, API: g.api, Broker: k.name, Count: len(sorted), P50: Percentile(sorted, 0.5)})
	}
	slices.SortFunc(out, func(a, b BrokerLatency) int {
		return cmp.Or(cmp.Compare(a.APIKey, b.APIKey), cmp.Compare(a.Broker, b.Broker))
	})
	return out
}

// SeriesLimit is how many marks a series of the analyses keeps for a plot (Series): past it,
// they are buckets of time.
const SeriesLimit = 2000

// Series returns the latencies (ms) of the answers over time, each line a broker, at the
// responses' times: those that are not waits, and the waits.
func (l *Latency) Series() (answers, waits *Series) { return l.answers, l.waits }
