// Package dissect turns packet captures, from files or a live interface, and byte streams
// into paired, filtered Kafka messages for a renderer. It follows each connection's
// conversation, pairs responses with requests, numbers connections, learns topic names,
// filters pairs, counts what it shows, and spreads capture files over cores.
//
// The pipeline has two halves. A decoder follows the connections of one assembler: it pairs
// responses with requests and decodes every frame into an entry. The Pipeline itself takes
// what the decoders find, in capture order, and shows it. With one assembler the halves are
// chained by a function call; a capture file spread over several assemblers (shard.go) has
// one decoder per assembler and the pipeline merges their events back into capture order.
package dissect

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
	"github.com/kdissect/kdissect/render"
)

// Config says what a pipeline feeds, what to select, and where its input comes from.
type Config struct {
	Codec *codec.Codec
	Out   render.Renderer
	// Needs is what Out reads of each message: the pipeline computes nothing more.
	Needs render.Needs
	// Select chooses the messages shown, and asks for statistics.
	Select Selection
	// Stats, when set, is told of every message shown, in order: the analyses of --stats.
	// They need the messages' facts, which the pipeline then computes.
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
	// SpillOver is the frame size above which frames are kept outside the heap, in mapped
	// temporary files, when the output keeps no message after writing it (summaries, JSON
	// lines, diagrams): 0 is 1 MiB, negative never (see reassembly.Options.SpillOver).
	SpillOver int
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
	// that arrives through a pipe, which shows each message as it completes, is refused with
	// ErrNeedsFile.
	Batch bool
	// Stop, when set, is called when the run stops early: at Limit, when the output cannot
	// be written, or when Pipeline.Stop is called.
	Stop func()
	// Save, when set, writes the packets of every message shown to a pcapng file (-w): each
	// capture file is read a second time for it, by Files (stdin is kept in a temporary file).
	Save *Save
	// Progress, when set, is called as each capture file is opened; update is then told after
	// each packet how far the file has been read (its size is 0 when unknown), and done is
	// called when it has been read.
	Progress func(name string) (update func(read, size int64, packets int), done func())
}

// Pipeline shows what the decoders find.
type Pipeline struct {
	codec *codec.Codec
	out   render.Renderer
	cfg   Config
	// counts for the exit status and the closing line
	messages, notices int
	err               error
	// names learns topic names for topic ids: from the whole of each capture file (a first
	// pass, learnNames), and along the capture.
	names codec.TopicNames
	// scanCodec decodes the first pass's messages, shallow.
	scanCodec *codec.Codec
	// filter, when set, holds each request until its response decides the pair (pending).
	filter  *filter
	pending Pending[heldRequest]
	// held, when the filter chooses messages, holds each connection's notices until it shows
	// a message (notices.go).
	held *heldNotices
	// stats, when set, is told of every message shown.
	stats Collector
	// notes and facts: compute topic-name notes on topic ids (shown in field trees) and
	// message facts (shown by summaries, used by filters and statistics).
	notes, facts bool
	// lendFrames: the output shows neither a frame's bytes nor its field tree, so reassembly
	// may lend frames rather than give them (reassembly.Options.ReuseFrames), and decoders
	// release each message's tree as soon as they have its facts.
	lendFrames bool
	// nextStream numbers connections in the order their first packet appears, over all the
	// capture files and streams (tshark's tcp.stream): the one place connections get numbers.
	nextStream int
	// detected holds the ports already reported as Kafka by detection in the current file:
	// every connection detected says so, and each port is reported once.
	detected map[uint16]bool
	// progress, while a file is read, is told after each packet how far it is.
	progress func()
	keys     *tlsdec.KeyLog
	// seen counts what was read and found, shown or not (see Seen).
	seen Seen
	// reading is the capture being read, for Stop; stopped is set once the run stops early.
	// flushEach: the capture being read arrives as it is made, so each message is flushed.
	reading   atomic.Pointer[capture.Reader]
	stopped   atomic.Bool
	flushEach bool
	// idleFlush is how long a followed capture may send no packet before the connections are
	// flushed by the wall clock (see follow); wall tells that clock (time.Now, but in tests).
	idleFlush time.Duration
	wall      func() time.Time
}

// spillOver is the frame size above which frames are kept outside the heap when the output
// allows it (reassembly.Options.SpillOver): a consumer's Fetch responses of megabytes, several
// arriving at once on different connections. (At 8 MiB, the frames of 1 to 8 MiB being
// assembled at once held 10 MB more at peak on a capture of big batches.)
const spillOver = 1 << 20

// ErrNeedsFile is the error for a capture that comes through a pipe when the output is written
// only at its end (Config.Batch).
var ErrNeedsFile = errors.New("a capture from a pipe is dissected as its packets arrive, and this output format is written only at the end: save the capture to a file (tcpdump -w FILE) and dissect the file")

// request is what a conversation remembers of a request: where it was seen.
type request struct {
	frame int
	time  time.Time
}

// New returns a pipeline; it fails on a selection it cannot apply.
func New(cfg Config) (*Pipeline, error) {
	p := &Pipeline{codec: cfg.Codec, out: cfg.Out, cfg: cfg, keys: cfg.Keys,
		detected: map[uint16]bool{}, notes: cfg.Needs.Notes, facts: cfg.Needs.Facts, lendFrames: cfg.Needs.Lend(), idleFlush: idleFlush, wall: time.Now}
	if p.keys == nil {
		p.keys = tlsdec.NewKeyLog()
	}
	if p.cfg.Workers < 1 {
		p.cfg.Workers = 1
	}
	if p.cfg.Warn == nil {
		p.cfg.Warn = func(error) {}
	}
	f, err := cfg.Select.build(p.codec)
	if err != nil {
		return nil, err
	}
	p.filter = f
	if f != nil && f.holdsNotices() {
		p.held = &heldNotices{byStream: map[int][]reassembly.Notice{}, shown: map[int]bool{}, unshownPorts: map[[2]int]bool{}}
	}
	if f != nil {
		f.warn = p.cfg.Warn
		if f.expr != nil && f.expr.ReadsBodies() {
			// The expression reads the trees of requests held until their responses, and the
			// topic names beside their topic ids.
			p.lendFrames, p.notes = false, true
		}
	}
	p.stats = cfg.Stats
	return p, nil
}

// A Collector is told of every message shown (Config.Stats). The entry is the pipeline's
// again when Add returns.
type Collector interface {
	Add(e *model.Entry)
}

// Shown returns how many messages and notices have been shown.
func (p *Pipeline) Shown() (messages, notices int) { return p.messages, p.notices }

// Err returns the first error writing the output (a closed pipe, a full disk).
func (p *Pipeline) Err() error { return p.err }

// Close closes the output; it returns the first error writing it.
func (p *Pipeline) Close() error {
	p.keep(p.out.Close())
	return p.err
}

// eventKind says what a decoder found.
type eventKind uint8

const (
	evStart  eventKind = iota // a connection's first packet appeared
	evEntry                   // a message (or SASL token) was decoded
	evNotice                  // something to report that is not a message
	evClose                   // a connection ended
)

// event is what a decoder hands to the pipeline.
type event struct {
	kind   eventKind
	conn   *reassembly.Conn
	entry  *model.Entry
	notice reassembly.Notice
	// answered: the entry is a response whose request was captured; names: the topic names
	// the entry's message gives topic ids, to be learnt in capture order.
	answered bool
	names    []codec.TopicIDName
	// spilled holds the entry's frame outside the heap (reassembly.Frame.Spilled), to be
	// closed once the entry is shown or dropped.
	spilled *reassembly.Spilled
}

// conn is what a decoder keeps of a connection: its conversation, the responses that came
// before their requests, and its endpoints as shown.
type conn struct {
	cv             *codec.Conversation
	early          codec.Early[reassembly.Frame]
	client, server string
}

// decoder is the decoding half of the pipeline for one assembler: it is the assembler's
// reassembly.Handler, and it hands each finding to emit in the order it makes them.
type decoder struct {
	codec *codec.Codec
	convs map[*reassembly.Conn]*conn
	// facts: compute each message's facts (see Pipeline.facts); expand: expand the records
	// a message holds unexpanded first, because a filter reads their warnings (facts count
	// records without expanding them).
	facts, expand bool
	// lent: frames are only lent (Pipeline.lendFrames): those held are copied, and entries get
	// neither bytes nor field trees.
	lent bool
	emit func(event)
	// hold and frame as function values, made once rather than for each connection.
	holdFunc  func(reassembly.Frame) reassembly.Frame
	frameFunc func(reassembly.Frame)
}

// newDecoder returns a decoder for one assembler that reports to emit.
func (p *Pipeline) newDecoder(emit func(event)) *decoder {
	d := &decoder{codec: p.codec, convs: map[*reassembly.Conn]*conn{}, emit: emit, lent: p.lendFrames,
		facts: p.facts || p.filter != nil || p.stats != nil, expand: p.filter != nil}
	d.holdFunc, d.frameFunc = d.hold, d.frame
	return d
}

// Started passes every new connection on, for the pipeline to number it.
func (d *decoder) Started(c *reassembly.Conn) { d.emit(event{kind: evStart, conn: c}) }

func (d *decoder) Open(c *reassembly.Conn) (toServer, toClient reassembly.Checker) {
	cv := d.codec.NewConversation()
	cs := &conn{cv: cv, client: c.Client.String(), server: c.Server.String()}
	cs.early = codec.NewEarly(cv, place, d.holdFunc, d.frameFunc)
	d.convs[c] = cs
	return func(head []byte, synced bool) wire.Verdict { return cv.Check(true, head, synced) },
		func(head []byte, synced bool) wire.Verdict { return cv.Check(false, head, synced) }
}

// place is where a frame is, for pairing's queue of early responses.
func place(f reassembly.Frame) codec.Place {
	return codec.Place{Request: f.Dir == reassembly.ToServer, Data: f.Data, First: f.FirstPacket, Last: f.LastPacket}
}

// hold keeps a frame's bytes while pairing holds it: a lent frame's memory will hold another.
func (d *decoder) hold(f reassembly.Frame) reassembly.Frame {
	if d.lent {
		f.Data = bytes.Clone(f.Data)
		f.Spilled = nil // the framer closes it once the frame is handed over
	}
	return f
}

func endpoints(c *reassembly.Conn, d reassembly.Dir) (string, string) {
	if d == reassembly.ToServer {
		return c.Client.String(), c.Server.String()
	}
	return c.Server.String(), c.Client.String()
}

// Frame takes a frame from reassembly, through pairing's queue of early responses.
func (d *decoder) Frame(f reassembly.Frame) { d.convs[f.Conn].early.Add(f) }

// frame decodes one frame into an entry.
func (d *decoder) frame(f reassembly.Frame) {
	cs := d.convs[f.Conn]
	cv := cs.cv
	e := &model.Entry{Frame: f.LastPacket, FirstFrame: f.FirstPacket, Time: f.LastTime, Bytes: f.Data, TLS: f.TLS}
	e.Src, e.Dst = cs.client, cs.server
	if f.Dir == reassembly.ToClient {
		e.Src, e.Dst = cs.server, cs.client
	}
	var res codec.Result
	if f.Spilled != nil {
		cv.SetPaged(f.Spilled) // its records' memory goes back as they are decoded and written
		defer cv.SetPaged(nil)
	}
	if f.Dir == reassembly.ToServer {
		e.Request = true
		res = cv.ClientFrame(f.Data, request{frame: f.LastPacket, time: f.LastTime})
	} else {
		res = cv.ServerFrame(f.Data)
	}
	e.Msg, e.NoResponse, e.Session = res.Msg, res.NoResponse, res.Session
	if e.Msg != nil && !d.lent {
		e.Bytes = e.Msg.Redact(f.Data) // no password in hex dumps
	}
	if res.Request != nil {
		if r, ok := res.Request.Ref.(request); ok {
			e.RequestFrame, e.Latency = r.frame, f.LastTime.Sub(r.time)
		}
	}
	ev := event{kind: evEntry, conn: f.Conn, entry: e, answered: res.Request != nil}
	if f.Spilled != nil && !d.lent {
		ev.spilled = f.Spilled // mapped until the pipeline is done with the entry
	}
	if e.Msg != nil && d.facts {
		if d.expand {
			e.Msg.Expand()
		}
		facts := e.Msg.Facts() // a raw SASL token's too: its user
		e.Facts = &facts
	}
	if e.Msg != nil && !res.SASLToken {
		ev.names = e.Msg.TopicIDNames()
	}
	if d.lent {
		// Nothing after this reads the tree, and the frame's memory will hold another frame:
		// the entry keeps neither, and the next messages' trees may use the nodes. What the
		// entry keeps are copies.
		e.Bytes = nil
		if e.Msg != nil && !d.codec.Keeps(e.Msg) {
			// A tree that analyses read (Codec.Keep) is left to the analyses, then to the
			// garbage collector: its numbers and strings are copies (bytes values are not; analyses
			// read none).
			d.codec.Release(e.Msg)
		}
	}
	d.emit(ev)
}

func (d *decoder) Notice(n reassembly.Notice) {
	d.emit(event{kind: evNotice, conn: n.Conn, notice: n})
}

func (d *decoder) Close(c *reassembly.Conn) {
	d.convs[c].early.Close()
	delete(d.convs, c)
	d.emit(event{kind: evClose, conn: c})
}

// setStart tells a renderer that shows times relative to the capture's first packet when that
// packet was; only the first call counts.
func (p *Pipeline) setStart(t time.Time) {
	if s, ok := p.out.(interface{ SetStart(time.Time) }); ok {
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
		p.names.Add(ev.names)
		if p.notes && e.Msg != nil {
			p.names.Annotate(e.Msg)
		}
		if e.Facts != nil {
			p.names.Resolve(e.Facts)
		}
		if e.Session != nil {
			p.names.ResolveSession(e.Session)
		}
		if h := (heldRequest{e, ev.spilled}); !p.filterPair(h, ev.answered) {
			p.unhold(h)
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

// heldRequest is a request held until its response comes (Pipeline.pending), with its frame
// when that is outside the heap, closed once the request is let go.
type heldRequest struct {
	e       *model.Entry
	spilled *reassembly.Spilled
}

// filterPair shows an entry, or holds a request until its response lets the filter decide on
// the pair; it reports whether it held it (the entry's frame is then closed when it is let go).
func (p *Pipeline) filterPair(h heldRequest, answered bool) (held bool) {
	f, e := p.filter, h.e
	if f == nil {
		p.show(e)
		return false
	}
	switch {
	case f.pairOnly() && AwaitsResponse(e):
		// A request held with the same correlation id will not be answered now: decide on it
		// alone rather than lose it.
		if old, ok := p.pending.Hold(e, h); ok {
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
		req, _ = p.pending.Answer(e)
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
// if it has one.
func (p *Pipeline) unhold(h heldRequest) {
	if h.spilled != nil {
		p.keep(h.spilled.Close())
	}
}

// show renders an entry and counts it.
func (p *Pipeline) show(e *model.Entry) {
	if p.full() {
		return
	}
	p.showingStream(e.Stream)
	p.messages++
	if p.stats != nil {
		p.stats.Add(e)
	}
	if p.cfg.Save != nil {
		p.cfg.Save.shown(e)
	}
	p.wrote(p.out.Message(e))
}

// full reports whether the limit of messages is reached.
func (p *Pipeline) full() bool { return p.cfg.Limit > 0 && p.messages >= p.cfg.Limit }

// wrote ends the writing of a message or notice: the output is flushed if asked, and the run
// stopped at the limit or when the output cannot be written.
func (p *Pipeline) wrote(err error) {
	if p.cfg.Flush || p.flushEach {
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
	if p.stopped.Swap(true) {
		return
	}
	if r := p.reading.Load(); r != nil {
		r.Stop()
	}
	if p.cfg.Stop != nil {
		p.cfg.Stop()
	}
}

// Stopped reports whether the run was stopped early (Stop, Config.Limit, an output error).
func (p *Pipeline) Stopped() bool { return p.stopped.Load() }

// closed decides on the requests the filter still holds for a connection that ended: they got
// no response in the capture, so they are judged alone, in capture order.
func (p *Pipeline) closed(c *reassembly.Conn) {
	left := p.pending.Closed(c.ID)
	slices.SortFunc(left, func(a, b heldRequest) int { return a.e.Frame - b.e.Frame })
	for _, req := range left {
		if p.filter.match(req.e, nil) && !p.filter.sel.Responses {
			p.show(req.e)
		}
		p.unhold(req)
	}
}

// keep remembers the first write error (a closed pipe, a full disk).
func (p *Pipeline) keep(err error) {
	if err != nil && p.err == nil {
		p.err = err
	}
}

// File runs one capture file through the pipeline. Problems with single packets go to
// Config.Warn and reading goes on; it returns an error only when the file could not be read
// at all or stopped early.
func (p *Pipeline) File(name string) (packets int, err error) {
	if (p.notes || p.facts || p.filter != nil || p.stats != nil) && !capture.IsStreamName(name) {
		p.learnNames(name) // topic names from anywhere in the file; a FIFO can be read once
	}
	r, err := capture.Open(name)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return p.file(r, name)
}

// FileFrom is File for a capture read from in rather than a named file (stdin, gzipped or not); name is
// used in messages.
func (p *Pipeline) FileFrom(in io.Reader, name string) (packets int, err error) {
	r, err := capture.NewReader(in, name)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return p.file(r, name)
}

// file runs an opened capture file through the pipeline, and counts what it read.
func (p *Pipeline) file(r *capture.Reader, name string) (packets int, err error) {
	if r.Streaming() && p.cfg.Batch {
		return 0, fmt.Errorf("%s: %w", name, ErrNeedsFile)
	}
	defer func() {
		st := r.Stats()
		p.seen.Files++
		p.seen.Packets += st.Packets
		p.seen.TCP += st.TCP
		if n, pkt, capLen, length := r.Overlong(); n > 0 {
			p.cfg.Warn(fmt.Errorf("%s: %s claim more captured bytes than the packet had (the first: packet %d, %d > %d bytes), as some capture tools write them; read anyway, trusting the IP header's length",
				name, plural.Count(n, "packet record"), pkt, capLen, length))
		}
	}()
	if r.Streaming() {
		p.seen.Streamed = append(p.seen.Streamed, name)
	}
	if p.cfg.Progress != nil && !r.Streaming() {
		update, done := p.cfg.Progress(name)
		p.progress = func() {
			read, total := r.Progress()
			update(read, total, r.Stats().Packets)
		}
		defer func() {
			done()
			p.progress = nil
		}()
	}
	if p.cfg.Workers > 1 && !r.Streaming() {
		p.reading.Store(r)
		defer p.reading.Store(nil)
		if p.stopped.Load() {
			r.Stop()
		}
		return p.sharded(r, name)
	}
	return p.Read(r, name)
}

// Files runs capture files through the pipeline one after another, "-" naming stdin, which
// can be read once, until Config.Limit messages are shown; with Config.Save, each file is read
// again for it. With several files, an output that has a method File(name string) error
// is told each name first. Each file's error goes to fail and the next file is read all the
// same; an error telling the output stops the run.
func (p *Pipeline) Files(names []string, stdin io.Reader, fail func(error)) error {
	if len(names) > 1 {
		p.startAtEarliest(names)
	}
	stdinTaken := false
	for _, name := range names {
		if p.stopped.Load() {
			break // Config.Limit messages are shown, or Stop was called
		}
		if len(names) > 1 {
			if fo, ok := p.out.(interface{ File(string) error }); ok {
				if err := fo.File(name); err != nil {
					return err
				}
			}
		}
		var err error
		switch {
		case name != "-":
			_, err = p.File(name)
			if p.cfg.Save != nil {
				if serr := p.save(name); serr != nil {
					return serr
				}
			}
		case stdinTaken:
			err = fmt.Errorf("stdin (-) given twice: it can be read once")
		default:
			stdinTaken = true
			if p.cfg.Save != nil {
				var serr error
				if err, serr = p.stdinSaved(stdin); serr != nil {
					return serr
				}
				break
			}
			_, err = p.FileFrom(stdin, "stdin")
		}
		if err != nil {
			fail(err)
		}
	}
	return nil
}

// startAtEarliest tells the output, before anything is shown, that relative times count from
// the earliest of the files' first packets, whatever the order the files are read in: each
// file's first TCP packet is read for it. A pipe (stdin, a FIFO) cannot be read ahead, so it
// takes no part: its packets count from the same start, and with no other file, from its
// own first packet, as one file's do.
func (p *Pipeline) startAtEarliest(names []string) {
	if _, ok := p.out.(interface{ SetStart(time.Time) }); !ok {
		return
	}
	var earliest time.Time
	for _, name := range names {
		if name == "-" {
			continue
		}
		if t, ok := capture.FirstTime(name); ok && (earliest.IsZero() || t.Before(earliest)) {
			earliest = t
		}
	}
	if !earliest.IsZero() {
		p.setStart(earliest)
	}
}

// save reads a capture file again, for Config.Save to write the packets of the messages shown;
// its error is one writing them.
func (p *Pipeline) save(name string) error {
	r, err := capture.Open(name)
	if err != nil {
		return nil // as the first reading found
	}
	defer r.Close()
	return p.saveFrom(r)
}

func (p *Pipeline) saveFrom(r *capture.Reader) error {
	if err := p.cfg.Save.write(r); err != nil {
		return fmt.Errorf("writing the packets shown: %w", err)
	}
	return nil
}

// stdinSaved runs stdin through the pipeline for Config.Save, which must read it twice: it is
// kept in a temporary file meanwhile. readErr is the reading's, as FileFrom's; saveErr is one
// keeping or writing it.
func (p *Pipeline) stdinSaved(stdin io.Reader) (readErr, saveErr error) {
	tmp, err := os.CreateTemp("", "kdissect-stdin-*")
	if err != nil {
		return nil, fmt.Errorf("keeping stdin for -w: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := io.Copy(tmp, stdin); err != nil {
		return nil, fmt.Errorf("keeping stdin for -w: %w", err)
	}
	for pass := range 2 {
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("keeping stdin for -w: %w", err)
		}
		if pass == 0 {
			_, readErr = p.FileFrom(tmp, "stdin")
			continue
		}
		r, err := capture.NewReader(tmp, "stdin")
		if err != nil {
			return readErr, nil
		}
		defer r.Close()
		saveErr = p.saveFrom(r)
	}
	return readErr, saveErr
}

// Streams reports whether any of names, as Files takes them, is a capture that arrives as it is
// made: "-" when stdin is a pipe, or a FIFO. Such a run ends when its writer closes the pipe, or
// when it is stopped (Stop: Ctrl-C, Config.Limit).
func Streams(names []string, stdin io.Reader) bool {
	for _, name := range names {
		if name == "-" && capture.IsStream(stdin) {
			return true
		}
		if name != "-" && capture.IsStreamName(name) {
			return true
		}
	}
	return false
}

// options are the assembler's options for one capture.
func (p *Pipeline) options() reassembly.Options {
	opt := reassembly.Options{IsServerPort: p.cfg.IsServerPort, TLSKeys: p.keys, ManualFlush: true, ReuseFrames: p.lendFrames}
	if (p.lendFrames || p.cfg.Needs.Expands) && !p.cfg.Needs.Holds {
		// The output keeps no entry after writing it (lent frames, or JSON lines and diagrams,
		// which write records as they decode them): big frames may live in mapped files, which
		// are unmapped once the entry is written.
		switch {
		case p.cfg.SpillOver == 0:
			opt.SpillOver = spillOver
		case p.cfg.SpillOver > 0:
			opt.SpillOver = p.cfg.SpillOver
		}
	}
	if opt.IsServerPort == nil {
		opt.IsServerPort = func(uint16) bool { return false }
	}
	if p.cfg.Detect {
		opt.Detect = p.codec.DetectRequest
	}
	return opt
}

// Read runs the segments of a capture file or a live capture through the pipeline with one
// assembler, up to the end of the file or until the capture is stopped (Stop, Config.Limit);
// the assembler is flushed before it returns. name is the file or interface, for messages.
//
// A capture that arrives as it is made (r.Streaming(): a live capture, a pipe) is shown as it
// arrives: each message as soon as its last packet is read, the output flushed after each,
// and when no packet comes for a while, the connections are flushed as if the capture's clock
// had gone on with the wall clock, if the packets are being captured now (see follow): a
// capture file replayed through a pipe is shown as the file is, however its writer is delayed.
func (p *Pipeline) Read(r *capture.Reader, name string) (packets int, err error) {
	p.reading.Store(r)
	defer p.reading.Store(nil)
	if p.stopped.Load() {
		r.Stop()
	}
	clear(p.detected)
	var batch []event
	collecting := false
	asm := reassembly.New(p.newDecoder(func(ev event) {
		if collecting {
			batch = append(batch, ev)
		} else {
			p.handle(ev)
		}
	}), p.options())
	flush := func(f func()) {
		collecting = true
		f()
		collecting = false
		p.handleBatch(batch)
		batch = batch[:0]
	}
	defer flush(asm.Close)
	var clock reassembly.FlushClock
	next := r.Next
	if r.Streaming() {
		p.flushEach = true
		defer func() { p.flushEach = false }()
		next = follow(r, p.idleFlush, p.wall, func(now time.Time) { flush(func() { asm.Flush(now) }) })
	}
	return p.readSegments(r, name, next, func(seg *capture.Segment) {
		p.setStart(seg.Info.Timestamp)
		asm.Add(seg)
		if t := seg.Info.Timestamp; clock.Due(t) {
			flush(func() { asm.Flush(t) })
		}
	})
}

// handleBatch shows the events of a flush or of the end of a file. The assembler flushes its
// connections in no particular order; they are shown connection by connection, in the order
// of the earliest packet each reports (then in the order they started), each connection's
// events in the order they came.
func (p *Pipeline) handleBatch(evs []event) {
	first := map[*reassembly.Conn]int{}
	for _, ev := range evs {
		pkt := math.MaxInt
		switch ev.kind {
		case evEntry:
			pkt = ev.entry.FirstFrame
		case evNotice:
			pkt = ev.notice.Packet
		}
		if f, ok := first[ev.conn]; !ok || pkt < f {
			first[ev.conn] = pkt
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		if c := cmp.Compare(first[a.conn], first[b.conn]); c != 0 {
			return c
		}
		return cmp.Compare(a.conn.ID, b.conn.ID)
	})
	for _, ev := range evs {
		p.handle(ev)
	}
}

// readSegments reads r to its end with next (r.Next, or follow's) and gives each TCP segment to
// add; problems with single packets go to Config.Warn.
func (p *Pipeline) readSegments(r *capture.Reader, name string, next func() (*capture.Segment, error), add func(*capture.Segment)) (packets int, err error) {
	for {
		seg, err := next()
		if err != nil {
			var pe *capture.PacketError
			switch {
			case err == io.EOF:
				return r.Stats().Packets, nil
			case errors.As(err, &pe):
				p.cfg.Warn(pe)
				continue
			}
			return r.Stats().Packets, err
		}
		p.takeSecrets(r, name)
		if p.progress != nil {
			p.progress()
		}
		if seg.Truncated {
			p.cfg.Warn(fmt.Errorf("%s: packet %d: cut by the snap length, %s of TCP payload missing", name, seg.Num, plural.Count(seg.Missing, "byte")))
		}
		add(seg)
	}
}

// takeSecrets adds the TLS key logs of the pcapng Decryption Secrets Blocks read so far.
func (p *Pipeline) takeSecrets(r *capture.Reader, name string) {
	for _, s := range r.Secrets() {
		if s.Type != capture.SecretsTLSKeyLog {
			continue
		}
		if _, err := p.keys.Parse(bytes.NewReader(s.Data)); err != nil {
			p.cfg.Warn(fmt.Errorf("%s: Decryption Secrets Block: %w", name, err))
		}
	}
}
