// Package serve serves the workshop page over HTTP: the page of the captures it was given,
// captures dropped onto the page (dissected in memory, never written anywhere), and, for a
// live capture, every message pushed to every open page as it completes (Server-Sent Events).
// Display filters (-Y expressions, package filter) typed into a page are evaluated here, on the
// messages the server holds, and for a live page on its own event stream (filter.go).
// It serves nothing else: no file system path is reachable, every response carries a
// Content-Security-Policy, bodies and headers are bounded, and when a token is set no request
// without it gets anything.
package serve

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/filter"
	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// Defaults of Config's limits.
const (
	DefaultKeep      = 2000     // messages a live page keeps
	DefaultMaxUpload = 64 << 20 // bytes of one uploaded capture
)

// Needs is what the pipeline feeding a Server must decode of each message: what the page
// shows, and the facts display filters ask about (topics with their ids named, groups, errors).
// The server keeps each entry it is given, for the filters (Holds).
func Needs() render.Needs {
	n := render.PageFormat().Needs
	n.Facts, n.Holds = true, true
	return n
}

// Config says what a Server serves.
type Config struct {
	// Codec decodes uploaded captures (made for the html format: full trees and bytes).
	Codec *codec.Codec
	// Select chooses the messages of uploads, as the command line chose those of the captures
	// (dissect.SelectAll for every message: the zero Selection asks for correlation id 0).
	Select dissect.Selection
	// MaxMessages is how many messages a page of captures or of an upload holds (0: no limit);
	// Keep is how many the live page holds, the oldest dropped first (0: DefaultKeep).
	MaxMessages, Keep int
	// MaxUpload bounds an uploaded capture (0: DefaultMaxUpload; negative: no uploads).
	MaxUpload int64
	// MaxBytes cuts long values in the fields shown, as --max-bytes does.
	MaxBytes int
	// Token, when set, is required of every request: ?token=T in the URL (the page passes it
	// on) or the header X-Kdissect-Token.
	Token string
	// Hosts are the host names requests may name (the Host header), beside the loopback
	// names: a page on loopback is out of reach of a web site that makes its own name point
	// to 127.0.0.1 (DNS rebinding). Empty: any host, for a non-loopback listener with a token.
	Hosts []string
	// Warn is told of problems with uploads and of dropped slow pages (nil: nobody).
	Warn func(error)
	// Doctor, when set, is told of every message and notice the server is given, those past
	// MaxMessages or Keep too, and the page shows its findings as they are when it is loaded,
	// as do uploads theirs (a doctor of their own). The codec must keep the fields it reads
	// (Doctor.Reads). Nil: no findings panel.
	Doctor *doctor.Doctor
}

// Server holds the messages of its captures or of its live capture, and serves them.
type Server struct {
	cfg  Config
	live bool
	// evals bounds the display filters evaluated at once over the held messages (by /filter,
	// and by a filtered stream over what was held when it opened); each within evalTimeout.
	evals       chan struct{}
	evalTimeout time.Duration

	mu        sync.Mutex
	msgs      []*held
	next      int                    // the number of the next message to come
	decisions int                    // pairs decided so far (unit.n)
	open      dissect.Pending[*held] // requests whose responses may still come
	notices   []*model.Notice
	left      int // messages past MaxMessages (captures) or dropped past Keep (live)
	subs      map[*sub]bool
	enc       render.PageMessages
	file      string
	closed    bool
	// hold is what is held of each message: for an upload's server (dissect), only what its
	// one answer reads.
	hold holding
	// tables are the analyses' tables of the captures served (render.TablePage).
	tables []model.Table
}

// holding says what a Server holds of each message.
type holding int

const (
	holdAll     holding = iota // its page encoding and its entry: captures, live
	holdPages                  // its page encoding only: an upload shown (/upload)
	holdEntries                // its entry only: an upload filtered (POST /filter)
)

// held is one message the server holds: encoded for the page, and as the pipeline gave it (its
// tree and facts: the page's format has the pipeline keep them), for display filters.
type held struct {
	seq  int // its number since the server started
	page []byte
	e    *model.Entry
	// other is the other side of its request/response pair, paired as the pipeline pairs
	// them; open marks a request whose response may still come; decided is the number of the
	// decision on its pair (0: not decided yet).
	other   *held
	open    bool
	decided int
}

// sub is a page listening to the event stream: with a display filter, it is sent the pairs
// that match it as they are decided; without one, every message as it comes.
type sub struct {
	c chan event
	f *filter.Filter
	// slow: it was let go for not keeping up (its channel closed by publish, not by Close).
	slow bool
}

// event is what a page listening may be sent: a notice, or a message that came (msg) with the
// pairs decided by its coming or by the end of a connection (units).
type event struct {
	notice []byte
	msg    *held
	units  []unit
}

// New returns a Server; live says that messages keep coming (Renderer is fed by a live
// capture) and pages should listen for them.
func New(cfg Config, live bool) *Server {
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	if cfg.MaxUpload == 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	return &Server{cfg: cfg, live: live, evals: make(chan struct{}, runtime.GOMAXPROCS(0)), evalTimeout: evalTimeout,
		subs: map[*sub]bool{}, enc: render.PageMessages{MaxBytes: cfg.MaxBytes}}
}

// Renderer is the output the pipeline writes the captures' or the live capture's messages to.
func (s *Server) Renderer() render.Renderer { return (*feed)(s) }

// feed is the Server as a render.Renderer.
type feed Server

func (f *feed) Message(e *model.Entry) error {
	s := (*Server)(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.Doctor != nil {
		s.cfg.Doctor.Add(e)
	}
	if !s.live && s.cfg.MaxMessages > 0 && len(s.msgs) >= s.cfg.MaxMessages {
		s.left++
		return nil
	}
	h := &held{seq: s.next}
	if s.hold != holdEntries {
		h.page = s.enc.Append(nil, e, s.file)
	}
	s.next++
	s.msgs = append(s.msgs, h)
	if s.hold == holdPages {
		return nil
	}
	h.e = e
	ev := event{msg: h, units: s.pair(h)}
	if s.live && len(s.msgs) > s.cfg.Keep {
		n := len(s.msgs) - s.cfg.Keep
		for _, old := range s.msgs[:n] {
			if old.open {
				// Its response has not come, and it will not be held to be paired with.
				ev.units = append(ev.units, s.alone(old))
			}
		}
		s.left += n
		k := copy(s.msgs, s.msgs[n:])
		clear(s.msgs[k:]) // the dropped go, with their trees
		s.msgs = s.msgs[:k]
	}
	s.publish(ev)
	return nil
}

func (f *feed) Notice(n *model.Notice) error {
	s := (*Server)(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.Doctor != nil {
		s.cfg.Doctor.Notice(n)
	}
	c := *n
	s.notices = append(s.notices, &c)
	if len(s.notices) > s.cfg.Keep {
		s.notices = s.notices[1:]
	}
	b, _ := json.Marshal(map[string]any{"frame": n.Frame, "time": n.Time.UTC(), "stream": n.Stream, "src": n.Src, "dst": n.Dst, "text": n.Text})
	s.publish(event{notice: b})
	return nil
}

// The pipeline tells a server's renderer when each connection ends.
var _ render.ConnCloser = (*feed)(nil)

// ConnClosed is told by the pipeline that a connection ended: the requests held open on it got no
// response, and are decided alone, in capture order.
func (f *feed) ConnClosed(stream int) error {
	s := (*Server)(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	left := s.open.Closed(stream)
	if len(left) == 0 {
		return nil
	}
	slices.SortFunc(left, func(a, b *held) int { return a.seq - b.seq })
	var ev event
	for _, h := range left {
		ev.units = append(ev.units, s.alone(h))
	}
	s.publish(ev)
	return nil
}

// File says which capture the messages that follow come from.
func (f *feed) File(name string) error {
	s := (*Server)(f)
	s.mu.Lock()
	s.file = name
	s.mu.Unlock()
	return nil
}

// Tables has the page show the analyses' tables of the captures served.
func (f *feed) Tables(ts []model.Table) {
	s := (*Server)(f)
	s.mu.Lock()
	s.tables = ts
	s.mu.Unlock()
}

func (f *feed) Flush() error { return nil }
func (f *feed) Close() error { return nil }

// publish sends ev to every page listening; a page that does not keep up (its queue is full)
// is let go, and told so if it can still hear: the page says it lost the connection.
func (s *Server) publish(ev event) {
	for c := range s.subs {
		select {
		case c.c <- ev:
		default:
			delete(s.subs, c)
			c.slow = true
			close(c.c)
			if s.cfg.Warn != nil {
				s.cfg.Warn(errors.New("a page did not keep up with the messages and was let go: it can be reloaded"))
			}
		}
	}
}

// Close ends every event stream (pages stop listening).
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.subs {
		delete(s.subs, c)
		close(c.c)
	}
}

// Messages is how many messages the server holds now.
func (s *Server) Messages() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.msgs)
}

// CSP is the Content-Security-Policy of every response: the page's own style and script, and
// connections to the server itself only.
func CSP() string { return render.PageCSP("'self'") + "; frame-ancestors 'none'" }

// Handler serves the page (/), the event stream (/events, live only), uploads (/upload) and
// display filters (/filter), and nothing else.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("POST /upload", s.upload)
	mux.HandleFunc("GET /filter", s.filter)
	mux.HandleFunc("POST /filter", s.filter)
	return s.guard(mux)
}

// guard sets the headers every response has and refuses what no handler may see: a wrong
// host, a missing token, a POST from another origin (a page open in the same browser may
// not make the server read uploads or run filters: net/http's CrossOriginProtection, which
// reads Sec-Fetch-Site and Origin; programs that send neither are let through), a body on
// a request that takes none.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP())
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !s.hostAllowed(r.Host) {
			http.Error(w, "unknown host "+r.Host, http.StatusMisdirectedRequest)
			return
		}
		if s.cfg.Token != "" {
			got := r.URL.Query().Get("token")
			if got == "" {
				got = r.Header.Get("X-Kdissect-Token")
			}
			if subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) != 1 {
				http.Error(w, "this page needs its token: open the URL kdissect printed", http.StatusUnauthorized)
				return
			}
		}
		var crossOrigin http.CrossOriginProtection
		if err := crossOrigin.Check(r); err != nil {
			http.Error(w, "refused: the request comes from another site's page, not kdissect's own", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 0)
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) hostAllowed(hostport string) bool {
	if len(s.cfg.Hosts) == 0 {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, h := range s.cfg.Hosts {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// page writes the page with the messages held now; a live page then listens to /events,
// whose stream starts where this snapshot ends.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	msgs := make([][]byte, len(s.msgs))
	for i, h := range s.msgs {
		msgs[i] = h.page
	}
	next := s.next
	meta := render.PageMeta{Limit: s.cfg.MaxMessages, LeftOut: s.left, Notices: append([]*model.Notice(nil), s.notices...), Token: s.cfg.Token,
		Tables: s.tables, Findings: s.findings()}
	s.mu.Unlock()
	if s.live {
		meta.Limit, meta.Keep, meta.Dropped = 0, s.cfg.Keep, meta.LeftOut
		meta.LeftOut = 0
		meta.Live, meta.After = "events", next
	}
	if s.cfg.MaxUpload > 0 {
		meta.Upload, meta.MaxUpload = "upload", s.cfg.MaxUpload
	}
	meta.Filter = "filter"
	if s.cfg.Token != "" {
		meta.Live = tokenURL(meta.Live, s.cfg.Token)
		meta.Upload = tokenURL(meta.Upload, s.cfg.Token)
		meta.Filter = tokenURL(meta.Filter, s.cfg.Token)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	render.WritePage(w, "kdissect", msgs, meta, "'self'")
}

// findings are the doctor's findings so far, encoded for the page (nil: no doctor). The
// caller holds s.mu: the findings share the doctor's evidence, which the next message changes.
func (s *Server) findings() []byte {
	if s.cfg.Doctor == nil {
		return nil
	}
	return render.FindingsData(s.cfg.Doctor.Findings())
}

func tokenURL(u, token string) string {
	if u == "" {
		return ""
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "token=" + url.QueryEscape(token)
}

// events streams the messages that come after the page's snapshot: the page says where its
// snapshot ended (?after=N, the number of the next message), or, reconnecting, the browser
// says what it got last (Last-Event-ID); messages that came in between are sent first. With
// a display filter (?y=EXPR), the stream is the pairs that match it, from the first held, each
// sent once decided: a request waits for its response, as -Y makes it wait.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if !s.live {
		http.Error(w, "not a live capture", http.StatusNotFound)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming not supported", http.StatusInternalServerError)
		return
	}
	f, ferr := compile(r.URL.Query().Get("y"))
	if ferr != nil {
		http.Error(w, ferr.Error, http.StatusBadRequest)
		return
	}
	c, first, ok := s.subscribe(f, streamFrom(r, f))
	if !ok {
		http.Error(w, "the capture has ended", http.StatusGone)
		return
	}
	defer s.unsubscribe(c)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	st := &stream{f: f}
	st.buf.WriteString("retry: 3000\n\n")
	fmt.Fprintf(&st.buf, "event: start\ndata: {\"dropped\":%d}\n\n", first.dropped)
	for _, m := range first.backlog {
		st.message(m, m.seq)
	}
	if err := s.judge(r.Context(), st, first.units); err != nil {
		if r.Context().Err() != nil {
			return // the page went
		}
		st.warn(err.Error())
	}
	// What follows is new: a paused page holds it back, not what it was sent so far.
	st.buf.WriteString("event: held\ndata: {}\n\n")
	if _, err := w.Write(st.buf.Bytes()); err != nil {
		return
	}
	fl.Flush()
	s.follow(w, fl, r, c, st)
}

// streamFrom is where the page is: the number of the next message it wants (no filter), or of
// the last decision it was sent (with one).
func streamFrom(r *http.Request, f *filter.Filter) int {
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	if f != nil {
		after = 0
	}
	if id, err := strconv.Atoi(r.Header.Get("Last-Event-ID")); err == nil {
		after = id
		if f == nil {
			after++
		}
	}
	return after
}

// snapshot is what a page that subscribes is sent first: the messages from where it is (no
// filter), or the pairs held there to judge (with one), and how many were dropped.
type snapshot struct {
	backlog []*held
	units   []unit
	dropped int
}

// subscribe adds a page listening from after, and returns what it is to be sent first; ok is
// false once the capture has ended.
func (s *Server) subscribe(f *filter.Filter, after int) (c *sub, first snapshot, ok bool) {
	c = &sub{c: make(chan event, 4096), f: f}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, snapshot{}, false
	}
	if f == nil {
		for _, h := range s.msgs {
			if h.seq >= after {
				first.backlog = append(first.backlog, h)
			}
		}
	} else {
		first.units = decided(s.msgs, after, false)
	}
	first.dropped = s.left
	s.subs[c] = true
	return c, first, true
}

// unsubscribe removes a page that has gone, unless publish or Close already let it go.
func (s *Server) unsubscribe(c *sub) {
	s.mu.Lock()
	if s.subs[c] {
		delete(s.subs, c)
		close(c.c)
	}
	s.mu.Unlock()
}

// follow sends the page the events as they come, until it goes or its channel is closed
// (the capture ended, or the page did not keep up), with a keepalive every 20 s.
func (s *Server) follow(w http.ResponseWriter, fl http.Flusher, r *http.Request, c *sub, st *stream) {
	keepalive := time.NewTicker(20 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keepalive.C:
			if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case ev, ok := <-c.c:
			if !ok {
				s.mu.Lock()
				slow := c.slow
				s.mu.Unlock()
				if slow {
					io.WriteString(w, "event: lost\ndata: {}\n\n")
				} else {
					io.WriteString(w, "event: end\ndata: {}\n\n")
				}
				fl.Flush()
				return
			}
			st.buf.Reset()
			st.add(r.Context(), ev)
			// Write what else is waiting in the same write, so a burst costs one flush.
			for more := true; more; {
				select {
				case ev, ok := <-c.c:
					if !ok {
						more = false
						break
					}
					st.add(r.Context(), ev)
				default:
					more = false
				}
			}
			if st.buf.Len() == 0 {
				continue
			}
			if _, err := w.Write(st.buf.Bytes()); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// stream writes one page's events: every message as it comes, or with a filter the pairs
// that match it.
type stream struct {
	f      *filter.Filter
	buf    bytes.Buffer
	warned bool
}

// judge writes the pairs held when a filtered stream opened that match its filter: an
// evaluation over many pairs, bounded as /filter's are (Server.evals, evalTimeout).
func (s *Server) judge(ctx context.Context, st *stream, us []unit) error {
	if len(us) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.evalTimeout)
	defer cancel()
	release, ok := s.acquire(ctx)
	if !ok {
		return fmt.Errorf("the server was busy with other filters for %v: the messages it held are not shown, new ones are", s.evalTimeout)
	}
	defer release()
	if !st.decide(ctx, us) {
		return fmt.Errorf("the filter took longer than %v over the %d pairs held: the rest of them are not shown, new ones are", s.evalTimeout, len(us))
	}
	return nil
}

func (st *stream) add(ctx context.Context, ev event) {
	switch {
	case ev.notice != nil:
		st.buf.WriteString("event: notice\ndata: ")
		st.buf.Write(ev.notice)
		st.buf.WriteString("\n\n")
	case st.f == nil:
		if ev.msg != nil {
			st.message(ev.msg, ev.msg.seq)
		}
	default:
		st.decide(ctx, ev.units)
	}
}

// message writes one message's event; id is what the browser says it got last when it
// reconnects (-1: no id).
func (st *stream) message(h *held, id int) {
	if id >= 0 {
		st.buf.WriteString("id: " + strconv.Itoa(id) + "\n")
	}
	st.buf.WriteString("data: ")
	st.buf.Write(h.page)
	st.buf.WriteString("\n\n")
}

// decide writes the messages of the pairs that match the filter; the last event of a pair
// carries the decision's number, so that a browser reconnecting gets the pairs after it. It
// stops when ctx is done (false).
func (st *stream) decide(ctx context.Context, us []unit) bool {
	failed := func(err error) {
		if !st.warned {
			st.warned = true
			st.warn(warning(err))
		}
	}
	return matching(ctx, st.f, us, failed, func(u unit) {
		if u.req != nil {
			id := -1
			if u.resp == nil {
				id = u.n
			}
			st.message(u.req, id)
		}
		if u.resp != nil {
			st.message(u.resp, u.n)
		}
	})
}

// warn writes a warning event: the page shows it under its -Y box.
func (st *stream) warn(text string) {
	b, _ := json.Marshal(map[string]string{"text": text})
	st.buf.WriteString("event: warning\ndata: ")
	st.buf.Write(b)
	st.buf.WriteString("\n\n")
}

// uploadResult is what an upload answers: the messages of the capture, as the page's data.
type uploadResult struct {
	Messages []json.RawMessage `json:"messages"`
	LeftOut  int               `json:"left_out"`
	Error    string            `json:"error,omitempty"`
	// Findings are the doctor's over the capture, for the page's panel, when the server has one.
	Findings json.RawMessage `json:"findings,omitempty"`
}

// upload dissects the capture in the request's body, held in memory and bounded by
// MaxUpload, and answers with its messages. The dissection takes one of the evaluation slots
// that display filters take (Server.evals): each holds a capture's messages until it is
// answered, so a room uploading at once is dissected a few at a time, not all together.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	data, name, ok := s.readCapture(w, r)
	if !ok {
		return
	}
	release, ok := s.slot(w, r)
	if !ok {
		return
	}
	defer release()
	out, err := s.dissect(data, name, holdPages)
	res := uploadResult{Messages: []json.RawMessage{}}
	if out == nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	for _, h := range out.msgs {
		res.Messages = append(res.Messages, h.page)
	}
	res.LeftOut = out.left
	res.Findings = out.findings()
	status := http.StatusOK
	if err != nil {
		res.Error = err.Error()
		if len(res.Messages) == 0 {
			status = http.StatusUnprocessableEntity
		}
	}
	writeJSON(w, status, res)
}

// uploadNeeds is what an upload shown (not filtered) needs of each message: what the page
// shows, no facts, and no entry kept past its encoding.
func uploadNeeds() render.Needs { return render.PageFormat().Needs }

// busy is what a request that found no free evaluation slot in time is answered (503): the
// page shows it.
const busy = "the server is busy with other uploads and filters: try again in a moment"

// slot takes one of the evaluation slots, waiting at most evalTimeout; when none comes free it
// has answered the request (503). release gives the slot back.
func (s *Server) slot(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	wait, cancel := context.WithTimeout(r.Context(), s.evalTimeout)
	defer cancel()
	if release, ok = s.acquire(wait); !ok {
		http.Error(w, busy, http.StatusServiceUnavailable)
	}
	return release, ok
}

// acquire takes one of the evaluation slots (Server.evals), waiting until ctx is done (false).
// release gives it back.
func (s *Server) acquire(ctx context.Context) (release func(), ok bool) {
	select {
	case s.evals <- struct{}{}:
		return func() { <-s.evals }, true
	case <-ctx.Done():
		return nil, false
	}
}

// readCapture reads a capture sent in a request's body, bounded by MaxUpload; when it cannot,
// it has answered the request.
func (s *Server) readCapture(w http.ResponseWriter, r *http.Request) (data []byte, name string, ok bool) {
	if s.cfg.MaxUpload < 0 || s.cfg.Codec == nil {
		http.Error(w, "uploads are off", http.StatusForbidden)
		return nil, "", false
	}
	name = r.URL.Query().Get("name")
	if name == "" {
		name = "upload"
	}
	if len(name) > 200 {
		name = name[:200]
	}
	if r.ContentLength > s.cfg.MaxUpload {
		http.Error(w, fmt.Sprintf("%s: %s is over the limit of %s", name, plural.Count(r.ContentLength, "byte"), plural.Count(s.cfg.MaxUpload, "byte")), http.StatusRequestEntityTooLarge)
		return nil, "", false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxUpload))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("%s: over the limit of %s", name, plural.Count(s.cfg.MaxUpload, "byte")), http.StatusRequestEntityTooLarge)
			return nil, "", false
		}
		http.Error(w, "reading the upload: "+err.Error(), http.StatusBadRequest)
		return nil, "", false
	}
	return body, name, true
}

// dissect runs one uploaded capture through the pipeline into a server of its own, which
// nobody keeps, holding what hold says (holdPages: to be shown; holdEntries: to be filtered);
// err says what went wrong with the capture (out is nil when nothing could run).
func (s *Server) dissect(data []byte, name string, hold holding) (out *Server, err error) {
	out = New(Config{MaxMessages: s.cfg.MaxMessages, MaxBytes: s.cfg.MaxBytes}, false)
	out.hold = hold
	needs := Needs()
	if hold == holdPages {
		needs = uploadNeeds()
		if s.cfg.Doctor != nil {
			// The panel shows the upload's findings: the doctor reads its errors (facts).
			out.cfg.Doctor = doctor.New()
			needs.Facts = true
		}
	}
	f := render.PageFormat()
	f.Needs = needs
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: s.cfg.Select})
	if err != nil {
		return nil, err
	}
	p, err := dissect.New(dissect.Config{Codec: s.cfg.Codec, Out: out.Renderer(), Plan: plan, Select: s.cfg.Select, Detect: true, Workers: 1})
	if err != nil {
		return nil, err
	}
	if err = readCapture(p, data, name); err != nil && s.cfg.Warn != nil {
		// The pipeline's error begins with the capture's name, which is "upload" for a
		// capture sent without one: say so once.
		if name != "upload" {
			s.cfg.Warn(fmt.Errorf("upload: %w", err))
		} else {
			s.cfg.Warn(err)
		}
	}
	if cerr := p.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return out, err
}

// readCapture runs the capture in data, named name, through p.
func readCapture(p *dissect.Pipeline, data []byte, name string) error {
	r, err := capture.NewReader(bytes.NewReader(data), name)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = p.Read(r, name)
	return err
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
