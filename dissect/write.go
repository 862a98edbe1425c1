package dissect

import (
	"sync"

	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/render"
)

// Writing the messages shown on several goroutines. When a capture file is spread over shards
// and the renderer can write messages elsewhere (render.Parallel), show hands each message to
// one of Config.Workers writers, each with a render.Encoder of its own, and the merging
// goroutine writes their bytes in the order the messages were shown. All else stays on the
// merging goroutine, in order: what is shown, counted and filtered, the notices (the messages
// before one are written first), the frames outside the heap (closed once their message is
// written). A message's bytes are the same whoever writes them: the encoder is asked for once
// the renderer's state a message reads (start of capture, file name) is set.

const (
	// writesInFlight bounds the messages handed to the writers and not yet written out.
	writesInFlight = 256
	// bigMessage: a message bigger than this is written by the renderer itself, as it is
	// made, rather than held whole in memory.
	bigMessage = 1 << 20
)

// writers are the goroutines writing a capture file's messages, and the messages handed to
// them, in the order they are to be written.
type writers struct {
	out render.Parallel
	n   int
	// jobs feeds the writers, started with the first message (off: the renderer cannot).
	jobs chan *writeJob
	off  bool
	wg   sync.WaitGroup
	// queue[head:] are the messages handed over and not yet written; spare are jobs to reuse.
	queue []*writeJob
	head  int
	spare []*writeJob
}

// writeJob is one message to write: the entry in, its bytes out.
type writeJob struct {
	e    *model.Entry
	b    []byte
	err  error
	done chan struct{}
	// closes are frames outside the heap to close once this message is written (and so every
	// message before it).
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

// message writes a message shown, or hands it to the writers; errors writing it are kept
// when its bytes are written.
func (p *Pipeline) message(e *model.Entry) error {
	w := p.par
	if w == nil || !w.start() || e.Msg != nil && e.Msg.Size > bigMessage {
		p.written()
		return p.out.Message(e)
	}
	var j *writeJob
	if k := len(w.spare); k > 0 {
		j, w.spare = w.spare[k-1], w.spare[:k-1]
	} else {
		j = &writeJob{done: make(chan struct{}, 1)}
	}
	j.e = e
	w.jobs <- j
	w.queue = append(w.queue, j)
	if len(w.queue)-w.head >= writesInFlight {
		p.writeNext()
	}
	for w.head < len(w.queue) && w.queue[w.head].ready() {
		p.writeNext()
	}
	return nil
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
	w.jobs = make(chan *writeJob, writesInFlight)
	for i := range w.n {
		if i > 0 {
			enc = w.out.Encoder()
		}
		w.wg.Add(1)
		go func(enc render.Encoder) {
			defer w.wg.Done()
			for j := range w.jobs {
				j.b, j.err = enc.AppendMessage(j.b[:0], j.e)
				j.done <- struct{}{}
			}
		}(enc)
	}
	return true
}

// ready reports whether the job's bytes are made; once it has said so, it must be written.
func (j *writeJob) ready() bool {
	select {
	case <-j.done:
		j.done <- struct{}{}
		return true
	default:
		return false
	}
}

// writeNext waits for the next message handed to the writers and writes its bytes.
func (p *Pipeline) writeNext() {
	w := p.par
	j := w.queue[w.head]
	w.queue[w.head] = nil
	w.head++
	if w.head == len(w.queue) {
		w.queue, w.head = w.queue[:0], 0
	}
	<-j.done
	err := j.err
	if err == nil {
		err = w.out.WriteEncoded(j.b)
	}
	p.keep(err)
	if err != nil {
		p.Stop()
	}
	for _, s := range j.closes {
		p.keep(s.Close())
	}
	clear(j.closes)
	j.e, j.err, j.closes = nil, nil, j.closes[:0]
	if cap(j.b) > bigMessage {
		j.b = nil
	}
	w.spare = append(w.spare, j)
}

// written writes every message handed to the writers: the renderer writes next.
func (p *Pipeline) written() {
	for p.par != nil && p.par.head < len(p.par.queue) {
		p.writeNext()
	}
}

// closeWhenWritten closes a frame outside the heap once the messages shown so far are written.
func (p *Pipeline) closeWhenWritten(s *reassembly.Spilled) {
	if w := p.par; w != nil && w.head < len(w.queue) {
		last := w.queue[len(w.queue)-1]
		last.closes = append(last.closes, s)
		return
	}
	p.keep(s.Close())
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
