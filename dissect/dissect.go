// Package dissect turns packet captures, from files or a live interface, and byte streams
// into paired, filtered Kafka messages for a renderer. It follows each connection's
// conversation, pairs responses with requests, numbers connections, learns topic names,
// filters pairs, counts what it shows, and spreads a capture file over cores.
//
// A Pipeline is decode → pair → analyse → filter → show. A decoder follows the connections of
// one assembler: it decodes every frame into an entry and pairs responses with requests
// (decoder.go). The Pipeline takes what the decoders find, in capture order: it numbers
// connections and gives topic ids their names (analyse), lets the selection choose pairs
// (filter), and shows what is chosen: counted, fed to the statistics, written by the renderer
// (show). With one assembler the decoder and the pipeline are chained by a function call; a
// capture file spread over several assemblers (shard.go) has one decoder per assembler and
// the pipeline merges their events back into capture order. How much each stage computes is
// the run's Plan.
//
// The pipeline reads one capture at a time (File, Read, Stream); what a command does around
// it (several files, stdin, writing the packets shown, a progress line) is the command's.
package dissect

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
	"github.com/kdissect/kdissect/render"
)

// Config says what a pipeline feeds, what to select, and where its input comes from.
type Config struct {
	// Codec must be NewCodec's for Plan; Out writes what is shown.
	Codec *codec.Codec
	Out   render.Renderer
	// Plan is what each stage computes and may skip: NewPlan's, for Out's format and Select.
	Plan Plan
	// Select chooses the messages shown, and asks for statistics.
	Select Selection
	// Stats, when set, is told of every message shown, in order: the analyses of --stats.
	// They read the messages' facts, which Plan must compute (Asks.Select.Stats), and the
	// fields Plan.Keep names.
	Stats Collector
	// IsServerPort names Kafka's broker ports (nil: none); with Detect, Kafka is also looked
	// for on other ports, from the first request of each connection.
	IsServerPort func(port uint16) bool
	Detect       bool
	// Keys decrypt TLS (nil: only the captures' Decryption Secrets Blocks, which are added to
	// it as they are read).
	Keys *tlsdec.KeyLog
	// Workers is how many assemblers share a capture file (0 or 1: no goroutines);
	// RoundPackets is how many segments they are given at a time (0: the default, see
	// shard.go).
	Workers, RoundPackets int
	// Warn is told of problems with single packets and with a capture's TLS secrets; the
	// reading goes on (nil: they are dropped).
	Warn func(error)
	// Limit, when positive, is how many messages are shown: the run stops there (see Stop).
	Limit int
	// Flush: the output is flushed after each message and notice, so that each shows as soon
	// as it is complete. Captures that arrive as they are made (capture.Reader.Streaming: a
	// live capture, a pipe) are always shown so.
	Flush bool
	// Batch: the output is written only when it is closed (render.Format.Batch), so a capture
	// that arrives as it is made, which shows each message as it completes, is refused
	// (ErrNeedsFile).
	Batch bool
	// Stop, when set, is called when the run stops early: at Limit, when the output cannot
	// be written, or when Pipeline.Stop is called.
	Stop func()
	// Progress, when set, is told after each packet of a capture that is read whole (not one
	// that arrives as it is made) how far it has been read: its bytes read, its size (0 when
	// unknown) and its packets.
	Progress func(read, size int64, packets int)
	// OnShow, when set, is told of each message shown, before Out writes it (Save.Note);
	// OnNotice, of each notice shown, before Out writes it. Together they tell an observer
	// (the doctor of --findings) all that Out is told.
	OnShow   func(e *model.Entry)
	OnNotice func(n *model.Notice)
	// Tap, when set, is shown every packet of the captures read, as it is read (the rotating
	// pcapng files of a capture read from a pipe); a live capture's Reader has its own.
	Tap capture.Tap
}

// Pipeline shows what the decoders find.
type Pipeline struct {
	codec *codec.Codec
	out   render.Renderer
	cfg   Config
	// names holds the topic names learnt, for topic ids.
	names naming
	// sel is the filter's state; shown counts what was shown.
	sel   selecting
	shown counting
	// seen counts what was read and found, shown or not (see Seen).
	seen Seen
	// nextStream numbers connections in the order their first packet appears, over all the
	// captures read (tshark's tcp.stream): the one place connections get numbers.
	nextStream int
	run        running
	clock      followClock
	// par writes the messages of a capture file read by shards on several goroutines (write.go).
	par *writers
	// writeLimits, when a test sets big, replace bigMessage and heldBytes (write.go).
	writeLimits struct{ big, held int }
	// entries holds the entries (with their facts) the pipeline is done with, for the decoders
	// to fill again; reuse says when it may be done with them (forget).
	entries sync.Pool
	reuse   bool
}

// naming is what the pipeline knows of topic names: learnt from the whole of each capture
// file (a first pass, learnNames) and along the capture.
type naming struct {
	names codec.TopicNames
	// scan decodes the first pass's messages, shallow.
	scan *codec.Codec
	// deferred is the file being read whose first pass was put off (learnFirst).
	deferred string
	// namedSet is the last fetch session set (SessionStep.Partitions, shared by the steps
	// that leave it as it was) whose topic ids unnamed found all named: names are never
	// forgotten, so the steps that share it are not looked at again.
	namedSet []codec.SessionPartition
}

// analyse gives an entry what the capture as a whole knows of it: the names of the topics
// its ids name, with those its own message gives (taught), learnt in capture order; notes
// puts them beside the ids of its field tree (Plan.Notes). learn runs the first pass put off
// (learnDeferred) when e uses an id not named so far.
func (n *naming) analyse(e *model.Entry, taught []codec.TopicIDName, notes bool, learn func()) {
	n.names.Add(taught)
	if n.deferred != "" && n.unnamed(e) {
		learn()
	}
	if notes && e.Msg != nil && !n.names.Annotate(e.Msg) && n.deferred != "" {
		// An id of the tree has no name yet: the pass put off may know it.
		learn()
		n.names.Annotate(e.Msg)
	}
	if e.Facts != nil {
		n.names.Resolve(e.Facts)
	}
	if e.Session != nil {
		n.names.ResolveSession(e.Session)
	}
}

// selecting is the state of the selection: the filter, the requests it holds until their
// responses decide the pairs, and the notices held until their connections show a message.
type selecting struct {
	// filter, when set, holds each request until its response decides the pair (pending).
	filter  *filter
	pending Pending[heldRequest]
	// held, when the filter chooses messages, holds each connection's notices until it shows
	// a message (notices.go).
	held *heldNotices
	// detected holds the ports already reported as Kafka by detection in the current capture:
	// every connection detected says so, and each port is reported once.
	detected map[uint16]bool
}

// counting is what was shown: the counts for the exit status and the closing line, the
// statistics, and the first error writing the output.
type counting struct {
	messages, notices int
	// stats, when set, is told of every message shown (Config.Stats).
	stats Collector
	err   error
}

// running is the state of the capture being read: reading is it, for Stop; stopped is set
// once the run stops early; flushEach: it arrives as it is made, so each message is flushed.
type running struct {
	reading   atomic.Pointer[capture.Reader]
	stopped   atomic.Bool
	flushEach bool
}

// followClock is the clock of a followed capture: idle is how long it may send no packet
// before the connections are flushed by the wall clock (see follow); wall tells that clock
// (time.Now, but in tests).
type followClock struct {
	idle time.Duration
	wall func() time.Time
}

// ErrNeedsFile is the error for a capture that arrives as it is made (a pipe) when the output
// is written only at its end (Config.Batch): the capture must be read from a file.
var ErrNeedsFile = errors.New("the capture arrives as it is made and the output is written only at its end")

// errPlan is New's refusal of a plan made for another selection.
var errPlan = errors.New("dissect: the plan does not compute what the selection reads (NewPlan)")

// New returns a pipeline; it fails on a selection it cannot apply.
func New(cfg Config) (*Pipeline, error) {
	if cfg.Keys == nil {
		cfg.Keys = tlsdec.NewKeyLog()
	}
	cfg.Workers = max(cfg.Workers, 1)
	if cfg.Warn == nil {
		cfg.Warn = func(error) {}
	}
	p := &Pipeline{codec: cfg.Codec, out: cfg.Out, cfg: cfg, clock: followClock{idle: idleFlush, wall: time.Now}}
	f, err := cfg.Select.build(p.codec)
	if err != nil {
		return nil, err
	}
	if !cfg.Plan.covers(cfg.Select) || cfg.Stats != nil && !cfg.Plan.Facts {
		return nil, errPlan
	}
	p.sel = selecting{filter: f, detected: map[uint16]bool{}}
	if f != nil && f.holdsNotices() {
		p.sel.held = &heldNotices{byStream: map[int][]reassembly.Notice{}, shown: map[int]bool{}, unshownPorts: map[[2]int]bool{}}
	}
	if f != nil {
		f.warn = cfg.Warn
	}
	p.shown.stats = cfg.Stats
	// An entry is the pipeline's alone once shown when nothing else may keep it: a filter
	// holds requests, an observer (OnShow) or a renderer may keep what it is given, a tree
	// not lent is kept with its entry. Statistics let go when Add returns (Collector).
	_, forgets := cfg.Out.(render.Forgetter)
	p.reuse = forgets && cfg.Plan.Lend && f == nil && cfg.OnShow == nil
	return p, nil
}

// forget gives an entry's memory back for a later message's, its message's to the codec, when
// the pipeline alone held it (reuse) and it was not handed to the writers.
func (p *Pipeline) forget(ev event) {
	if !p.reuse || ev.own == nil || p.par != nil {
		return
	}
	if m := ev.own.e.Msg; m != nil {
		p.codec.Recycle(m)
	}
	ev.own.e, ev.own.f = model.Entry{}, codec.Facts{}
	ev.own.store.Reset()
	p.entries.Put(ev.own)
}

// A Collector is told of every message shown (Config.Stats). The entry is the pipeline's
// again when Add returns.
type Collector interface {
	Add(e *model.Entry)
}

// Shown returns how many messages and notices have been shown.
func (p *Pipeline) Shown() (messages, notices int) { return p.shown.messages, p.shown.notices }

// Err returns the first error writing the output (a closed pipe, a full disk).
func (p *Pipeline) Err() error { return p.shown.err }

// Close closes the output; it returns the first error writing it.
func (p *Pipeline) Close() error {
	p.keep(p.out.Close())
	return p.shown.err
}

// setStart tells a renderer that shows times relative to the capture's first packet when that
// packet was; only the first call counts.
func (p *Pipeline) setStart(t time.Time) {
	if s, ok := p.out.(render.StartSetter); ok {
		s.SetStart(t)
	}
}

// handle shows one event. Events come in capture order.
func (p *Pipeline) handle(ev event) {
	p.seen.event(ev)
	switch ev.kind {
	case evStart:
		ev.conn.ID = p.nextStream
		p.nextStream++
	case evEntry:
		e := ev.entry
		e.Stream = ev.conn.ID
		p.names.analyse(e, ev.names, p.cfg.Plan.Notes, p.learnDeferred)
		// filterPair filters, and shows what it lets through (show).
		if h := (heldRequest{e, ev.spilled}); !p.filterPair(h, ev.answered) {
			p.unhold(h)
			p.forget(ev)
		}
	case evNotice:
		p.notice(ev.notice)
	case evClose:
		p.closed(ev.conn)
		p.closedNotices(ev.conn.ID)
		if c, ok := p.out.(render.ConnCloser); ok {
			p.keep(c.ConnClosed(ev.conn.ID))
		}
	}
}

// heldRequest is a request held until its response comes (selecting.pending), with its frame
// when that is outside the heap, closed once the request is let go.
type heldRequest struct {
	e       *model.Entry
	spilled *reassembly.Spilled
}

// filterPair shows an entry, or holds a request until its response lets the filter decide on
// the pair; it reports whether it held it (the entry's frame is then closed when it is let go).
func (p *Pipeline) filterPair(h heldRequest, answered bool) (held bool) {
	f, e := p.sel.filter, h.e
	if f == nil {
		p.show(e)
		return false
	}
	switch {
	case f.pairOnly() && AwaitsResponse(e):
		// A request held with the same correlation id will not be answered now: decide on it
		// alone rather than lose it.
		if old, ok := p.sel.pending.Hold(e, h); ok {
			if f.match(old.e, nil) && !f.sel.Responses {
				p.show(old.e)
			}
			p.unhold(old)
		}
		return true
	case e.Request:
		if f.match(e, nil) && !f.sel.Responses {
			p.show(e)
		}
		return false
	}
	var req heldRequest
	if answered && e.Msg != nil {
		req, _ = p.sel.pending.Answer(e)
		defer p.unhold(req)
	}
	if !f.match(req.e, e) {
		return false
	}
	if req.e != nil && !f.sel.Responses {
		p.show(req.e)
	}
	if !f.sel.Requests {
		p.show(e)
	}
	return false
}

// unhold closes the frame outside the heap of an entry let go (from pending, or not held),
// if it has one, and gives back the tree of a lent frame's message that was kept for the
// analyses (Plan.Keep), now that they have read it.
func (p *Pipeline) unhold(h heldRequest) {
	if h.spilled != nil {
		p.closeWhenWritten(h.spilled)
	}
	if p.cfg.Plan.Lend && h.e != nil && h.e.Msg != nil && p.codec.Keeps(h.e.Msg) {
		p.codec.Release(h.e.Msg)
	}
}

// show renders an entry and counts it.
func (p *Pipeline) show(e *model.Entry) {
	if p.full() {
		return
	}
	p.showingStream(e.Stream)
	p.shown.messages++
	// What is shown is counted here, and only here.
	if p.shown.stats != nil {
		p.shown.stats.Add(e)
	}
	if p.cfg.OnShow != nil {
		p.cfg.OnShow(e)
	}
	p.wrote(p.message(e))
}

// full reports whether the limit of messages is reached.
func (p *Pipeline) full() bool { return p.cfg.Limit > 0 && p.shown.messages >= p.cfg.Limit }

// wrote ends the writing of a message or notice: the output is flushed if asked, and the run
// stopped at the limit or when the output cannot be written.
func (p *Pipeline) wrote(err error) {
	if p.cfg.Flush || p.run.flushEach {
		if ferr := p.out.Flush(); err == nil {
			err = ferr
		}
	}
	p.keep(err)
	if err != nil || p.full() {
		p.Stop()
	}
}

// Stop ends the run early, as Ctrl-C does: the capture being read ends as if its file ended
// there (what is complete is shown, its connections are closed), no other file is read, and
// Config.Stop is called. Any goroutine may call it, more than once.
func (p *Pipeline) Stop() {
	if p.run.stopped.Swap(true) {
		return
	}
	if r := p.run.reading.Load(); r != nil {
		r.Stop()
	}
	if p.cfg.Stop != nil {
		p.cfg.Stop()
	}
}

// Stopped reports whether the run was stopped early (Stop, Config.Limit, an output error).
func (p *Pipeline) Stopped() bool { return p.run.stopped.Load() }

// closed decides on the requests the filter still holds for a connection that ended: they got
// no response in the capture, so they are judged alone, in capture order.
func (p *Pipeline) closed(c *reassembly.Conn) {
	left := p.sel.pending.Closed(c.ID)
	slices.SortFunc(left, func(a, b heldRequest) int { return a.e.Frame - b.e.Frame })
	for _, req := range left {
		if p.sel.filter.match(req.e, nil) && !p.sel.filter.sel.Responses {
			p.show(req.e)
		}
		p.unhold(req)
	}
}

// keep remembers the first write error (a closed pipe, a full disk).
func (p *Pipeline) keep(err error) {
	if err != nil && p.shown.err == nil {
		p.shown.err = err
	}
}
