package serve

// Display filters typed into a page. The page cannot run expr, so the server does: it keeps
// each held message's entry and pairs requests with responses as the pipeline does (by
// connection and correlation id; a request waits for its response, the end of its connection,
// or the reuse of its id), and decides on each pair with package filter, so that a page shows
// what -Y on the command line shows. /filter answers which of the held messages match (or,
// with a body, which of an uploaded capture's); /events?y=EXPR is a live stream of the pairs
// that match.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/filter"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/model"
)

// MaxExpr is the longest expression a page may send, in bytes (-Y on the command line takes
// any).
const MaxExpr = 2048

// evalTimeout bounds the evaluation of one filter over the held messages.
const evalTimeout = 30 * time.Second

// unit is what a display filter decides on: a request and its response, or one of them alone
// (the other nil). n numbers the decisions in the order they were made.
type unit struct {
	req, resp *held
	n         int
}

func (h *held) entry() *model.Entry {
	if h == nil {
		return nil
	}
	return h.e
}

// pair pairs h, which has just come, as the pipeline pairs messages for a filter, and returns
// the decisions its coming makes possible. Called with s.mu held.
func (s *Server) pair(h *held) []unit {
	e := h.e
	if e.Msg == nil {
		return []unit{s.alone(h)}
	}
	switch {
	case dissect.AwaitsResponse(e):
		var us []unit
		if old, ok := s.open.Hold(e, h); ok {
			// The client reused the id: the old request will not be answered now.
			us = append(us, s.alone(old))
		}
		h.open = true
		return us
	case e.Request:
		return []unit{s.alone(h)}
	}
	var req *held
	if e.RequestFrame > 0 { // its request was captured
		if req, _ = s.open.Answer(e); req != nil {
			req.open = false
			req.other, h.other = h, req
		}
	}
	return []unit{s.decide(req, h)}
}

// alone decides on a message without the other side of its pair.
func (s *Server) alone(h *held) unit {
	if h.open {
		h.open = false
		s.open.Forget(h.e, h)
	}
	if h.e.Request {
		return s.decide(h, nil)
	}
	return s.decide(nil, h)
}

func (s *Server) decide(req, resp *held) unit {
	s.decisions++
	for _, h := range []*held{req, resp} {
		if h != nil {
			h.decided = s.decisions
		}
	}
	return unit{req: req, resp: resp, n: s.decisions}
}

// decided returns the pairs of msgs decided after decision after, in the order they were
// decided. final decides the requests still open alone (nothing more will come: captures).
// Called with s.mu held, or on messages nobody else has.
func decided(msgs []*held, after int, final bool) []unit {
	var us []unit
	for _, h := range msgs {
		switch {
		case h.open && final:
			us = append(us, unit{req: h, n: int(^uint(0) >> 1)})
		case h.decided <= after:
		case h.e.Request && h.other != nil: // its response stands for the pair
		case h.e.Request:
			us = append(us, unit{req: h, n: h.decided})
		default:
			us = append(us, unit{req: h.other, resp: h, n: h.decided})
		}
	}
	slices.SortStableFunc(us, func(a, b unit) int { return a.n - b.n })
	return us
}

// exprError is what the page is told of an expression it cannot have: the message as -Y gives
// it, and where it went wrong (line and column from 1, offset in characters from 0).
type exprError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Offset  int    `json:"offset"`
}

// plainError is an exprError that names no place in the expression.
func plainError(msg string) *exprError { return &exprError{Error: msg, Message: msg, Offset: -1} }

// compile compiles a page's expression; nil for none.
func compile(src string) (*filter.Filter, *exprError) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	if len(src) > MaxExpr {
		msg := fmt.Sprintf("the expression is %d bytes long; the page takes at most %d (-Y on the command line takes any)", len(src), MaxExpr)
		return nil, plainError(msg)
	}
	if !utf8.ValidString(src) {
		return nil, plainError("the expression is not UTF-8")
	}
	f, err := filter.Compile(src)
	if err != nil {
		e := plainError(err.Error())
		if pos, msg, ok := filter.ErrorAt(err); ok {
			e.Message, e.Line, e.Column, e.Offset = msg, pos.Line, pos.Column, pos.Offset
		}
		return nil, e
	}
	return f, nil
}

// matching decides with f on each of us in turn (f nil: each matches), calling keep with those
// that match and failed with each error f fails on (the pair does not match). It stops when
// ctx is done (false), asked at every pair: one pair may take tens of milliseconds (a loop
// over a range).
func matching(ctx context.Context, f *filter.Filter, us []unit, failed func(error), keep func(unit)) bool {
	for _, u := range us {
		if ctx.Err() != nil {
			return false
		}
		ok := true
		if f != nil {
			var err error
			if ok, err = f.Match(u.req.entry(), u.resp.entry()); err != nil {
				failed(err)
			}
		}
		if ok {
			keep(u)
		}
	}
	return true
}

// warning is what a page is told of the first pair an expression failed on.
func warning(err error) string {
	return err.Error() + " (pairs it fails on are not shown)"
}

// filterAnswer is /filter's answer: the positions (from 0) in the page's list of the messages
// whose pair matches, out of how many.
type filterAnswer struct {
	Expr     string `json:"expr"`
	Match    []int  `json:"match"`
	Messages int    `json:"messages"`
	Warning  string `json:"warning,omitempty"`
}

// filter answers which messages match ?y=EXPR: of those the server holds (GET), or of the
// capture in the body (POST: an upload, dissected again and forgotten). With ?check=1 it only
// compiles. An expression that does not compile is answered 400 with where it went wrong; a
// body that is no capture, 422 with what is wrong with it.
func (s *Server) filter(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	src := q.Get("y")
	f, ferr := compile(src)
	if ferr != nil {
		writeJSON(w, http.StatusBadRequest, ferr)
		return
	}
	if q.Get("check") != "" {
		writeJSON(w, http.StatusOK, filterAnswer{Expr: src, Match: []int{}})
		return
	}
	var data []byte
	var name string
	if r.Method == http.MethodPost {
		var ok bool
		if data, name, ok = s.readCapture(w, r); !ok {
			return
		}
	}
	// The slot is taken before an upload is dissected: each dissection holds the whole
	// capture's trees until it is answered.
	release, ok := s.slot(w, r)
	if !ok {
		return
	}
	defer release()
	var msgs []*held
	if r.Method == http.MethodPost {
		out, err := s.dissect(data, name, holdEntries)
		if out == nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if err != nil && len(out.msgs) == 0 {
			// Not a capture (or nothing in it could be read): said, as /upload says it, not
			// answered as a capture none of whose messages match.
			writeJSON(w, http.StatusUnprocessableEntity, plainError(err.Error()))
			return
		}
		msgs = out.msgs
	} else {
		s.mu.Lock()
		msgs = slices.Clone(s.msgs)
		s.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.evalTimeout)
	defer cancel()
	ans := filterAnswer{Expr: src, Match: []int{}, Messages: len(msgs)}
	s.mu.Lock()
	us := decided(msgs, 0, !s.live)
	s.mu.Unlock()
	base := 0
	if len(msgs) > 0 {
		base = msgs[0].seq
	}
	failed := func(err error) {
		if ans.Warning == "" {
			ans.Warning = warning(err)
		}
	}
	if !matching(ctx, f, us, failed, func(u unit) {
		for _, h := range []*held{u.req, u.resp} {
			if h != nil && h.seq >= base {
				ans.Match = append(ans.Match, h.seq-base)
			}
		}
	}) {
		http.Error(w, fmt.Sprintf("the filter took longer than %v over %s", s.evalTimeout, plural.Count(len(msgs), "message")), http.StatusServiceUnavailable)
		return
	}
	slices.Sort(ans.Match)
	writeJSON(w, http.StatusOK, ans)
}
