package reassembly

import (
	"bufio"
	"fmt"
	"os"
	"unsafe"
)

// Big frames outside the heap (Options.SpillOver). A consumer catching up gets Fetch responses
// of tens of megabytes, several at once on different connections. Held on the heap, each costs
// its size from its first byte to its last output line, however little of it a renderer looks
// at. Instead, the framer writes the bytes of a frame larger than SpillOver to an unlinked
// temporary file as they arrive, and maps the file read-only when the frame is complete: the
// frame's Data then costs memory only for the pages that are read, and those can be given back
// (Spilled.Evict) once read. Where files cannot be mapped (spillMaps false), frames stay on
// the heap.

// Spilled holds a frame's bytes in a temporary file mapped into memory.
type Spilled struct {
	file *os.File
	w    *bufio.Writer
	// size counts the bytes given to write, all in the file unless finish reports an error.
	size int
	data []byte
	// heap: data was read into the heap because the file could not be mapped.
	heap bool
	// run: bytes read, whose pages are to be given back together.
	run evictRun
}

// newSpilled starts a temporary file in dir ("": the system's). It is unlinked at once: its
// space goes back when it is closed, or when the process ends, however it ends.
func newSpilled(dir string) (*Spilled, error) {
	f, err := os.CreateTemp(dir, "kdissect-frame-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return &Spilled{file: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// write appends b to the file. The first error writing comes back from finish: the
// bufio.Writer keeps it, and writes nothing more after it.
func (s *Spilled) write(b []byte) {
	_, _ = s.w.Write(b)
	s.size += len(b)
}

// finish maps the complete file and returns its bytes, or the first error writing it.
func (s *Spilled) finish() ([]byte, error) {
	if err := s.w.Flush(); err != nil {
		return nil, err
	}
	s.w = nil
	if s.size == 0 {
		return []byte{}, nil
	}
	data, err := mapFile(s.file, s.size)
	if err != nil {
		// Correct, if not small: the bytes on the heap.
		data = make([]byte, s.size)
		if _, rerr := s.file.ReadAt(data, 0); rerr != nil {
			return nil, fmt.Errorf("mapping the temporary file: %v; reading it: %v", err, rerr)
		}
		s.heap = true
	}
	s.data = data
	return data, nil
}

// evictBytes is how many bytes read a frame gathers before it gives their pages back: each
// madvise that drops pages interrupts every other core the process ran on (to flush their
// TLBs), and a record batch is often a few pages only.
const evictBytes = 2 << 20

// evictRun is a range of bytes of a frame, read and not yet given back.
type evictRun struct{ lo, hi int }

// add adds bytes [lo, hi) to the run, and returns the bytes to give back now, if any: the
// run, once it is evictBytes long or when bytes not next to it come (they start the next run).
func (r *evictRun) add(lo, hi int) (int, int) {
	switch {
	case r.lo == r.hi:
		r.lo, r.hi = lo, hi
	case lo > r.hi || hi < r.lo:
		olo, ohi := r.lo, r.hi
		r.lo, r.hi = lo, hi
		return olo, ohi
	default:
		r.lo, r.hi = min(r.lo, lo), max(r.hi, hi)
	}
	if r.hi-r.lo < evictBytes {
		return 0, 0
	}
	olo, ohi := r.lo, r.hi
	r.lo, r.hi = 0, 0
	return olo, ohi
}

// Evict says that b, part of the frame's Data, will not be read again soon. The bytes of
// calls that follow one another gather, and once they make evictBytes (or at Close), the
// memory of the pages that lie wholly in them is given back. They read the same if they are
// read again.
func (s *Spilled) Evict(b []byte) {
	if s == nil || s.heap || len(s.data) == 0 || len(b) == 0 {
		return
	}
	start := offsetIn(s.data, b)
	if start < 0 {
		return
	}
	lo, hi := s.run.add(start, start+len(b))
	page := os.Getpagesize()
	lo = (lo + page - 1) / page * page
	hi = hi / page * page
	if hi > lo {
		evict(s.data[lo:hi])
	}
}

// offsetIn returns where b starts in data, or -1 when b is not part of data.
func offsetIn(data, b []byte) int {
	lo, p := uintptr(unsafe.Pointer(unsafe.SliceData(data))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < lo || p-lo > uintptr(len(data)) || uintptr(len(b)) > uintptr(len(data))-(p-lo) {
		return -1
	}
	return int(p - lo)
}

// Close unmaps the frame and closes its file: Data must not be read after.
func (s *Spilled) Close() error {
	if s == nil {
		return nil
	}
	var err error
	if s.data != nil && !s.heap {
		err = unmap(s.data)
	}
	s.data = nil
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	return err
}
