package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

// Lag answers "which consumer falls behind, on which partition, by how much": for each client
// id, topic and partition it fetches, the fetch offset its Fetch requests give, the high
// watermark the broker answers, and the lag between them (high watermark − fetch offset).
//
// Incremental fetch sessions (KIP-227) name only the partitions whose fetch offset changed,
// and the broker answers only the partitions with news: a partition the session holds keeps its
// last fetch offset, and one left out of a response its last high watermark. Lag follows each
// session's partitions so that those are carried forward.
type Lag struct {
	names   topicNamer
	pending inFlight[*lagFetch]
	// sessions holds the partitions of each fetch session a response accepted, by stream and
	// session id.
	sessions map[sessionKey]map[partKey]position
	rows     map[lagKey]*lagRow
	// lso is scratch for response: the last stable offsets of the response being read.
	lso map[partKey]int64
	// series is the lag over time, a line per client id and partition (Series).
	series *Series
}

// NewLag returns a Lag that has seen no message.
func NewLag() *Lag {
	return &Lag{sessions: map[sessionKey]map[partKey]position{}, rows: map[lagKey]*lagRow{}, lso: map[partKey]int64{}, series: NewSeries(SeriesLimit)}
}

// sessionKey is a fetch session's stream and id.
type sessionKey struct {
	stream int
	id     int32
}

// partKey is a topic (its name, or its id as Kafka prints it when the capture never named it)
// and a partition.
type partKey struct {
	topic     string
	partition int32
}

// position is where a consumer is in a partition of a fetch session: its fetch offset, and the
// high watermark last answered (hw < 0: none yet).
type position struct{ offset, hw int64 }

// lagFetch is what Lag keeps of a Fetch request until its response.
type lagFetch struct {
	client string
	// action is what the request does to its session (0: it has none) and session its id:
	// for a request that opens a session, the id of the one it closes (0: none).
	action  codec.SessionAction
	session int32
	// fetched holds every partition the request fetches with its position: those it names,
	// and those its session holds without naming them.
	fetched map[partKey]position
}

type lagKey struct {
	client string
	part   partKey
}

type lagRow struct {
	fetches int
	offset  int64
	// The last high watermark, lag and last stable offset, and the largest lag, when hasHW,
	// hasLag (for both lags) and hasLSO say they were seen: values, not pointers, as a row
	// changes with every fetch.
	hw, lag, max, lso     int64
	hasHW, hasLag, hasLSO bool
	// What the doctor reads (Lag.Partitions): the first fetch offset and whether it ever
	// changed, the first lag and where the first and last lags were measured, and the Fetch
	// responses (the first MaxFrames).
	firstOffset           int64
	moved                 bool
	firstLag              int64
	firstLagAt, lastLagAt FrameRef
	frames                []FrameRef
	// line names the row's line in the lag series (lagLine), made once.
	line string
}

// Reads names the Fetch fields Lag reads beyond the facts.
func (l *Lag) Reads() []Read {
	return []Read{
		{APIKey: codec.KeyFetch, Fields: []string{"Topics", "Topic", "TopicId", "Partitions", "Partition", "FetchOffset", "SessionId", "ForgottenTopicsData"}},
		{APIKey: codec.KeyFetch, Response: true, Fields: []string{"Responses", "Topic", "TopicId", "Partitions", "PartitionIndex", "ErrorCode", "HighWatermark", "LastStableOffset"}},
	}
}

// Add reads Fetch requests and their responses, and learns topic names from every message.
func (l *Lag) Add(e *model.Entry) {
	l.names.learn(e.Msg)
	if e.Msg.APIKey != codec.KeyFetch {
		return
	}
	if e.Request {
		l.pending.add(e.Stream, e.Msg.CorrelationID, l.request(e))
		return
	}
	if f, ok := l.pending.take(e.Stream, e.Msg.CorrelationID); ok {
		l.response(e, f)
	}
}

// request reads the positions a Fetch request gives, and those its session carries forward.
func (l *Lag) request(e *model.Entry) *lagFetch {
	f := &lagFetch{client: clientID(e.Msg)}
	body := bodyOf(e.Msg)
	if st := e.Session; st != nil {
		f.action, f.session = st.Action, st.ID
		if st.Action == codec.SessionOpen {
			id, _ := topField(body, "SessionId") // the step names no session: the new one has no id yet
			f.session = int32(id)
		}
		if st.Action == codec.SessionIncremental {
			f.fetched = maps.Clone(l.sessions[sessionKey{e.Stream, st.ID}])
			for _, p := range l.names.forgotten(findTop(body, "ForgottenTopicsData")) {
				delete(f.fetched, p)
			}
		}
	}
	if f.fetched == nil {
		f.fetched = map[partKey]position{}
	}
	l.names.eachPartition(body, "Topics", func(p partKey, n *codec.Node) {
		if off, ok := intField(n, "FetchOffset"); ok {
			pos := position{offset: off, hw: -1}
			if old, ok := f.fetched[p]; ok {
				pos.hw = old.hw
			}
			f.fetched[p] = pos
		}
	})
	return f
}

// response takes the broker's answer to f: the session it opens, changes or closes, and the
// high watermark of each partition.
func (l *Lag) response(e *model.Entry, f *lagFetch) {
	body := bodyOf(e.Msg)
	if code, ok := topField(body, "ErrorCode"); ok && code != 0 {
		if code == int64(codec.ErrFetchSessionIDNotFound) {
			delete(l.sessions, sessionKey{e.Stream, f.session})
		}
		return // the broker fetched nothing; its session is as it was
	}
	lso := l.lso
	clear(lso)
	l.names.eachPartition(body, "Responses", func(p partKey, n *codec.Node) {
		hw, ok := intField(n, "HighWatermark")
		if code, _ := intField(n, "ErrorCode"); code != 0 || !ok || hw < 0 {
			return
		}
		pos, ok := f.fetched[p]
		if !ok {
			pos.offset = -1 // a partition of a session opened before the capture
		}
		pos.hw = hw
		f.fetched[p] = pos
		if v, ok := intField(n, "LastStableOffset"); ok && v >= 0 {
			lso[p] = v
		}
	})
	at := FrameRef{e.Frame, e.Stream, e.Time}
	for p, pos := range f.fetched {
		l.sample(lagKey{f.client, p}, pos, lso, at)
	}
	switch {
	case f.action == codec.SessionOpen && e.Session != nil && e.Session.ID != 0:
		delete(l.sessions, sessionKey{e.Stream, f.session})
		l.sessions[sessionKey{e.Stream, e.Session.ID}] = f.fetched
	case f.action == codec.SessionIncremental:
		l.sessions[sessionKey{e.Stream, f.session}] = f.fetched
	case f.action == codec.SessionClose:
		delete(l.sessions, sessionKey{e.Stream, f.session})
	}
}

// sample counts one fetch of a partition by a client at pos, answered at.
func (l *Lag) sample(k lagKey, pos position, lso map[partKey]int64, at FrameRef) {
	r := l.rows[k]
	if r == nil {
		r = &lagRow{offset: -1, firstOffset: -1, line: lagLine(k.client, k.part.topic, k.part.partition)}
		l.rows[k] = r
	}
	r.fetches++
	r.frames = addFrame(r.frames, at)
	if pos.offset >= 0 {
		if r.firstOffset < 0 {
			r.firstOffset = pos.offset
		}
		r.moved = r.moved || pos.offset != r.firstOffset
		r.offset = pos.offset
	}
	if v, ok := lso[k.part]; ok {
		r.lso, r.hasLSO = v, true
	}
	if pos.hw < 0 {
		return
	}
	r.hw, r.hasHW = pos.hw, true
	if pos.offset < 0 {
		return
	}
	lag := pos.hw - pos.offset
	if !r.hasLag {
		r.firstLag, r.firstLagAt, r.max = lag, at, lag
	}
	r.lag, r.lastLagAt, r.hasLag = lag, at, true
	r.max = max(r.max, lag)
	l.series.Add(r.line, at.Time, float64(lag))
}

// lagLine names the line of a client id's partition in the lag series: "client" topic[3].
func lagLine(clientID, topic string, partition int32) string {
	return fmt.Sprintf("%q %s[%d]", clientID, topic, partition)
}

// Series returns the lag (records) over time, at the Fetch responses that measured it, a line
// per client id and partition ("client" topic[3]).
func (l *Lag) Series() *Series { return l.series }

// Tables returns the lag table, by client id, topic and partition.
func (l *Lag) Tables() []model.Table {
	t := model.Table{Name: "lag", Title: "Consumer lag per client, topic and partition (lag = high watermark - fetch offset)",
		Columns: []model.Column{
			{Name: "client_id", Head: "client", Kind: model.String},
			{Name: "topic", Kind: model.String},
			{Name: "partition", Kind: model.Int},
			{Name: "fetches", Kind: model.Int},
			{Name: "fetch_offset", Head: "offset", Kind: model.Int},
			{Name: "high_watermark", Head: "high watermark", Kind: model.Int},
			{Name: "lag", Kind: model.Int},
			{Name: "max_lag", Head: "max lag", Kind: model.Int},
			{Name: "last_stable_offset", Head: "last stable", Kind: model.Int},
		}}
	keys := make([]lagKey, 0, len(l.rows))
	for k := range l.rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b lagKey) int {
		return cmp.Or(cmp.Compare(a.client, b.client), cmp.Compare(a.part.topic, b.part.topic), cmp.Compare(a.part.partition, b.part.partition))
	})
	for _, k := range keys {
		r := l.rows[k]
		var offset any
		if r.offset >= 0 {
			offset = r.offset
		}
		t.AddRow(k.client, k.part.topic, int64(k.part.partition), int64(r.fetches), offset, val(r.hw, r.hasHW), val(r.lag, r.hasLag), val(r.max, r.hasLag), val(r.lso, r.hasLSO))
	}
	return []model.Table{t}
}

// val is v as a table value, nil when it is not known (!ok).
func val(v int64, ok bool) any {
	if !ok {
		return nil
	}
	return v
}

// inFlight holds the requests of each connection (stream) that await their responses, with
// what an analysis keeps of them. Kafka answers a connection's requests in order, so a response
// also ends the requests sent before its own: they were never answered, or not in the capture.
type inFlight[T any] struct{ byStream map[int][]flight[T] }

type flight[T any] struct {
	correlationID int32
	v             T
}

// maxInFlight bounds the requests kept for one connection, for captures of one direction only.
const maxInFlight = 256

func (f *inFlight[T]) add(stream int, correlationID int32, v T) {
	if f.byStream == nil {
		f.byStream = map[int][]flight[T]{}
	}
	q := append(f.byStream[stream], flight[T]{correlationID, v})
	if len(q) > maxInFlight {
		q = slices.Delete(q, 0, len(q)-maxInFlight)
	}
	f.byStream[stream] = q
}

// take returns the request a response answers, and forgets it and those before it.
func (f *inFlight[T]) take(stream int, correlationID int32) (v T, ok bool) {
	q := f.byStream[stream]
	i := slices.IndexFunc(q, func(x flight[T]) bool { return x.correlationID == correlationID })
	if i < 0 {
		return v, false
	}
	v = q[i].v
	if q = q[i+1:]; len(q) == 0 {
		delete(f.byStream, stream)
	} else {
		f.byStream[stream] = q
	}
	return v, true
}

// clientID is a request's client id ("" without one).
func clientID(m *codec.Message) string {
	if m.ClientID == nil {
		return ""
	}
	return *m.ClientID
}

// bodyOf is a message's fields after its header.
func bodyOf(m *codec.Message) []*codec.Node { return m.Fields[min(m.HeaderFields, len(m.Fields)):] }

// intField is the integer value of n's child named name.
func intField(n *codec.Node, name string) (int64, bool) { return topField(n.Children, name) }

// topField is the integer value of the node named name among nodes (not below them).
func topField(nodes []*codec.Node, name string) (int64, bool) {
	for _, c := range nodes {
		if c.Name == name {
			v, ok := c.Value.(int64)
			return v, ok
		}
	}
	return 0, false
}

// topicNamer names the topics of messages as the analyses key them: by name, else by the name
// the capture taught for the topic id, else by the id as Kafka prints it.
type topicNamer struct{ learnt codec.TopicNames }

// learn keeps the topic names m gives for topic ids, for messages that name topics by id
// only: the pipeline's notes name them too, when it was asked for notes.
func (t *topicNamer) learn(m *codec.Message) { t.learnt.Add(m.TopicIDNames()) }

// topic names the topic of a struct that holds a topic name or a topic id among nodes.
func (t *topicNamer) topic(nodes []*codec.Node) (string, bool) {
	for _, c := range nodes {
		switch v := c.Value.(type) {
		case string:
			if c.Name == "Topic" || c.Name == "Name" {
				return v, true
			}
		case codec.UUID:
			if c.Name != "TopicId" || v == (codec.UUID{}) {
				continue
			}
			if name, ok := c.Topic(); ok {
				return name, true
			}
			if name, ok := t.learnt.Name(v); ok {
				return name, true
			}
			return v.String(), true
		}
	}
	return "", false
}

// eachPartition calls fn with each partition struct of the topics array named array among
// body (Fetch's Topics and Responses, Produce's TopicData): an array of topic structs, each
// with an array of partition structs.
func (t *topicNamer) eachPartition(body []*codec.Node, array string, fn func(partKey, *codec.Node)) {
	arr := findTop(body, array)
	if arr == nil {
		return
	}
	for _, ts := range arr.Children {
		topic, ok := t.topic(ts.Children)
		if !ok {
			continue
		}
		for _, c := range ts.Children {
			if !c.Type.IsArray() {
				continue
			}
			for _, ps := range c.Children {
				if p, ok := partitionOf(ps); ok {
					fn(partKey{topic, p}, ps)
				}
			}
		}
	}
}

// forgotten reads the partitions of a Fetch request's ForgottenTopicsData: topic structs with
// an int32 array of partitions.
func (t *topicNamer) forgotten(arr *codec.Node) []partKey {
	if arr == nil {
		return nil
	}
	var out []partKey
	for _, ts := range arr.Children {
		topic, ok := t.topic(ts.Children)
		if !ok {
			continue
		}
		for _, c := range ts.Children {
			if c.Name != "Partitions" {
				continue
			}
			for _, p := range c.Children {
				if v, ok := p.Value.(int64); ok && p.Type == wire.Int32 {
					out = append(out, partKey{topic, int32(v)})
				}
			}
		}
	}
	return out
}

// partitionOf is the partition number of a partition struct.
func partitionOf(n *codec.Node) (int32, bool) {
	for _, c := range n.Children {
		switch c.Name {
		case "Partition", "PartitionIndex", "Index":
			if v, ok := c.Value.(int64); ok {
				return int32(v), true
			}
		}
	}
	return 0, false
}

// findTop is the node named name among nodes (not below them).
func findTop(nodes []*codec.Node, name string) *codec.Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// LagSummary is what Lag saw of one client's fetches of one partition (Lag.Partitions).
type LagSummary struct {
	ClientID, Topic string
	Partition       int32
	Fetches         int
	// HasLag says whether a lag was measured: FirstLag and LastLag are then the first and the
	// last, at the Fetch responses FirstLagAt and LastLagAt, and MaxLag the largest.
	HasLag                    bool
	FirstLag, LastLag, MaxLag int64
	FirstLagAt, LastLagAt     FrameRef
	// Offset is the last fetch offset (-1: none known), Moved whether it ever changed.
	Offset int64
	Moved  bool
	// Readable is how many records were there to read at the last fetch: up to the last
	// stable offset when the broker gave one, else the high watermark (-1: not known).
	Readable int64
	// Frames are the Fetch responses that answered for the partition: the first MaxFrames.
	Frames []FrameRef
}

// Partitions returns what Lag saw of each client's partitions, by client id, topic and
// partition.
func (l *Lag) Partitions() []LagSummary {
	keys := slices.SortedFunc(maps.Keys(l.rows), func(a, b lagKey) int {
		return cmp.Or(cmp.Compare(a.client, b.client), cmp.Compare(a.part.topic, b.part.topic), cmp.Compare(a.part.partition, b.part.partition))
	})
	out := make([]LagSummary, 0, len(keys))
	for _, k := range keys {
		r := l.rows[k]
		s := LagSummary{ClientID: k.client, Topic: k.part.topic, Partition: k.part.partition, Fetches: r.fetches,
			Offset: r.offset, Moved: r.moved, Readable: -1, Frames: slices.Clone(r.frames)}
		if r.hasLag {
			s.HasLag, s.FirstLag, s.LastLag, s.MaxLag, s.FirstLagAt, s.LastLagAt = true, r.firstLag, r.lag, r.max, r.firstLagAt, r.lastLagAt
		}
		if (r.hasLSO || r.hasHW) && r.offset >= 0 {
			end := r.hw
			if r.hasLSO {
				end = r.lso
			}
			s.Readable = max(end-r.offset, 0)
		}
		out = append(out, s)
	}
	return out
}
