package dissect

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/kdissect/kdissect/internal/pieces"
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
//
// A batch's bytes are kept in pieces of pieceBytes (batchOut), taken from a list of free pieces
// and given back once written out: the same memory serves batch after batch, where buffers
// grown by copying would be fresh memory to fault in (each fault costs much in a virtual
// machine), and the bytes in flight are bounded by those of the pieces, whatever the size of
// the batches.
//
// A big message is a batch of its own, and its bytes are not held whole: the writer that takes
// it hands them to the merging goroutine in pieces as it makes them, which writes them out as
// they come once the message is next. Pieces made ahead, while other messages are written out,
// are held in memory while all pieces made stay under heldBytes, then in a temporary file:
// so writers go on with the next big messages rather than wait, and memory stays bounded.
// Once the message is next, the rest of its bytes go in pieces again, written out as they are
// made: the file holds only what was made ahead.

const (
	// batchMessages and batchBytes cut the messages shown into the batches handed to the
	// writers: a goroutine woken for each message would cost more than most messages take
	// to write. batchBytes counts the messages' sizes on the wire.
	batchMessages = 64
	batchBytes    = 256 << 10
	// batchesPerWriter bounds the batches handed to the writers and not yet written out
	// (writers.full).
	batchesPerWriter = 3
	// bigMessage: a message bigger than this on the wire is a batch of its own, written in
	// pieces (pieces), never held whole.
	bigMessage = 1 << 20
	// pieceBytes is the size of the pieces holding the bytes made; heldBytes bounds those of
	// the pieces made and not yet written out, batches' and big messages' together.
	pieceBytes = 64 << 10
	heldBytes  = 8 << 20
)

// writers are the goroutines writing a capture file's messages, and the batches of messages
// handed to them, in the order they are to be written.
type writers struct {
	out render.Parallel
	n   int
	// big and held are bigMessage and heldBytes (tests make them small).
	big, held int
	// jobs feeds the writers, started with the first message (off: the renderer cannot);
	// own is the merging goroutine's encoder, for the batches it writes itself.
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
	// ahead counts the bytes of the pieces in memory, not yet written out; pool holds pieces
	// to reuse.
	ahead atomic.Int64
	pool  *pieces.Pool
}

// writeJob is a batch of messages to write: the entries in, their bytes out.
type writeJob struct {
	es   []*model.Entry
	out  batchOut
	err  error
	done chan struct{}
	// closes are frames outside the heap to close once these messages are written (and so
	// every message before them).
	closes []*reassembly.Spilled
	// taken is set by whoever writes the batch, a writer or the merging goroutine. sent: it
	// was put in jobs, and may still be there (the merging goroutine's to know).
	taken atomic.Bool
	sent  bool
	// big, for a batch of one big message, carries its bytes instead of out.
	big *bigOut
}

// bigOut carries a big message's bytes from the writer making them to the merging goroutine,
// in pieces of pieceBytes: in memory while the bytes ahead allow (writers.ahead) or once the
// message is next to be written out (next), else in a temporary file until the message is
// next. A nil piece marks where the file's bytes go; without one, they follow the pieces.
type bigOut struct {
	w   *writers
	ch  chan []byte
	cur []byte
	// next: the message is next to be written out, and the merging goroutine takes the pieces
	// as they come (none go to the file). werr is the first error writing them out.
	next atomic.Bool
	werr error
	// file holds the bytes made ahead beyond the bound, written through fw while fw is set;
	// err is the first error writing it. The merging goroutine reads them once it is given
	// the nil piece or ch is closed.
	file *os.File
	fw   *bufio.Writer
	err  error
}

// newWriters returns the writers of a capture file read by shards, or nil when the messages
// are written by the renderer itself: it cannot write them elsewhere, it pairs them itself,
// or each message is flushed as it is shown.
func (p *Pipeline) newWriters() *writers {
	out, ok := p.out.(render.Parallel)
	if _, closer := p.out.(render.ConnCloser); !ok || closer || p.cfg.Flush || p.run.flushEach || p.cfg.Workers < 2 {
		return nil
	}
	w := &writers{out: out, n: p.cfg.Workers, big: bigMessage, held: heldBytes}
	if p.writeLimits.big > 0 {
		w.big, w.held = p.writeLimits.big, p.writeLimits.held
	}
	return w
}

// message writes a message shown, or hands it to the writers; an error writing it is kept
// when its bytes are written.
func (p *Pipeline) message(e *model.Entry) error {
	w := p.par
	if w == nil || !w.start() {
		p.written()
		return p.out.Message(e)
	}
	if e.Msg != nil && e.Msg.Size > w.big {
		// A batch of its own, after the one being filled.
		p.handOver()
		j := &writeJob{es: []*model.Entry{e}, done: make(chan struct{}, 1), big: w.newPieces()}
		j.taken.Store(true)
		w.cur = j
		p.handOver()
		return nil
	}
	if w.cur == nil {
		if k := len(w.spare); k > 0 {
			w.cur, w.spare = w.spare[k-1], w.spare[:k-1]
		} else {
			w.cur = &writeJob{out: batchOut{Chain: pieces.Chain{Pool: w.pool}, w: w}, done: make(chan struct{}, 1)}
			w.cur.taken.Store(true)
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
	j := w.cur
	j.taken.Store(false)
	j.sent = false
	// Batches written by the merging goroutine may still be in jobs, taking room: a batch
	// that finds none is left for the merging goroutine too.
	select {
	case w.jobs <- j:
		j.sent = true
	default:
	}
	w.queue = append(w.queue, j)
	w.cur, w.curBytes = nil, 0
	for w.head < len(w.queue) && p.writeNext(false) {
	}
	for w.head < len(w.queue) && w.full() {
		p.writeNext(true)
	}
}

// full reports whether the batches handed over must be written out before more are: there are
// batchesPerWriter per writer, or the pieces made ahead hold more than held. While the next
// batch to write out is a big message, twice as many batches may wait: a writer takes tens to
// hundreds of milliseconds to make a big message, and the others, once they have made the few
// batches behind it, would stand idle (a trace of diagrams of 9 MB Fetch responses showed the
// merging goroutine waiting so with the pieces ahead under 2 MiB).
func (w *writers) full() bool {
	limit := batchesPerWriter * w.n
	if w.queue[w.head].big != nil {
		limit *= 2
	}
	return len(w.queue)-w.head >= limit || w.ahead.Load() > int64(w.held)
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
	w.jobs = make(chan *writeJob, 2*batchesPerWriter*w.n) // room for all that full allows
	w.pool = pieces.NewPool(pieceBytes, w.held/pieceBytes+w.n)
	w.own = enc
	for range w.n {
		enc = w.out.Encoder()
		w.wg.Add(1)
		go func(enc render.Encoder) {
			defer w.wg.Done()
			for j := range w.jobs {
				// One the merging goroutine took meanwhile is left alone.
				if j.taken.CompareAndSwap(false, true) {
					j.write(enc)
				}
			}
		}(enc)
	}
	return true
}

// write makes the batch's bytes with enc, stopping at the first error.
func (j *writeJob) write(enc render.Encoder) {
	if j.big != nil {
		j.err = enc.WriteMessage(j.big, j.es[0])
		j.big.close()
		j.done <- struct{}{}
		return
	}
	for _, e := range j.es {
		if j.err = enc.WriteMessage(&j.out, e); j.err != nil {
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

// writeNext writes out the next batch handed to the writers, and reports whether it is all
// written. With wait, it waits for the bytes the writers make, or makes them itself if no
// writer has taken the batch; without, it writes only bytes made, and leaves the rest for
// later: the merging goroutine goes on showing messages while a writer makes a big one.
func (p *Pipeline) writeNext(wait bool) bool {
	w := p.par
	j := w.queue[w.head]
	mine := false
	switch {
	case j.big != nil && (j.big.next.Load() || !wait && j.taken.Load()):
		// Begun, or a writer makes it: its pieces as they come.
	case !wait && !j.ready():
		return false
	default:
		mine = j.taken.CompareAndSwap(false, true)
	}
	var err error
	switch {
	case mine && j.big != nil:
		err = w.own.WriteMessage(encoded{w.out}, j.es[0])
	case j.big != nil:
		var done bool
		if done, err = w.writeBig(j, wait); !done {
			return false
		}
	case mine:
		// Straight out: no writer has it, and it is next.
		for _, e := range j.es {
			if err = w.own.WriteMessage(encoded{w.out}, e); err != nil {
				break
			}
		}
	default:
		w.wait(j)
		<-j.done
		err = j.out.writeOut()
		if j.err != nil {
			err = j.err
		}
	}
	w.queue[w.head] = nil
	w.head++
	if w.head == len(w.queue) {
		w.queue, w.head = w.queue[:0], 0
	}
	p.keep(err)
	if err != nil {
		p.Stop()
	}
	for _, s := range j.closes {
		p.keep(s.Close())
	}
	// A batch the merging goroutine wrote may still be in jobs, where a writer will find it
	// taken: it is not reused.
	if j.big == nil && !(mine && j.sent) {
		w.recycle(j)
	}
	return true
}

// recycle keeps a batch written for reuse.
func (w *writers) recycle(j *writeJob) {
	clear(j.closes)
	clear(j.es)
	j.es, j.err, j.closes = j.es[:0], nil, j.closes[:0]
	w.spare = append(w.spare, j)
}

// wait waits for the writer that took batch j to make its bytes.
func (w *writers) wait(j *writeJob) {
	help := w.jobs
	for !j.ready() {
		select {
		case <-j.done:
			j.done <- struct{}{}
		case other := <-help:
			if !w.help(other) {
				help = nil
			}
		}
	}
}

// help writes a batch taken from jobs while the merging goroutine waits for a writer: rather
// than wait idle, it writes those no writer has taken, since on a busy machine the writers may
// not run for a while. A big message it puts back (its bytes would be held whole), and reports
// that it is to help no more, for it would find the same one again.
func (w *writers) help(j *writeJob) bool {
	j.sent = false
	switch {
	case j.taken.Load(): // written already, by this goroutine
		return true
	case j.big != nil:
		w.jobs <- j // there is room: only this goroutine sends, and it just took one
		j.sent = true
		return false
	}
	j.taken.Store(true)
	j.write(w.own)
	return true
}

// writeBig writes out the pieces of big message j that the writer that took it has made, and
// reports whether they were the last; with wait, it waits for them all.
func (w *writers) writeBig(j *writeJob, wait bool) (bool, error) {
	pc := j.big
	pc.next.Store(true)
	help := w.jobs
	for {
		var b []byte
		var ok bool
		if wait {
			select {
			case b, ok = <-pc.ch:
			case other := <-help:
				if !w.help(other) {
					help = nil
				}
				continue
			}
		} else {
			select {
			case b, ok = <-pc.ch:
			default:
				return false, nil
			}
		}
		if !ok {
			break
		}
		if b == nil {
			pc.fileOut()
			continue
		}
		if pc.werr == nil {
			pc.werr = w.out.WriteEncoded(b)
		}
		w.ahead.Add(-int64(len(b)))
		w.pool.Put(b)
	}
	<-j.done
	pc.fileOut()
	err := pc.werr
	if j.err != nil {
		err = j.err
	}
	return true, err
}

// encoded is an io.Writer that writes through out.WriteEncoded.
type encoded struct{ out render.Parallel }

func (e encoded) Write(b []byte) (int, error) {
	if err := e.out.WriteEncoded(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// batchOut is where a batch's bytes are made: pieces counted in writers.ahead as they are taken.
type batchOut struct {
	pieces.Chain
	w *writers
}

func (o *batchOut) Write(b []byte) (int, error) {
	before := len(o.Pieces)
	n, err := o.Chain.Write(b)
	o.w.ahead.Add(int64(len(o.Pieces)-before) * pieceBytes)
	return n, err
}

// writeOut writes the pieces out, stopping at the first error, and gives them back.
func (o *batchOut) writeOut() error {
	var err error
	for _, b := range o.Pieces {
		if err == nil {
			err = o.w.out.WriteEncoded(b)
		}
	}
	o.w.ahead.Add(-int64(len(o.Pieces)) * pieceBytes)
	o.Release()
	return err
}

// newPieces returns the pieces of a big message. The channel holds those made ahead: a writer
// sends more only while the merging goroutine takes them.
func (w *writers) newPieces() *bigOut {
	return &bigOut{w: w, ch: make(chan []byte, w.held/pieceBytes+1)}
}

// Write copies b into pieces, or, while the message goes on in a file, into the file.
func (pc *bigOut) Write(b []byte) (int, error) {
	n := len(b)
	if pc.fw != nil && pc.next.Load() {
		pc.endFile()
	}
	for len(b) > 0 && pc.fw == nil {
		if pc.cur == nil {
			pc.cur = pc.w.pool.Get()
		}
		k := copy(pc.cur[len(pc.cur):cap(pc.cur)], b)
		pc.cur, b = pc.cur[:len(pc.cur)+k], b[k:]
		if len(pc.cur) == cap(pc.cur) {
			pc.send()
		}
	}
	if len(b) > 0 {
		pc.fw.Write(b) // the bufio.Writer keeps the first error, for close
	}
	return n, nil
}

// send hands the piece made to the merging goroutine, or, when it is not waiting for these
// bytes and those ahead are many, starts the file with it.
func (pc *bigOut) send() {
	b := pc.cur
	pc.cur = nil
	n := int64(len(b))
	if pc.w.ahead.Add(n) > int64(pc.w.held) && !pc.next.Load() {
		pc.w.ahead.Add(-n)
		if pc.spill() {
			pc.fw.Write(b)
			pc.w.pool.Put(b)
			return
		}
		// Without a file, the writer waits for its turn.
		pc.w.ahead.Add(n)
	}
	pc.ch <- b
}

// spill starts the temporary file the rest of the message goes to, and reports whether it
// could. The file is unlinked at once: its space goes back when it is closed, or when the
// process ends.
func (pc *bigOut) spill() bool {
	f, err := os.CreateTemp("", "kdissect-out-*")
	if err != nil {
		return false
	}
	if os.Remove(f.Name()) != nil {
		f.Close()
		return false
	}
	pc.file, pc.fw = f, bufio.NewWriterSize(f, pieceBytes)
	return true
}

// endFile ends the bytes going to the file, once the message is next: the merging goroutine
// is told where they go (a nil piece), and what follows goes in pieces it writes out as they
// come, rather than through the file once the message is made.
func (pc *bigOut) endFile() {
	pc.flushFile()
	pc.ch <- nil
}

// flushFile writes what fw holds into the file; fw is done with.
func (pc *bigOut) flushFile() {
	if err := pc.fw.Flush(); err != nil {
		pc.err = fmt.Errorf("holding a message's output in a temporary file: %w", err)
	}
	pc.fw = nil
}

// close ends the message: the last piece is sent, the file flushed.
func (pc *bigOut) close() {
	if len(pc.cur) > 0 {
		pc.send()
	}
	if pc.fw != nil {
		pc.flushFile()
	}
	close(pc.ch)
}

// fileOut writes out the bytes of the file, if there is one not yet written out, keeping the
// first error in werr.
func (pc *bigOut) fileOut() {
	if pc.file == nil {
		return
	}
	err := pc.writeFile()
	pc.file = nil
	if pc.werr == nil {
		pc.werr = err
	}
}

// writeFile writes out the bytes of the file and closes it.
func (pc *bigOut) writeFile() error {
	defer pc.file.Close()
	if pc.err != nil {
		return pc.err
	}
	if _, err := pc.file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("reading a message's output back from a temporary file: %w", err)
	}
	b := pc.w.pool.Get()[:pieceBytes]
	defer pc.w.pool.Put(b)
	for {
		n, err := pc.file.Read(b)
		if n > 0 {
			if werr := pc.w.out.WriteEncoded(b[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading a message's output back from a temporary file: %w", err)
		}
	}
}

// written writes every message handed to the writers: the renderer writes next.
func (p *Pipeline) written() {
	if p.par == nil {
		return
	}
	p.handOver()
	for p.par.head < len(p.par.queue) {
		p.writeNext(true)
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
