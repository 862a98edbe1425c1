package rotate

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Policy says when a file is closed and the next one begun.
type Policy struct {
	// Every is the length of a period (0: periods end only by size or by Rotate); periods
	// begin at multiples of it counted from midnight UTC, so that the files of a fleet line up.
	Every time.Duration
	// Size ends a period once its file has this many bytes (0: no limit). A format that writes
	// in blocks (Parquet's row groups) ends it after the block that reaches it.
	Size int64
}

// retryAfter is how long a period whose file failed writes nothing before it tries a new file.
const retryAfter = time.Second

// content is what one kind of output writes into each period's file.
type content interface {
	// start begins a period's file on w; w is nil when the file could not be created: the
	// period writes nothing.
	start(w io.Writer)
	// end writes what the period still holds, for the file to be closed.
	end() error
}

// rotator runs the periods of one output: it opens each period's file, closes and renames it,
// and deletes the oldest. Its methods hold its lock: a content's methods are called under it.
type rotator struct {
	mu     sync.Mutex
	dir    *Dir
	pol    Policy
	warn   func(error)
	now    func() time.Time
	out    content
	f      *file // nil: this period writes nothing
	timer  *time.Timer
	closed bool
	failed bool // the last period failed: said, not said again until one succeeds
	commit *committer
	// retry is when a period without a file tries to begin one again: a full disk may have
	// been given room.
	retry time.Time
}

// newRotator begins the first period; now is the clock the files are named by.
func newRotator(d *Dir, p Policy, warn func(error), out content, now func() time.Time) *rotator {
	r := &rotator{dir: d, pol: p, warn: warn, now: now, out: out, commit: newCommitter(d, warn)}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.begin()
	return r
}

// begin opens the next period's file and sets the timer to the period's end.
func (r *rotator) begin() {
	start := r.now()
	f, err := r.dir.create(start)
	if err != nil {
		r.fail(fmt.Errorf("creating a file in %s: %w", r.dir.Path, err))
		r.retry = start.Add(retryAfter)
		r.out.start(nil)
	} else {
		r.f = f
		r.out.start(f)
	}
	if r.pol.Every > 0 {
		next := start.Truncate(r.pol.Every).Add(r.pol.Every)
		r.timer = time.AfterFunc(next.Sub(start), r.Rotate)
	}
}

// finish ends the current period: what it holds is written to its file, which the committer
// then closes, renames and prunes.
func (r *rotator) finish() {
	if r.timer != nil {
		r.timer.Stop()
	}
	err := r.out.end()
	f := r.f
	r.f = nil
	switch {
	case f == nil:
	case err != nil:
		f.abort()
		r.fail(fmt.Errorf("%s: %w", f.name, err))
	default:
		r.failed = false
		r.commit.queue <- f
	}
}

// fail says that the period's file is left out, once until a period succeeds again.
func (r *rotator) fail(err error) {
	if !r.failed && r.warn != nil {
		r.warn(fmt.Errorf("%w; this period's file is left out, capture goes on", err))
	}
	r.failed = true
}

// Rotate closes the current file and begins the next one now.
func (r *rotator) Rotate() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.finish()
	r.begin()
}

// check, after a write, drops a period whose file failed and ends one that reached its size.
func (r *rotator) check(werr error) {
	if r.f == nil {
		if now := r.now(); now.After(r.retry) {
			r.finish()
			r.begin()
		}
		return
	}
	n, err := r.f.state()
	if err == nil {
		err = werr
	}
	switch {
	case err != nil:
		r.out.end() // the format's own goroutines end; what it says is the same error
		r.f.abort()
		r.fail(fmt.Errorf("%s: %w", r.f.name, err))
		r.f = nil
		r.retry = r.now().Add(retryAfter)
		r.out.start(nil)
	case r.pol.Size > 0 && n >= r.pol.Size:
		r.finish()
		r.begin()
	}
}

// Close ends the last period, and waits for its file to be renamed. A file that failed has
// been said (warn), as every period's: Close's error is always nil, for the capture has gone on.
func (r *rotator) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.finish()
	r.commit.close()
	return nil
}

// Files returns how many files have been written (some may have been deleted since).
func (r *rotator) Files() int { return r.commit.count() }

// committer closes, renames and prunes the files of ended periods, in order, on a goroutine
// of its own: the capture does not wait for the disk (the file's fsync) at each period's end.
type committer struct {
	dir   *Dir
	warn  func(error)
	queue chan *file
	done  chan struct{}
	mu    sync.Mutex
	files int
}

func newCommitter(d *Dir, warn func(error)) *committer {
	c := &committer{dir: d, warn: warn, queue: make(chan *file, 16), done: make(chan struct{})}
	go c.run()
	return c
}

func (c *committer) run() {
	defer close(c.done)
	for f := range c.queue {
		err := f.commit()
		if err == nil {
			c.mu.Lock()
			c.files++
			c.mu.Unlock()
		}
		if err != nil {
			c.warn(fmt.Errorf("%w; this period's file is left out, capture goes on", err))
			continue
		}
		if err := c.dir.prune(); err != nil {
			c.warn(fmt.Errorf("deleting old files in %s: %w", c.dir.Path, err))
		}
	}
}

// close waits for the files queued.
func (c *committer) close() {
	close(c.queue)
	<-c.done
}

func (c *committer) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.files
}
