package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
	"github.com/kdissect/kdissect/render"
)

// The pipeline has two halves. A decoder follows the connections of one assembler: it pairs
// responses with requests and decodes every frame into an entry. The pipeline itself takes what
// the decoders find, in capture order, and shows it: it numbers connections, learns topic names,
// filters, counts and renders. With one assembler the halves are chained by a function call;
// a capture file spread over several assemblers (shard.go) has one decoder per assembler and
// the pipeline merges their events back into capture order.

// pipeline shows what the decoders find.
type pipeline struct {
	codec *codec.Codec
	out   render.Renderer
	// counts for the exit status and the closing line
	messages, notices int
	err               error
	// names learns topic names for topic ids along the capture.
	names codec.TopicNames
	// filter, when set, holds each request until its response decides the pair (pending).
	filter  *filter
	pending map[pairKey]*render.Entry
	// stats, when set, counts every message shown.
	stats *render.Stats
	// noNotes and noFacts skip work the output does not use: topic-name notes on topic ids
	// (shown by diagrams and JSON), and message facts (shown by summaries, used by filters and
	// statistics).
	noNotes, noFacts bool
	// lendFrames: the output shows neither a frame's bytes nor its field tree, so reassembly
	// may lend frames rather than give them (reassembly.Options.ReuseFrames), and decoders
	// release each message's tree as soon as they have its facts.
	lendFrames bool
	// nextStream numbers connections in the order their first packet appears, over all the
	// capture files (tshark's tcp.stream).
	nextStream int
	// detected holds the ports already reported as Kafka by detection in the current file:
	// each assembler reports a port once, and several assemblers may share a file.
	detected map[uint16]bool
	// showProgress asks for a progress line on stderr while files are read; progress, while one
	// is read, updates it after each packet.
	showProgress bool
	progress     func()
	// keys decrypt TLS: --tls-keylog and the captures' Decryption Secrets Blocks.
	keys *tlsdec.KeyLog
	// workers is how many assemblers share a capture file (1: no goroutines); roundPackets is
	// how many segments they are given at a time (0: the default, see shard.go).
	workers, roundPackets int
	// counts, when set, counts what the run finds, for a run that shows nothing (silence.go).
	counts *runCounts
}

// pairKey finds a held request: its connection and correlation id.
type pairKey struct {
	stream int
	corr   int32
}

// request is what a conversation remembers of a request: where it was seen.
type request struct {
	frame int
	time  time.Time
}

func newPipeline(c *codec.Codec, out render.Renderer) *pipeline {
	return &pipeline{codec: c, out: out, pending: map[pairKey]*render.Entry{}, keys: tlsdec.NewKeyLog(),
		detected: map[uint16]bool{}, workers: 1}
}

// showing tells the pipeline which output format it feeds, so that it computes only what that
// format shows.
func (p *pipeline) showing(format string) {
	p.noNotes = format == "summary" || format == "none"
	p.noFacts = format == "diagram" || format == "json"
	p.lendFrames = format == "summary" || format == "none"
}

// selectWith applies the selection flags: a filter and the statistics.
func (p *pipeline) selectWith(s *selection) error {
	f, err := s.build(p.codec)
	if err != nil {
		return err
	}
	p.filter = f
	if s.stats {
		p.stats = render.NewStats()
	}
	return nil
}

// eventKind says what a decoder found.
type eventKind uint8

const (
	evStart  eventKind = iota // a connection got its ID
	evEntry                   // a message (or SASL token) was decoded
	evNotice                  // something to report that is not a message
	evClose                   // a connection ended
)

// event is what a decoder hands to the pipeline.
type event struct {
	kind   eventKind
	conn   *reassembly.Conn
	entry  *render.Entry
	notice reassembly.Notice
	// answered: the entry is a response whose request was captured; names: the topic names
	// the entry's message gives topic ids, to be learnt in capture order.
	answered bool
	names    []codec.TopicIDName
}

// conn is what a decoder keeps of a connection: its conversation, and its endpoints as shown.
type conn struct {
	cv             *codec.Conversation
	client, server string
}

// decoder is the decoding half of the pipeline for one assembler: it is the assembler's
// reassembly.Handler, and it hands each finding to emit in the order it makes them.
type decoder struct {
	codec *codec.Codec
	convs map[*reassembly.Conn]*conn
	// held keeps, per connection, responses that arrived before any request they could answer.
	held map[*reassembly.Conn][]reassembly.Frame
	// facts: compute each message's facts (see pipeline.noFacts).
	facts bool
	// lent: frames are only lent (pipeline.lendFrames): those held are copied, and entries get
	// neither bytes nor field trees.
	lent bool
	emit func(event)
}

// newDecoder returns a decoder for one assembler that reports to emit.
func (p *pipeline) newDecoder(emit func(event)) *decoder {
	return &decoder{codec: p.codec, convs: map[*reassembly.Conn]*conn{},
		held: map[*reassembly.Conn][]reassembly.Frame{}, emit: emit, lent: p.lendFrames,
		facts: !p.noFacts || p.filter != nil || p.stats != nil}
}

// Started passes every new connection on, for the pipeline to number it.
func (d *decoder) Started(c *reassembly.Conn) { d.emit(event{kind: evStart, conn: c}) }

func (d *decoder) Open(c *reassembly.Conn) (toServer, toClient reassembly.Checker) {
	cv := d.codec.NewConversation()
	d.convs[c] = &conn{cv: cv, client: c.Client.String(), server: c.Server.String()}
	return func(head []byte, synced bool) reassembly.Verdict {
			return reassembly.Verdict(cv.Check(true, head, synced))
		}, func(head []byte, synced bool) reassembly.Verdict {
			return reassembly.Verdict(cv.Check(false, head, synced))
		}
}

func endpoints(c *reassembly.Conn, d reassembly.Dir) (string, string) {
	if d == reassembly.ToServer {
		return c.Client.String(), c.Server.String()
	}
	return c.Server.String(), c.Client.String()
}

// maxHeld bounds the responses held per connection while waiting for their requests.
const maxHeld = 64

// Frame takes a frame from reassembly. The two directions of a connection can reach us out of
// order (one waited behind a gap), so a response whose request has not been seen yet is held
// until a request with that correlation id arrives, or until the client has sent something
// captured after the response, which proves the request is not in the capture.
func (d *decoder) Frame(f reassembly.Frame) {
	cv := d.convs[f.Conn].cv
	if f.Dir == reassembly.ToClient && !cv.Expects(f.Data) {
		if d.lent {
			f.Data = bytes.Clone(f.Data)
		}
		h := append(d.held[f.Conn], f)
		if len(h) > maxHeld {
			d.frame(h[0])
			h = h[1:]
		}
		d.held[f.Conn] = h
		return
	}
	if f.Dir == reassembly.ToClient || len(d.held[f.Conn]) == 0 {
		d.frame(f)
		return
	}
	// Responses captured before this request cannot answer it: their requests are not in the
	// capture. Show them first, to keep capture order, then the request and what it answers.
	// A response with this request's correlation id is kept for it even when it was captured
	// first: a capture merged from two interfaces, or taken on a multi-queue NIC, can hold a
	// request after its response.
	var keep []reassembly.Frame
	for _, r := range d.held[f.Conn] {
		if r.LastPacket < f.FirstPacket && !codec.Answers(r.Data, f.Data) {
			d.frame(r)
		} else {
			keep = append(keep, r)
		}
	}
	d.frame(f)
	d.held[f.Conn] = keep[:0]
	for _, r := range keep {
		if cv.Expects(r.Data) {
			d.frame(r)
		} else {
			d.held[f.Conn] = append(d.held[f.Conn], r)
		}
	}
}

// frame decodes one frame into an entry.
func (d *decoder) frame(f reassembly.Frame) {
	cs := d.convs[f.Conn]
	cv := cs.cv
	e := &render.Entry{Frame: f.LastPacket, FirstFrame: f.FirstPacket, Time: f.LastTime, Bytes: f.Data, TLS: f.TLS}
	e.Src, e.Dst = cs.client, cs.server
	if f.Dir == reassembly.ToClient {
		e.Src, e.Dst = cs.server, cs.client
	}
	var res codec.Result
	if f.Dir == reassembly.ToServer {
		e.Request = true
		res = cv.ClientFrame(f.Data, request{frame: f.LastPacket, time: f.LastTime})
	} else {
		res = cv.ServerFrame(f.Data)
	}
	e.Msg, e.NoResponse = res.Msg, res.NoResponse
	if e.Msg != nil && !d.lent {
		e.Bytes = e.Msg.Redact(f.Data) // no password in hex dumps
	}
	if res.Request != nil {
		if r, ok := res.Request.Ref.(request); ok {
			e.RequestFrame, e.Latency = r.frame, f.LastTime.Sub(r.time)
		}
	}
	ev := event{kind: evEntry, conn: f.Conn, entry: e, answered: res.Request != nil}
	if e.Msg != nil && !res.SASLToken {
		if d.facts {
			facts := e.Msg.Facts()
			e.Facts = &facts
		}
		ev.names = e.Msg.TopicIDNames()
	}
	if d.lent {
		// Nothing after this reads the tree, and the frame's memory will hold another frame:
		// the entry keeps neither, and the next messages' trees may use the nodes. What the
		// entry keeps are copies.
		e.Bytes = nil
		if e.Msg != nil {
			d.codec.Release(e.Msg)
		}
	}
	d.emit(ev)
}

func (d *decoder) Notice(n reassembly.Notice) {
	d.emit(event{kind: evNotice, conn: n.Conn, notice: n})
}

func (d *decoder) Close(c *reassembly.Conn) {
	for _, r := range d.held[c] {
		d.frame(r)
	}
	delete(d.held, c)
	delete(d.convs, c)
	d.emit(event{kind: evClose, conn: c})
}

// setStart tells a renderer that shows times relative to the capture's first packet when that
// packet was; only the first call counts.
func (p *pipeline) setStart(t time.Time) {
	if s, ok := p.out.(interface{ SetStart(time.Time) }); ok {
		s.SetStart(t)
	}
}

// handle shows one event. Events come in capture order.
func (p *pipeline) handle(ev event) {
	if p.counts != nil {
		p.counts.event(ev)
	}
	switch ev.kind {
	case evStart:
		// The assembler that found the connection numbered it among its own; this is the
		// number among all of them. Its decoder does not read the ID.
		ev.conn.ID = p.nextStream
		p.nextStream++
	case evEntry:
		e := ev.entry
		e.Stream = ev.conn.ID
		p.names.Add(ev.names)
		if !p.noNotes && e.Msg != nil {
			p.names.Annotate(e.Msg)
		}
		if e.Facts != nil {
			p.names.Resolve(e.Facts)
		}
		p.filterPair(e, ev.answered)
	case evNotice:
		p.notice(ev.notice)
	case evClose:
		p.closed(ev.conn)
	}
}

// filterPair shows an entry, or holds a request until its response lets the filter decide on
// the pair.
func (p *pipeline) filterPair(e *render.Entry, answered bool) {
	f := p.filter
	if f == nil {
		p.show(e)
		return
	}
	switch {
	case e.Request && f.pairOnly() && !e.NoResponse && e.Msg != nil && e.Msg.APIKey >= 0:
		k := pairKey{e.Stream, e.Msg.CorrelationID}
		// A request held with the same correlation id will not be answered now: the client
		// reused the id. Decide on it alone rather than lose it.
		if old := p.pending[k]; old != nil && f.match(old, nil) && !f.sel.responses {
			p.show(old)
		}
		p.pending[k] = e
	case e.Request:
		if f.match(e, nil) && !f.sel.responses {
			p.show(e)
		}
	default:
		var req *render.Entry
		if answered && e.Msg != nil {
			k := pairKey{e.Stream, e.Msg.CorrelationID}
			req = p.pending[k]
			delete(p.pending, k)
		}
		if !f.match(req, e) {
			return
		}
		if req != nil && !f.sel.responses {
			p.show(req)
		}
		if !f.sel.requests {
			p.show(e)
		}
	}
}

// show renders an entry and counts it.
func (p *pipeline) show(e *render.Entry) {
	p.messages++
	if p.stats != nil {
		p.stats.Add(e)
	}
	p.keep(p.out.Message(e))
}

func (p *pipeline) notice(n reassembly.Notice) {
	if n.Kind == reassembly.NoticeDetected {
		port := n.Conn.Server.Port()
		if p.detected[port] {
			return
		}
		p.detected[port] = true
	}
	if p.filter != nil && !p.filter.streamOK(n.Conn.ID) {
		return
	}
	src, dst := endpoints(n.Conn, n.Dir)
	p.notices++
	p.keep(p.out.Notice(&render.Notice{Frame: n.Packet, Time: n.Time, Stream: n.Conn.ID, Src: src, Dst: dst, Text: n.Msg}))
}

// closed decides on the requests the filter still holds for a connection that ended: they got
// no response in the capture, so they are judged alone, in capture order.
func (p *pipeline) closed(c *reassembly.Conn) {
	var left []*render.Entry
	for k, req := range p.pending {
		if k.stream == c.ID {
			delete(p.pending, k)
			left = append(left, req)
		}
	}
	slices.SortFunc(left, func(a, b *render.Entry) int { return a.Frame - b.Frame })
	for _, req := range left {
		if p.filter.match(req, nil) && !p.filter.sel.responses {
			p.show(req)
		}
	}
}

// keep remembers the first write error (a closed pipe, a full disk).
func (p *pipeline) keep(err error) {
	if err != nil && p.err == nil {
		p.err = err
	}
}

// dissectFile runs one capture file, opened as r, through the pipeline. Problems with single packets are
// reported on stderr and reading goes on; it returns an error only when the file could not be
// read at all or stopped early.
func dissectFile(r *capture.Reader, name string, p *pipeline, opt reassembly.Options, stderr io.Writer) (packets int, err error) {
	if p.showProgress {
		pr := newProgress(stderr, time.Now)
		p.progress = func() {
			read, total := r.Progress()
			pr.update(read, total, r.Stats().Packets)
		}
		stderr = pr // messages on stderr erase the progress line first
		defer func() {
			pr.clear()
			p.progress = nil
		}()
	}
	if p.workers > 1 {
		return dissectSharded(r, name, p, opt, stderr)
	}
	return dissectReader(r, name, p, opt, stderr)
}

// dissectReader runs the segments of a capture file or a live capture through the pipeline, up
// to the end of the file or until the live capture is stopped; the assembler is flushed before
// it returns. name is the file or interface, for messages.
func dissectReader(r *capture.Reader, name string, p *pipeline, opt reassembly.Options, stderr io.Writer) (packets int, err error) {
	clear(p.detected)
	opt.FirstID = p.nextStream
	opt.TLSKeys = p.keys
	opt.ManualFlush = true
	opt.ReuseFrames = p.lendFrames
	var batch []event
	collecting := false
	asm := reassembly.New(p.newDecoder(func(ev event) {
		if collecting {
			batch = append(batch, ev)
		} else {
			p.handle(ev)
		}
	}), opt)
	flush := func(f func()) {
		collecting = true
		f()
		collecting = false
		p.handleBatch(batch)
		batch = batch[:0]
	}
	defer flush(asm.Close)
	var clock flushClock
	return readSegments(r, name, p, stderr, func(seg *capture.Segment) {
		p.setStart(seg.Info.Timestamp)
		asm.Add(seg)
		if t := seg.Info.Timestamp; clock.due(t) {
			flush(func() { asm.Flush(t) })
		}
	})
}

// flushClock applies reassembly.Assembler's flushing rule to a whole capture: a flush is due
// once a segment's time is FlushInterval past the last flush.
type flushClock struct{ last time.Time }

func (c *flushClock) due(t time.Time) bool {
	if c.last.IsZero() {
		c.last = t
	}
	if t.Sub(c.last) < reassembly.FlushInterval {
		return false
	}
	c.last = t
	return true
}

// handleBatch shows the events of a flush or of the end of a file. The assembler flushes its
// connections in no particular order; they are shown connection by connection, in the order
// of the earliest packet each reports (then in the order they started), each connection's
// events in the order they came.
func (p *pipeline) handleBatch(evs []event) {
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

// readSegments reads r to its end and gives each TCP segment to add; problems with single
// packets are reported on stderr.
func readSegments(r *capture.Reader, name string, p *pipeline, stderr io.Writer, add func(*capture.Segment)) (packets int, err error) {
	for {
		seg, err := r.Next()
		if err != nil {
			var pe *capture.PacketError
			switch {
			case err == io.EOF:
				return r.Stats().Packets, nil
			case errors.As(err, &pe):
				fmt.Fprintf(stderr, "kdissect: %v\n", pe)
				continue
			}
			return r.Stats().Packets, err
		}
		p.takeSecrets(r, name, stderr)
		if p.progress != nil {
			p.progress()
		}
		if seg.Truncated {
			fmt.Fprintf(stderr, "kdissect: %s: packet %d: cut by the snap length, %d bytes of TCP payload missing\n", name, seg.Num, seg.Missing)
		}
		add(seg)
	}
}
