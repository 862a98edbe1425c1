// Package serve serves the workshop page over HTTP: the page of the captures it was given,
// captures dropped onto the page (dissected in memory, never written anywhere), and, for a
// live capture, every message pushed to every open page as it completes (Server-Sent Events).
// It serves nothing else: no file system path is reachable, every response carries a
// Content-Security-Policy, bodies and headers are bounded, and when a token is set no request
// without it gets anything.
package serve

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/render"
)

// Defaults of Config's limits.
const (
	DefaultKeep      = 2000     // messages a live page keeps
	DefaultMaxUpload = 64 << 20 // bytes of one uploaded capture
)

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
}

// Server holds the messages of its captures or of its live capture, and serves them.
type Server struct {
	cfg  Config
	live bool

	mu      sync.Mutex
	msgs    [][]byte // the page's messages, encoded for it (render.PageMessages)
	notices []*render.Notice
	left    int // messages past MaxMessages (captures) or dropped past Keep (live)
	subs    map[chan event]bool
	enc     render.PageMessages
	file    string
	closed  bool
}

type event struct {
	name string // "" for a message, "notice"
	data []byte
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
	return &Server{cfg: cfg, live: live, subs: map[chan event]bool{}, enc: render.PageMessages{MaxBytes: cfg.MaxBytes}}
}

// Renderer is the output the pipeline writes the captures' or the live capture's messages to.
func (s *Server) Renderer() render.Renderer { return (*feed)(s) }

// feed is the Server as a render.Renderer.
type feed Server

func (f *feed) Message(e *render.Entry) error {
	s := (*Server)(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live && s.cfg.MaxMessages > 0 && len(s.msgs) >= s.cfg.MaxMessages {
		s.left++
		return nil
	}
	b := s.enc.Append(nil, e, s.file)
	s.msgs = append(s.msgs, b)
	if s.live && len(s.msgs) > s.cfg.Keep {
		n := len(s.msgs) - s.cfg.Keep
		s.left += n
		s.msgs = append(s.msgs[:0], s.msgs[n:]...)
	}
	s.publish(event{data: b})
	return nil
}

func (f *feed) Notice(n *render.Notice) error {
	s := (*Server)(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := *n
	s.notices = append(s.notices, &c)
	if len(s.notices) > s.cfg.Keep {
		s.notices = s.notices[1:]
	}
	b, _ := json.Marshal(map[string]any{"frame": n.Frame, "time": n.Time.UTC(), "stream": n.Stream, "src": n.Src, "dst": n.Dst, "text": n.Text})
	s.publish(event{name: "notice", data: b})
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

func (f *feed) Flush() error { return nil }
func (f *feed) Close() error { return nil }

// publish sends ev to every page listening; a page that does not keep up (its queue is full)
// is let go, and told so if it can still hear: the page says it lost the connection.
func (s *Server) publish(ev event) {
	for c := range s.subs {
		select {
		case c <- ev:
		default:
			delete(s.subs, c)
			close(c)
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
		close(c)
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

// Handler serves the page (/), the event stream (/events, live only) and uploads (/upload),
// and nothing else.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("POST /upload", s.upload)
	return s.guard(mux)
}

// guard sets the headers every response has and refuses what no handler may see: a wrong
// host, a missing token, a body on a request that takes none.
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
	msgs := append([][]byte(nil), s.msgs...)
	meta := render.PageMeta{Limit: s.cfg.MaxMessages, LeftOut: s.left, Notices: append([]*render.Notice(nil), s.notices...), Token: s.cfg.Token}
	s.mu.Unlock()
	if s.live {
		meta.Limit, meta.Keep, meta.Dropped = 0, s.cfg.Keep, meta.LeftOut
		meta.LeftOut = 0
		meta.Live = "events?after=" + strconv.Itoa(len(msgs))
	}
	if s.cfg.MaxUpload > 0 {
		meta.Upload, meta.MaxUpload = "upload", s.cfg.MaxUpload
	}
	if s.cfg.Token != "" {
		meta.Live = tokenURL(meta.Live, s.cfg.Token)
		meta.Upload = tokenURL(meta.Upload, s.cfg.Token)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	render.WritePage(w, "kdissect", msgs, meta, "'self'")
}

func tokenURL(u, token string) string {
	if u == "" {
		return ""
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "token=" + token
}

// events streams the messages that come after the page's snapshot: the page says how many it
// has (?after=N); messages that came in between are sent first.
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
	c := make(chan event, 4096)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "the capture has ended", http.StatusGone)
		return
	}
	// Messages since the page's snapshot (a count it was given: it may be stale when old
	// messages were dropped meanwhile, and then it gets what is held).
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	var backlog [][]byte
	if after >= 0 && after < len(s.msgs) {
		backlog = append(backlog, s.msgs[after:]...)
	}
	s.subs[c] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.subs[c] {
			delete(s.subs, c)
			close(c)
		}
		s.mu.Unlock()
	}()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	var buf bytes.Buffer
	buf.WriteString("retry: 3000\n\n")
	for _, b := range backlog {
		writeEvent(&buf, event{data: b})
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return
	}
	fl.Flush()
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
		case ev, ok := <-c:
			if !ok {
				io.WriteString(w, "event: end\ndata: {}\n\n")
				fl.Flush()
				return
			}
			buf.Reset()
			writeEvent(&buf, ev)
			// Write what else is waiting in the same write, so a burst costs one flush.
			for more := true; more; {
				select {
				case ev, ok := <-c:
					if !ok {
						more = false
						break
					}
					writeEvent(&buf, ev)
				default:
					more = false
				}
			}
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// writeEvent writes one Server-Sent Event; the data is one line of JSON.
func writeEvent(b *bytes.Buffer, ev event) {
	if ev.name != "" {
		b.WriteString("event: " + ev.name + "\n")
	}
	b.WriteString("data: ")
	b.Write(ev.data)
	b.WriteString("\n\n")
}

// uploadResult is what an upload answers: the messages of the capture, as the page's data.
type uploadResult struct {
	Messages []json.RawMessage `json:"messages"`
	LeftOut  int               `json:"left_out"`
	Error    string            `json:"error,omitempty"`
}

// upload dissects the capture in the request's body, held in memory and bounded by
// MaxUpload, and answers with its messages.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	if s.cfg.MaxUpload < 0 || s.cfg.Codec == nil {
		http.Error(w, "uploads are off", http.StatusForbidden)
		return
	}
	name := r.URL.Query().Get("name")
	if name == "" {
		name = "upload"
	}
	if len(name) > 200 {
		name = name[:200]
	}
	if r.ContentLength > s.cfg.MaxUpload {
		http.Error(w, fmt.Sprintf("%s: %d bytes is over the limit of %d bytes", name, r.ContentLength, s.cfg.MaxUpload), http.StatusRequestEntityTooLarge)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxUpload))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("%s: over the limit of %d bytes", name, s.cfg.MaxUpload), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the upload: "+err.Error(), http.StatusBadRequest)
		return
	}
	res, status := s.dissect(body, name)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(res)
}

// dissect runs one uploaded capture through the pipeline into a page's messages.
func (s *Server) dissect(data []byte, name string) (uploadResult, int) {
	out := New(Config{MaxMessages: s.cfg.MaxMessages, MaxBytes: s.cfg.MaxBytes}, false)
	f, _ := render.LookupFormat("html")
	p, err := dissect.New(dissect.Config{Codec: s.cfg.Codec, Out: out.Renderer(), Needs: f.Needs, Select: s.cfg.Select, Detect: true, Workers: 1})
	if err != nil {
		return uploadResult{Error: err.Error()}, http.StatusInternalServerError
	}
	res := uploadResult{Messages: []json.RawMessage{}}
	status := http.StatusOK
	if _, err := p.FileFrom(bytes.NewReader(data), name); err != nil {
		res.Error = err.Error()
		if s.cfg.Warn != nil {
			s.cfg.Warn(fmt.Errorf("upload: %w", err))
		}
	}
	if err := p.Close(); err != nil && res.Error == "" {
		res.Error = err.Error()
	}
	for _, m := range out.msgs {
		res.Messages = append(res.Messages, m)
	}
	res.LeftOut = out.left
	if len(res.Messages) == 0 && res.Error != "" {
		status = http.StatusUnprocessableEntity
	}
	return res, status
}
