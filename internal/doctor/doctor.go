// Package doctor reads a capture's conversation as a whole and says what is wrong with it:
// findings, worst first, each with the frames that show it, what it means and what to check.
// Each finding is one row of one table (Checks): an id, a severity, the threshold it fires
// at, and a function over what the Doctor gathered from the messages and notices it was told
// of, the analyses of package analysis among it.
package doctor

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/model"
)

// Severity says how bad a finding is.
type Severity int

// The severities, worst first.
const (
	Error Severity = iota
	Warning
	Info
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "info"
}

// Evidence is where a finding shows in the capture: the frames (the first analysis.MaxFrames),
// their connections (streams), and when the first and last of them were.
type Evidence struct {
	Frames []int
	// Files, when the run reads several captures (Doctor.File), names each frame's capture, as
	// given: a frame number is one of its file, a stream one of the whole run. Frames are then
	// in the order of the files, and in order within each.
	Files       []string
	Streams     []int
	First, Last time.Time
	// Count is how many times the finding was seen, Frames holding the first of them.
	Count int
	// frameStreams holds the stream of each frame, which names its file.
	frameStreams []int
}

// add notes one sighting, at frame on stream at t.
func (ev *Evidence) add(frame, stream int, t time.Time) {
	ev.Count++
	if len(ev.Frames) < analysis.MaxFrames && !ev.has(frame, stream) {
		ev.Frames = append(ev.Frames, frame)
		ev.frameStreams = append(ev.frameStreams, stream)
	}
	if !slices.Contains(ev.Streams, stream) {
		ev.Streams = append(ev.Streams, stream)
	}
	if ev.First.IsZero() || t.Before(ev.First) {
		ev.First = t
	}
	if t.After(ev.Last) {
		ev.Last = t
	}
}

// has reports whether ev holds frame of stream (a frame of another file may have its number).
func (ev *Evidence) has(frame, stream int) bool {
	for i, f := range ev.Frames {
		if f == frame && ev.frameStreams[i] == stream {
			return true
		}
	}
	return false
}

// sorted returns ev with its frames and streams in order, and with several files (files, in
// the order read; fileOf, each stream's) each frame's file, the files in order.
func (ev Evidence) sorted(files []string, fileOf map[int]string) Evidence {
	rank := func(i int) int { return slices.Index(files, fileOf[ev.frameStreams[i]]) }
	order := make([]int, len(ev.Frames))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(ev.Frames[a], ev.Frames[b]))
	})
	out := ev
	out.Frames, out.frameStreams, out.Files = make([]int, len(order)), make([]int, len(order)), nil
	if len(files) > 1 {
		out.Files = make([]string, len(order))
	}
	for i, j := range order {
		out.Frames[i], out.frameStreams[i] = ev.Frames[j], ev.frameStreams[j]
		if out.Files != nil {
			out.Files[i] = fileOf[ev.frameStreams[j]]
		}
	}
	out.Streams = slices.Sorted(slices.Values(ev.Streams))
	return out
}

// Finding is one thing wrong with a capture.
type Finding struct {
	ID       string
	Severity Severity
	// Title says it in one line, with the numbers.
	Title    string
	Evidence Evidence
	// Why says what it means; Advice what to check or change.
	Why, Advice string
}

// Doctor gathers what its checks read, from every message shown (Add) and every notice
// (Notice), in capture order; Findings then says what is wrong.
type Doctor struct {
	producers *analysis.Producers
	groups    *analysis.Groups
	lag       *analysis.Lag
	latency   *analysis.Latency
	rates     *analysis.Rates
	errors    map[int16]*Evidence
	throttled Evidence
	// maxThrottle is the longest throttle time a response asked for.
	maxThrottle time.Duration
	acks0       Evidence
	unanswered  Evidence
	// pending holds each connection's requests awaiting their responses, in order.
	pending map[int][]pendingRequest
	loss    Evidence
	tls     Evidence
	// metadata counts the Metadata requests per client id; conns the connections each client
	// id opened, per broker address.
	metadata map[string]*Evidence
	conns    map[[2]string]*Evidence
	// streams are the connections whose first request was seen (conns counts each once).
	streams map[int]bool
	members members
	// files are the captures of a run that reads several, in the order read (File); fileOf
	// names each connection's.
	files  []string
	fileOf map[int]string
}

type pendingRequest struct {
	correlation int32
	frame       int
	stream      int
	at          time.Time
}

// New returns a Doctor that has seen nothing.
func New() *Doctor {
	return &Doctor{producers: analysis.NewProducers(), groups: analysis.NewGroups(), lag: analysis.NewLag(), latency: analysis.NewLatency(), rates: analysis.NewRates(), errors: map[int16]*Evidence{},
		pending: map[int][]pendingRequest{}, metadata: map[string]*Evidence{}, conns: map[[2]string]*Evidence{},
		streams: map[int]bool{}, members: newMembers(), fileOf: map[int]string{}}
}

// File is told, in a run that reads several captures, that the messages and notices from now
// on come from the capture named: the evidence then names each frame's file.
func (d *Doctor) File(name string) {
	d.files = append(d.files, name)
}

// from notes the file of a connection, with several files.
func (d *Doctor) from(stream int) {
	if len(d.files) > 0 {
		if _, ok := d.fileOf[stream]; !ok {
			d.fileOf[stream] = d.files[len(d.files)-1]
		}
	}
}

// Reads names the fields the doctor reads beyond the facts: those of its analyses, and the
// throttle time of every response, which quotas throttle (byte rate: Produce and Fetch;
// request rate: any).
func (d *Doctor) Reads() []analysis.Read {
	return slices.Concat(d.producers.Reads(), d.groups.Reads(), d.lag.Reads(), d.latency.Reads(),
		[]analysis.Read{{APIKey: codec.EveryAPI, Response: true, Fields: []string{"ThrottleTimeMs"}}})
}

// Add is told of each message shown, in the order shown; it keeps nothing of e.
func (d *Doctor) Add(e *model.Entry) {
	d.from(e.Stream)
	d.producers.Add(e)
	d.groups.Add(e)
	d.lag.Add(e)
	d.latency.Add(e)
	d.rates.Add(e)
	if e.Request {
		d.members.request(e)
		d.request(e)
		return
	}
	d.members.response(e)
	d.response(e)
}

// request notes a request: what it awaits, acks=0, Metadata, and its connection.
func (d *Doctor) request(e *model.Entry) {
	m := e.Msg
	client := ""
	if m.ClientID != nil {
		client = *m.ClientID
	}
	if !d.streams[e.Stream] {
		d.streams[e.Stream] = true
		k := [2]string{client, e.Dst}
		if d.conns[k] == nil {
			d.conns[k] = &Evidence{}
		}
		d.conns[k].add(e.Frame, e.Stream, e.Time)
	}
	if m.APIKey == codec.KeyMetadata {
		if d.metadata[client] == nil {
			d.metadata[client] = &Evidence{}
		}
		d.metadata[client].add(e.Frame, e.Stream, e.Time)
	}
	if e.NoResponse {
		d.acks0.add(e.Frame, e.Stream, e.Time)
		return
	}
	if len(d.pending[e.Stream]) < maxPending {
		d.pending[e.Stream] = append(d.pending[e.Stream], pendingRequest{m.CorrelationID, e.Frame, e.Stream, e.Time})
	}
}

// maxPending bounds the requests a connection holds awaiting their responses: a client keeps
// a few in flight (max.in.flight.requests.per.connection, 5 by default).
const maxPending = 1000

// response notes a response: its errors, its throttle time, and the requests it shows were
// never answered (a broker answers a connection's requests in order, so those before the
// one it answers were skipped).
func (d *Doctor) response(e *model.Entry) {
	if e.Facts != nil {
		for _, code := range e.Facts.Errors {
			if d.errors[code] == nil {
				d.errors[code] = &Evidence{}
			}
			d.errors[code].add(e.Frame, e.Stream, e.Time)
		}
	}
	if ms := throttleMs(e.Msg); ms > 0 {
		d.throttled.add(e.Frame, e.Stream, e.Time)
		d.maxThrottle = max(d.maxThrottle, time.Duration(ms)*time.Millisecond)
	}
	q := d.pending[e.Stream]
	i := slices.IndexFunc(q, func(r pendingRequest) bool { return r.correlation == e.Msg.CorrelationID })
	if i < 0 {
		return
	}
	for _, r := range q[:i] {
		d.unanswered.add(r.frame, r.stream, r.at)
	}
	d.pending[e.Stream] = q[i+1:]
}

// throttleMs is the throttle time a response asks for, 0 without one.
func throttleMs(m *codec.Message) int64 {
	for _, n := range m.Fields[min(m.HeaderFields, len(m.Fields)):] {
		if n.Name == "ThrottleTimeMs" {
			v, _ := n.Value.(int64)
			return v
		}
	}
	return 0
}

// Notice is told of each notice shown: lost bytes, TLS not decrypted.
func (d *Doctor) Notice(n *model.Notice) {
	d.from(n.Stream)
	switch {
	case strings.Contains(n.Text, lostText):
		d.loss.add(n.Frame, n.Stream, n.Time)
	case strings.Contains(n.Text, encryptedText) || strings.Contains(n.Text, failedText) || strings.Contains(n.Text, undecryptedText):
		d.tls.add(n.Frame, n.Stream, n.Time)
	}
}

// The words of the reassembly's notices the doctor reads: bytes lost, and TLS left encrypted
// or not decrypted (package reassembly words them).
const (
	lostText        = "lost (not captured)"
	encryptedText   = ": encrypted; "
	failedText      = "decryption failed: "
	undecryptedText = "cannot be decrypted: "
)

// Findings returns what is wrong, worst first: by severity, then as Checks orders them.
func (d *Doctor) Findings() []Finding {
	var out []Finding
	for _, c := range Checks() {
		for _, f := range c.find(d) {
			f.ID, f.Why, f.Advice = c.ID, cmp.Or(f.Why, c.Why), cmp.Or(f.Advice, c.Advice)
			f.Evidence = f.Evidence.sorted(d.files, d.fileOf)
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return cmp.Compare(a.Severity, b.Severity) })
	return out
}

// Series is what the doctor's analyses measured over time: the pictures of a capture beside
// its findings (render.Report). Each series is bounded (analysis.SeriesLimit).
type Series struct {
	// First and Last are the times of the first and last messages.
	First, Last time.Time
	// Latency and Waits are the latencies (ms) per broker: the answers, and those that wait
	// by design (analysis.Latency).
	Latency, Waits *analysis.Series
	// Lag is the lag (records) per client id and partition.
	Lag *analysis.Series
	// Produced and Fetched are the bytes per topic, in buckets of time.
	Produced, Fetched *analysis.Series
	// Rebalances and Events are the groups' rebalances and their members' joins and leaves
	// (the first analysis.SeriesLimit: MoreEvents counts the others).
	Rebalances []analysis.RebalanceSummary
	Events     []analysis.MemberEvent
	MoreEvents int
}

// Series returns what the doctor's analyses measured over time, once every message was added.
func (d *Doctor) Series() Series {
	s := Series{Lag: d.lag.Series(), Rebalances: d.groups.Rebalances()}
	s.First, s.Last = d.rates.Span()
	s.Latency, s.Waits = d.latency.Series()
	s.Produced, s.Fetched = d.rates.Throughput()
	s.Events, s.MoreEvents = d.groups.Events()
	return s
}
