package capture

import (
	"io"
	"io/fs"
	"os"
	"sync"
)

// Captures that arrive as they are made: a pipe (tcpdump -U -w - | kdissect -), a FIFO or a
// socket. Reading one looks like reading a file, but a read may wait for as long as the writer
// is quiet, which can be forever; Stop must end such a wait. So a stream is read by a goroutine
// of its own (pipeReader), and Next, waiting for its bytes, also waits for Stop.

// IsStream reports whether r is a pipe, FIFO, socket or terminal rather than a file that holds
// the whole capture: anything with a Stat method (an *os.File) that is not a regular file,
// directory or block device. NewReader reads such a capture as its packets arrive.
func IsStream(r io.Reader) bool {
	f, ok := r.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && streamMode(fi.Mode())
}

// IsStreamName is IsStream for the named file (a FIFO, /dev/stdin), which it does not open.
func IsStreamName(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && streamMode(fi.Mode())
}

func streamMode(m fs.FileMode) bool {
	return m&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeCharDevice) != 0
}

// pipeChunk is the most one read of a stream takes: a pipe holds 64 KiB on Linux.
const pipeChunk = 64 << 10

// pipeReader reads a stream in a goroutine of its own, a chunk at a time, and hands the chunks
// to Read, which returns io.EOF at once when stop is called, whether or not the goroutine's
// read has returned. That goroutine ends when its read does (the writer writes or closes, or
// the file is closed).
type pipeReader struct {
	chunks chan pipeChunkRead
	// free holds the buffers not being filled or read: two, so that the goroutine reads
	// the next chunk while the last is being taken.
	free     chan []byte
	quit     chan struct{}
	stopOnce sync.Once
	// cur is what is left of the chunk being read; held is its buffer, err the error that
	// came with it, returned once cur is taken.
	cur, held []byte
	err       error
}

type pipeChunkRead struct {
	b   []byte
	err error
}

func newPipeReader(r io.Reader) *pipeReader {
	p := &pipeReader{chunks: make(chan pipeChunkRead), free: make(chan []byte, 2), quit: make(chan struct{})}
	p.free <- make([]byte, pipeChunk)
	p.free <- make([]byte, pipeChunk)
	go p.fill(r)
	return p
}

// fill reads r until an error or stop.
func (p *pipeReader) fill(r io.Reader) {
	for {
		var buf []byte
		select {
		case buf = <-p.free:
		case <-p.quit:
			return
		}
		n, err := r.Read(buf)
		if n == 0 && err == nil {
			p.free <- buf
			continue
		}
		select {
		case p.chunks <- pipeChunkRead{buf[:n], err}:
		case <-p.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

func (p *pipeReader) Read(b []byte) (int, error) {
	for len(p.cur) == 0 {
		if p.held != nil {
			p.free <- p.held[:cap(p.held)]
			p.held = nil
		}
		if p.err != nil {
			return 0, p.err
		}
		select {
		case <-p.quit:
			return 0, io.EOF
		default:
		}
		select {
		case c := <-p.chunks:
			p.cur, p.held, p.err = c.b, c.b, c.err
		case <-p.quit:
			return 0, io.EOF
		}
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// stop ends every wait of Read, now and later, with io.EOF. Any goroutine may call it, more
// than once.
func (p *pipeReader) stop() { p.stopOnce.Do(func() { close(p.quit) }) }
