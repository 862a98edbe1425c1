package flight

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/filter"
	"github.com/kdissect/kdissect/internal/rotate"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// maxPending bounds the requests a Recorder keeps while they wait for their responses: past
// it, new requests are not kept (their pairs are decided without them), so that a capture of
// requests never answered does not grow without end.
const maxPending = 1 << 16

// Config is what a Recorder saves, when, and where.
type Config struct {
	Ring *Ring
	// Expr decides on each pair of messages shown; a pair it matches saves the ring.
	Expr *filter.Filter
	// Before and After are how much of the capture a file holds around the message that
	// matched: the file is written After it.
	Before, After time.Duration
	// MaxPerHour bounds the files saved in any hour (0: no bound).
	MaxPerHour int
	// Dir is where files go; Iface names the capture's interface in them.
	Dir   *rotate.Dir
	Iface string
	// Warn is told what could not be saved, and what was left out.
	Warn func(error)
	// Saved, if not nil, is told the path of each file saved.
	Saved func(path string)
	// Files are saved on timers' goroutines, one at a time: Warn and Saved are called one at
	// a time, but not always on the goroutine that shows the messages.
}

// Recorder is a render.Renderer that forwards to another and watches the pairs of messages
// shown: when Expr matches one, it saves the packets of the ring from Before the pair's
// response (or lone request) to After it to a pcapng file, with what matched in the file's
// comment. Matches while a file waits to be written go into the same file.
type Recorder struct {
	cfg  Config
	next render.Renderer

	mu      sync.Mutex
	pending map[int]map[int32]*model.Entry // requests by connection and correlation id
	npend   int
	waiting []*trigger
	saved   []time.Time // when the files of the last hour were saved
	full    bool        // MaxPerHour reached, said
	warned  bool        // Expr failed on a pair, said
	closed  bool
	wg      sync.WaitGroup
	// saving makes the saves (Dir is not for concurrent use) and the calls of Warn and Saved
	// one at a time. It is taken after mu, never before.
	saving sync.Mutex
}

// trigger is a file to be written.
type trigger struct {
	at       time.Time
	comments []string
	timer    *time.Timer
}

// NewRecorder returns a Recorder that forwards to next.
func NewRecorder(cfg Config, next render.Renderer) *Recorder {
	return &Recorder{cfg: cfg, next: next, pending: map[int]map[int32]*model.Entry{}}
}

// Message forwards e, then decides on its pair once it is complete.
func (r *Recorder) Message(e *model.Entry) error {
	err := r.next.Message(e)
	r.observe(e)
	return err
}

func (r *Recorder) Notice(n *model.Notice) error { return r.next.Notice(n) }
func (r *Recorder) Flush() error                 { return r.next.Flush() }

// ConnClosed forgets the requests of a connection that has ended: no response will come.
func (r *Recorder) ConnClosed(stream int) error {
	r.mu.Lock()
	r.npend -= len(r.pending[stream])
	delete(r.pending, stream)
	r.mu.Unlock()
	if c, ok := r.next.(render.ConnCloser); ok {
		return c.ConnClosed(stream)
	}
	return nil
}

func (r *Recorder) observe(e *model.Entry) {
	if e.Msg == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	corr := e.Msg.CorrelationID
	if e.Request {
		if e.NoResponse {
			r.decide(e, nil)
			return
		}
		if r.npend < maxPending {
			if r.pending[e.Stream] == nil {
				r.pending[e.Stream] = map[int32]*model.Entry{}
			}
			if _, ok := r.pending[e.Stream][corr]; !ok {
				r.npend++
			}
			r.pending[e.Stream][corr] = r.keep(e)
		}
		return
	}
	req := r.pending[e.Stream][corr]
	if req != nil {
		delete(r.pending[e.Stream], corr)
		r.npend--
	}
	r.decide(req, e)
}

// keep returns what is kept of a request until its response comes: all of it when Expr reads
// its body; otherwise its place and facts only, not its field tree and bytes, so that the
// requests waiting (Produce requests, with their records) take little memory.
func (r *Recorder) keep(e *model.Entry) *model.Entry {
	if r.cfg.Expr.ReadsBodies() {
		return e
	}
	lite := *e
	m := e.Msg
	lite.Msg = &codec.Message{Response: m.Response, APIKey: m.APIKey, APIName: m.APIName, Version: m.Version,
		HeaderVersion: m.HeaderVersion, CorrelationID: m.CorrelationID, ClientID: m.ClientID, Size: m.Size, Warnings: m.Warnings}
	lite.Bytes = nil
	return &lite
}

// decide saves the ring around a pair that Expr matches.
func (r *Recorder) decide(req, resp *model.Entry) {
	ok, err := r.cfg.Expr.Match(req, resp)
	if err != nil && !r.warned {
		r.warned = true
		r.warn(fmt.Errorf("--save-on: %v (pairs it fails on are not saved; this is said once)", err))
	}
	if !ok {
		return
	}
	last := resp
	if last == nil {
		last = req
	}
	what := describe(r.cfg.Expr.String(), last)
	for _, t := range r.waiting {
		if !last.Time.After(t.at.Add(r.cfg.After)) {
			t.comments = append(t.comments, what)
			return
		}
	}
	if r.cfg.MaxPerHour > 0 {
		hourAgo := time.Now().Add(-time.Hour)
		for len(r.saved) > 0 && r.saved[0].Before(hourAgo) {
			r.saved = r.saved[1:]
		}
		r.full = r.full && len(r.saved)+len(r.waiting) >= r.cfg.MaxPerHour
		if len(r.saved)+len(r.waiting) >= r.cfg.MaxPerHour {
			if !r.full {
				r.full = true
				r.warn(fmt.Errorf("--save-max %d: %d files saved in the last hour; the next matches are not saved until an hour after the first (%s)",
					r.cfg.MaxPerHour, r.cfg.MaxPerHour, what))
			}
			return
		}
	}
	t := &trigger{at: last.Time, comments: []string{what}}
	r.waiting = append(r.waiting, t)
	r.wg.Add(1)
	t.timer = time.AfterFunc(r.cfg.After, func() { r.save(t) })
}

// warn tells Config.Warn, one call at a time.
func (r *Recorder) warn(err error) {
	r.saving.Lock()
	defer r.saving.Unlock()
	r.cfg.Warn(err)
}

// describe says what matched, for the file's comment.
func describe(expr string, e *model.Entry) string {
	kind := "response"
	if e.Request {
		kind = "request"
	}
	return fmt.Sprintf("kdissect --save-on %q matched the %s %s v%d of stream %d, correlation id %d, packet %d, at %s",
		expr, e.Msg.APIName, kind, e.Msg.Version, e.Stream, e.Msg.CorrelationID, e.Frame, e.Time.UTC().Format(time.RFC3339Nano))
}

// save writes the file of a trigger, unless Close has taken it.
func (r *Recorder) save(t *trigger) {
	defer r.wg.Done()
	r.mu.Lock()
	i := -1
	for j, w := range r.waiting {
		if w == t {
			i = j
		}
	}
	if i < 0 {
		r.mu.Unlock()
		return
	}
	r.waiting = append(r.waiting[:i], r.waiting[i+1:]...)
	comment := strings.Join(t.comments, "\n")
	r.saved = append(r.saved, time.Now())
	r.mu.Unlock()

	r.saving.Lock()
	defer r.saving.Unlock()
	path, err := r.cfg.Dir.Write(t.at, func(w io.Writer) error {
		ng := capture.NewNgFile(w, r.cfg.Iface, comment)
		if err := r.cfg.Ring.Each(t.at.Add(-r.cfg.Before), t.at.Add(r.cfg.After), ng.Write); err != nil {
			return err
		}
		return ng.Flush()
	})
	if err != nil {
		r.cfg.Warn(fmt.Errorf("saving the ring: %w", err))
		return
	}
	if r.cfg.Saved != nil {
		r.cfg.Saved(path)
	}
}

// Close writes the files still waiting, with what the ring holds now, then closes the
// renderer it forwards to.
func (r *Recorder) Close() error {
	r.mu.Lock()
	r.closed = true
	var now []*trigger
	for _, t := range r.waiting {
		if t.timer.Stop() {
			now = append(now, t)
		}
	}
	r.mu.Unlock()
	for _, t := range now {
		r.save(t)
	}
	r.wg.Wait()
	return r.next.Close()
}
