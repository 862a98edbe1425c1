package dissect

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
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/reassembly"
)

// File runs one capture file through the pipeline, as Read does; when Plan.LearnNames, a
// first pass over the file learns the topic names it gives anywhere (names.go), before the
// file is shown or when an entry first needs it.
func (p *Pipeline) File(name string) (packets int, err error) {
	r, err := capture.Open(name)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	p.learnFirst(name, r)
	defer func() { p.names.deferred = "" }()
	return p.Read(r, name)
}

// Read runs a capture through the pipeline, up to its end or until the run is stopped (Stop,
// Config.Limit): a capture file (spread over Config.Workers assemblers), stdin, a live
// capture. name is the file or interface, for messages. Problems with single packets go to
// Config.Warn and reading goes on; it returns an error only when the capture could not be
// read at all or stopped early.
//
// A capture that arrives as it is made (r.Streaming(): a live capture, a pipe) is shown as it
// arrives: each message as soon as its last packet is read, the output flushed after each,
// and when no packet comes for a while, the connections are flushed as if the capture's clock
// had gone on with the wall clock, if the packets are being captured now (see follow): a
// capture file replayed through a pipe is shown as the file is, however its writer is delayed.
func (p *Pipeline) Read(r *capture.Reader, name string) (packets int, err error) {
	if r.Streaming() && p.cfg.Batch {
		return 0, fmt.Errorf("%s: %w", name, ErrNeedsFile)
	}
	defer p.counted(r, name)
	if r.Streaming() {
		p.seen.Streamed = append(p.seen.Streamed, name)
	}
	if p.cfg.Tap != nil {
		r.SetTap(p.cfg.Tap)
	}
	p.run.reading.Store(r)
	defer p.run.reading.Store(nil)
	if p.run.stopped.Load() {
		r.Stop()
	}
	clear(p.sel.detected)
	if p.cfg.Workers > 1 && !r.Streaming() {
		return p.sharded(r, name)
	}
	return p.single(r, name)
}

// counted counts what a capture read held, once it is read.
func (p *Pipeline) counted(r *capture.Reader, name string) {
	st := r.Stats()
	p.seen.Files++
	p.seen.Packets += st.Packets
	p.seen.TCP += st.TCP
	if n, pkt, capLen, length := r.Overlong(); n > 0 {
		p.cfg.Warn(fmt.Errorf("%s: %s claim more captured bytes than the packet had (the first: packet %d, %d > %d bytes), as some capture tools write them; read anyway, trusting the IP header's length",
			name, plural.Count(n, "packet record"), pkt, capLen, length))
	}
}

// single reads a capture with one assembler, which is flushed before it returns.
func (p *Pipeline) single(r *capture.Reader, name string) (packets int, err error) {
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
		p.run.flushEach = true
		defer func() { p.run.flushEach = false }()
		next = follow(r, p.clock.idle, p.clock.wall, func(now time.Time) { flush(func() { asm.Flush(now) }) })
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
		if p.cfg.Progress != nil && !r.Streaming() {
			read, size := r.Progress()
			p.cfg.Progress(read, size, r.Stats().Packets)
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
		if _, err := p.cfg.Keys.Parse(bytes.NewReader(s.Data)); err != nil {
			p.cfg.Warn(fmt.Errorf("%s: Decryption Secrets Block: %w", name, err))
		}
	}
}
