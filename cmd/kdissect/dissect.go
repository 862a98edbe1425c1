package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
	"github.com/kdissect/kdissect/render"
)

// pipeline wires a capture through reassembly and the codec to a renderer.
type pipeline struct {
	codec *codec.Codec
	out   render.Renderer
	convs map[*reassembly.Conn]*codec.Conversation
	// held keeps, per connection, responses that arrived before any request they could answer.
	held map[*reassembly.Conn][]reassembly.Frame
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
	// nextStream numbers the connections of the next capture file after those of the last.
	nextStream int
	// showProgress asks for a progress line on stderr while files are read; progress, while one
	// is read, updates it after each packet.
	showProgress bool
	progress     func()
	// keys decrypt TLS: --tls-keylog and the captures' Decryption Secrets Blocks.
	keys *tlsdec.KeyLog
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
	return &pipeline{codec: c, out: out, convs: map[*reassembly.Conn]*codec.Conversation{},
		held: map[*reassembly.Conn][]reassembly.Frame{}, pending: map[pairKey]*render.Entry{}, keys: tlsdec.NewKeyLog()}
}

// showing tells the pipeline which output format it feeds, so that it computes only what that
// format shows.
func (p *pipeline) showing(format string) {
	p.noNotes = format == "summary" || format == "none"
	p.noFacts = format == "diagram" || format == "json"
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

func (p *pipeline) Open(c *reassembly.Conn) (toServer, toClient reassembly.Checker) {
	cv := p.codec.NewConversation()
	p.convs[c] = cv
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
func (p *pipeline) Frame(f reassembly.Frame) {
	cv := p.convs[f.Conn]
	if f.Dir == reassembly.ToClient && !cv.Expects(f.Data) {
		h := append(p.held[f.Conn], f)
		if len(h) > maxHeld {
			p.frame(h[0])
			h = h[1:]
		}
		p.held[f.Conn] = h
		return
	}
	if f.Dir == reassembly.ToClient || len(p.held[f.Conn]) == 0 {
		p.frame(f)
		return
	}
	// Responses captured before this request cannot answer it: their requests are not in the
	// capture. Show them first, to keep capture order, then the request and what it answers.
	// A response with this request's correlation id is kept for it even when it was captured
	// first: a capture merged from two interfaces, or taken on a multi-queue NIC, can hold a
	// request after its response.
	var keep []reassembly.Frame
	for _, r := range p.held[f.Conn] {
		if r.LastPacket < f.FirstPacket && !codec.Answers(r.Data, f.Data) {
			p.frame(r)
		} else {
			keep = append(keep, r)
		}
	}
	p.frame(f)
	p.held[f.Conn] = keep[:0]
	for _, r := range keep {
		if cv.Expects(r.Data) {
			p.frame(r)
		} else {
			p.held[f.Conn] = append(p.held[f.Conn], r)
		}
	}
}

// frame decodes and renders one frame.
func (p *pipeline) frame(f reassembly.Frame) {
	cv := p.convs[f.Conn]
	e := &render.Entry{Frame: f.LastPacket, FirstFrame: f.FirstPacket, Time: f.LastTime, Stream: f.Conn.ID, Bytes: f.Data, TLS: f.TLS}
	e.Src, e.Dst = endpoints(f.Conn, f.Dir)
	var res codec.Result
	if f.Dir == reassembly.ToServer {
		e.Request = true
		res = cv.ClientFrame(f.Data, request{frame: f.LastPacket, time: f.LastTime})
	} else {
		res = cv.ServerFrame(f.Data)
	}
	e.Msg, e.NoResponse = res.Msg, res.NoResponse
	if e.Msg != nil {
		e.Bytes = e.Msg.Redact(f.Data) // no password in hex dumps
	}
	if res.Request != nil {
		if r, ok := res.Request.Ref.(request); ok {
			e.RequestFrame, e.Latency = r.frame, f.LastTime.Sub(r.time)
		}
	}
	if e.Msg != nil && !res.SASLToken {
		p.names.Learn(e.Msg)
		if !p.noNotes {
			p.names.Annotate(e.Msg)
		}
		if !p.noFacts || p.filter != nil || p.stats != nil {
			facts := e.Msg.Facts()
			p.names.Resolve(&facts)
			e.Facts = &facts
		}
	}
	p.filterPair(e, res.Request != nil)
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

func (p *pipeline) Notice(n reassembly.Notice) {
	if p.filter != nil && !p.filter.streamOK(n.Conn.ID) {
		return
	}
	src, dst := endpoints(n.Conn, n.Dir)
	p.notices++
	p.keep(p.out.Notice(&render.Notice{Frame: n.Packet, Time: n.Time, Stream: n.Conn.ID, Src: src, Dst: dst, Text: n.Msg}))
}

func (p *pipeline) Close(c *reassembly.Conn) {
	for _, r := range p.held[c] {
		p.frame(r)
	}
	delete(p.held, c)
	delete(p.convs, c)
	// Requests still held by the filter got no response in the capture: decide on them alone,
	// in capture order.
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

// dissectFile runs one capture file through the pipeline. Problems with single packets are
// reported on stderr and reading goes on; it returns an error only when the file could not be
// read at all or stopped early.
func dissectFile(name string, p *pipeline, opt reassembly.Options, stderr io.Writer) (packets int, err error) {
	r, err := capture.Open(name)
	if err != nil {
		return 0, err
	}
	defer r.Close()
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
	return dissectReader(r, name, p, opt, stderr)
}

// dissectReader runs the segments of a capture file or a live capture through the pipeline, up
// to the end of the file or until the live capture is stopped; the assembler is flushed before
// it returns. name is the file or interface, for messages.
func dissectReader(r *capture.Reader, name string, p *pipeline, opt reassembly.Options, stderr io.Writer) (packets int, err error) {
	opt.FirstID = p.nextStream
	opt.TLSKeys = p.keys
	asm := reassembly.New(p, opt)
	defer func() {
		asm.Close()
		p.nextStream = asm.NextID()
	}()
	for {
		seg, err := r.Next()
		var pe *capture.PacketError
		switch {
		case err == io.EOF:
			return r.Stats().Packets, nil
		case errors.As(err, &pe):
			fmt.Fprintf(stderr, "kdissect: %v\n", pe)
			continue
		case err != nil:
			return r.Stats().Packets, err
		}
		p.takeSecrets(r, name, stderr)
		if p.progress != nil {
			p.progress()
		}
		if s, ok := p.out.(interface{ SetStart(time.Time) }); ok {
			s.SetStart(seg.Info.Timestamp)
		}
		if seg.Truncated {
			fmt.Fprintf(stderr, "kdissect: %s: packet %d: cut by the snap length, %d bytes of TCP payload missing\n", name, seg.Num, seg.Missing)
		}
		asm.Add(seg)
	}
}
