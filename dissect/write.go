package dissect

import (
	"sync"

	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/render"
)

// Writing the messages shown on several goroutines. When a capture file is spread over shards
// and the renderer can write messages elsewhere (render.Parallel), show hands the messages, in
// batches, to Config.Workers writers, each with a render.Encoder of its own, and the merging
// goroutine writes their bytes in the order the messages were shown. All else stays on the
// merging goroutine, in order: what is shown, counted and filtered, the notices (the messages
// before one are written first), the frames outside the heap (closed once their message is
// written). A message's bytes are the same whoever writes them: the encoder is asked for once
// the renderer's state a message reads (start of capture, file name) is set.

const (
	// batchMessages and batchBytes cut the messages shown into the batches handed to the
	// writers: a goroutine woken for each message would cost more than most messages take
	// to write. batchBytes counts the messages' sizes on the wire.
	batchMessages = 64
	batchBytes    = 256 << 10
	// batchesPerWriter bounds the batches handed to the writers and not yet written out.
	batchesPerWriter = 3
	// keepBytes is the most a batch's buffer keeps for the next batch.
	keepBytes = 16 << 20
	// bigMessage: a message bigger than this is written by the renderer itself, as it is
	// made, rather than held whole in memory.
	bigMessage = 1 << 20
)

// writers are the goroutines writing a capture file's messages, and the batches of messages
// handed to them, in the order they are to be written.
type writers struct {
	out render.Parallel
	n   int
	// jobs feeds the writers, started with the first message (off: the renderer cannot);
	// own is the merging goroutine's encoder, for the batches it writes while it waits.
	jobs chan *writeJob
	own  render.Encoder
	off  bool
	wg   sync.WaitGroup
	// cur is the batch being filled, of curBytes on the wire; queue[head:] are the batches
	// handed over and not yet written; spare are batches to reuse.
	cur      *writeJob
	curBytes int
	queue    []*writeJob
	head     int
	spare    []*writeJob
}

// writeJob is a batch of messages to write: the entries in, their bytes out.
type writeJob struct {
	es   []*model.Entry
	b    []byte
	err  error
	done chan struct{}
	// closes are frames outside the heap to close once these messages are written (and so
	// every message before them).
	closes []*reassembly.Spilled
}

// newWriters returns the writers of a capture file read by shards, or nil when the messages
// are written by the renderer itself: it cannot write them elsewhere, it pairs them itself,
// or each message is flushed as it is shown.
func (p *Pipeline) newWriters() *writers {
	out, ok := p.out.(render.Parallel)
	if _, closer := p.out.(render.ConnCloser); !ok || closer || p.cfg.Flush || p.run.flushEach || p.cfg.Workers < 2 {
		return nil
	}
	return &writers{out: out, n: p.cfg.Workers}
}

// message writes a message shown, or hands it to the writers; an error writing it is kept
// when its bytes are written.
func (p *Pipeline) message(e *model.Entry) error {
	w := p.par
	if w == nil || !w.start() || e.Msg != nil && e.Msg.Size > bigMessage {
		p.written()
		return p.out.Message(e)
	}
	if w.cur == nil {
		if k := len(w.spare); k > 0 {
			w.cur, w.spare = w.spare[k-1], w.spare[:k-1]
		} else {
			w.cur = &writeJob{done: make(chan struct{}, 1)}
		}
	}
	w.cur.es = append(w.cur.es, e)
	if e.Msg != nil {
		w.curBytes += e.Msg.Size
	}
	if len(w.cur.es) >= batchMessages || w.curBytes >= batchBytes {
		p.handOver()
	}
	return nil
}

// handOver hands the batch being filled to the writers, and writes out the batches before it
// that are written, or must be to bound those in flight.
func (p *Pipeline) handOver() {
	w := p.par
	if w.cur == nil {
		return
	}
	w.jobs <- w.cur
	w.queue = append(w.queue, w.cur)
	w.cur, w.curBytes = nil, 0
	if len(w.queue)-w.head >= batchesPerWriter*w.n {
		p.writeNext()
	}
	for w.head < len(w.queue) && w.queue[w.head].ready() {
		p.writeNext()
	}
}

// start starts the writers if they are not yet, and reports whether they write.
func (w *writers) start() bool {
	if w.jobs != nil || w.off {
		return !w.off
	}
	enc := w.out.Encoder()
	if enc == nil {
		w.off = true
		return false
	}
	// Room for every batch in flight: handing one over never waits.
	w.jobs = make(chan *writeJob, batchesPerWriter*w.n)
	w.own = enc
	for range w.n {
		enc = w.out.Encoder()
		w.wg.Add(1)
		go func(enc render.Encoder) {
			defer w.wg.Done()
			for j := range w.jobs {
				j.write(enc)
			}
		}(enc)
	}
	return true
}

// write makes the batch's bytes with enc, stopping at the first error.
func (j *writeJob) write(enc render.Encoder) {
	j.b = j.b[:0]
	for _, e := range j.es {
		if j.b, j.err = enc.AppendMessage(j.b, e); j.err != nil {
			break
		}
	}
	j.done <- struct{}{}
}

// ready reports whether the batch's bytes are made; once it has said so, it must be written.
func (j *writeJob) ready() bool {
	select {
	case <-j.done:
		j.done <- struct{}{}
		return true
	default:
		return false
	}
}

// writeNext waits for the next batch handed to the writers and writes its bytes.
func (p *Pipeline) writeNext() {
	w := p.par
	j := w.queue[w.head]
	w.queue[w.head] = nil
	w.head++
	if w.head == len(w.queue) {
		w.queue, w.head = w.queue[:0], 0
	}
	// Rather than wait idle, the merging goroutine writes batches not yet taken: on a busy
	// machine the writers may not run for a while.
	for !j.ready() {
		select {
		case <-j.done:
			j.done <- struct{}{}
		case other := <-w.jobs:
			other.write(w.own)
		}
	}
	<-j.done
	err := w.out.WriteEncoded(j.b)
	if j.err != nil {
		err = j.err
	}
	p.keep(err)
	if err != nil {
		p.Stop()
	}
	for _, s := range j.closes {
		p.keep(s.Close())
	}
	clear(j.closes)
	clear(j.es)
	j.es, j.err, j.closes = j.es[:0], nil, j.closes[:0]
	if cap(j.b) > keepBytes {
		j.b = nil
	}
	w.spare = append(w.spare, j)
}

// written writes every message handed to the writers: the renderer writes next.
func (p *Pipeline) written() {
	if p.par == nil {
		return
	}
	p.handOver()
	for p.par.head < len(p.par.queue) {
		p.writeNext()
	}
}

// closeWhenWritten closes a frame outside the heap once the messages shown so far are written.
func (p *Pipeline) closeWhenWritten(s *reassembly.Spilled) {
	w := p.par
	switch {
	case w != nil && w.cur != nil:
		w.cur.closes = append(w.cur.closes, s)
	case w != nil && w.head < len(w.queue):
		last := w.queue[len(w.queue)-1]
		last.closes = append(last.closes, s)
	default:
		p.keep(s.Close())
	}
}

// stopWriters writes what the writers hold and ends them.
func (p *Pipeline) stopWriters() {
	if p.par == nil {
		return
	}
	p.written()
	if p.par.jobs != nil {
		close(p.par.jobs)
		p.par.wg.Wait()
	}
	p.par = nil
}
