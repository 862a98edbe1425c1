package dissect

import (
	"fmt"
	"path"
	"time"

	"github.com/kdissect/kdissect/codec"
	display "github.com/kdissect/kdissect/filter"
	"github.com/kdissect/kdissect/model"
)

// Selection chooses which messages are shown, and asks for statistics. The zero value shows
// everything but correlation id 0 on connection 0: CorrelationID and Stream choose nothing
// when negative, as in SelectAll.
type Selection struct {
	// APIs are names or keys; Topic, Group and ClientID are globs (path.Match).
	APIs          []string
	Topic, Group  string
	ClientID      string
	Errors        bool
	MinLatency    time.Duration
	CorrelationID int32
	Stream        int
	Requests      bool
	Responses     bool
	// Expr is a display filter (-Y), in the language of package filter: pairs are shown only
	// when it holds too.
	Expr string
	// Stats asks for the tables of --stats (package analysis) after the messages.
	Stats bool
}

// SelectAll returns the selection of every message.
func SelectAll() Selection { return Selection{CorrelationID: -1, Stream: -1} }

// filter decides which request/response pairs are shown.
type filter struct {
	sel  Selection
	apis map[int16]bool
	// expr is Selection.Expr compiled; warn is told of the first pair it fails on.
	expr   *display.Filter
	warn   func(error)
	warned bool
}

// Check reports whether the selection can be applied: its flags agree, its globs are globs and
// its APIs exist.
func (s *Selection) Check(c *codec.Codec) error {
	_, err := s.build(c)
	return err
}

// build checks the flags and resolves API names; it returns nil when nothing is filtered.
func (s *Selection) build(c *codec.Codec) (*filter, error) {
	if s.Requests && s.Responses {
		return nil, fmt.Errorf("--requests and --responses exclude each other")
	}
	for _, g := range []string{s.Topic, s.Group, s.ClientID} {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("bad glob %q: %v", g, err)
		}
	}
	f := &filter{sel: *s}
	if len(s.APIs) > 0 {
		f.apis = map[int16]bool{}
		for _, name := range s.APIs {
			a, err := c.Schemas.Lookup(name)
			if err != nil {
				return nil, fmt.Errorf("--api: %v", err)
			}
			f.apis[a.Key] = true
		}
	}
	if s.Expr != "" {
		var err error
		if f.expr, err = display.Compile(s.Expr); err != nil {
			return nil, fmt.Errorf("-Y: %v", err)
		}
	}
	if !s.Filters() {
		return nil, nil
	}
	return f, nil
}

// ReadsBodies reports whether the selection reads the bodies of messages (a -Y expression
// naming req or resp): they must then be decoded in full, not shallow, and kept until their
// pair is decided. A selection that cannot be applied reads none.
func (s *Selection) ReadsBodies() bool {
	if s.Expr == "" {
		return false
	}
	f, err := display.Compile(s.Expr)
	return err == nil && f.ReadsBodies()
}

// Filters reports whether the selection leaves any message out.
func (s *Selection) Filters() bool {
	return len(s.APIs) > 0 || s.Topic != "" || s.Group != "" || s.ClientID != "" || s.Errors || s.MinLatency != 0 ||
		s.CorrelationID >= 0 || s.Stream >= 0 || s.Requests || s.Responses || s.Expr != ""
}

// pairOnly says whether the filter needs to see the response before it can decide on a
// request: every filter but --stream and --correlation-id looks at both sides.
func (f *filter) pairOnly() bool {
	s := f.sel
	return f.apis != nil || s.Topic != "" || s.Group != "" || s.ClientID != "" || s.Errors || s.MinLatency > 0 || f.expr != nil
}

// streamOK reports whether a notice or message of this connection may be shown.
func (f *filter) streamOK(stream int) bool { return f.sel.Stream < 0 || f.sel.Stream == stream }

// match decides on a pair; req or resp may be nil (unanswered request, unpaired response,
// SASL token).
func (f *filter) match(req, resp *model.Entry) bool {
	s := f.sel
	any := req
	if any == nil {
		any = resp
	}
	if !f.streamOK(any.Stream) {
		return false
	}
	m := any.Msg
	if m == nil {
		return false
	}
	if s.CorrelationID >= 0 && m.CorrelationID != s.CorrelationID {
		return false
	}
	if f.apis != nil && !f.apis[m.APIKey] {
		return false
	}
	if s.ClientID != "" {
		if req == nil || req.Msg.ClientID == nil {
			return false
		}
		if ok, _ := path.Match(s.ClientID, *req.Msg.ClientID); !ok {
			return false
		}
	}
	if s.Topic != "" && !anyMatch(s.Topic, func(e *model.Entry) []string { return e.Facts.AllTopics() }, req, resp) {
		return false
	}
	if s.Group != "" && !anyMatch(s.Group, func(e *model.Entry) []string { return e.Facts.Groups }, req, resp) {
		return false
	}
	if s.Errors && (resp == nil || resp.Facts == nil || len(resp.Facts.Errors) == 0) {
		return false
	}
	if s.MinLatency > 0 && (resp == nil || resp.RequestFrame == 0 || resp.Latency < s.MinLatency) {
		return false
	}
	if f.expr != nil {
		ok, err := f.expr.Match(req, resp)
		if err != nil && !f.warned && f.warn != nil {
			// Said once: an expression that fails on one pair usually fails on many.
			f.warned = true
			f.warn(fmt.Errorf("-Y: %v (pairs it fails on are not shown; this is said once)", err))
		}
		return ok
	}
	return true
}

func anyMatch(glob string, values func(*model.Entry) []string, entries ...*model.Entry) bool {
	for _, e := range entries {
		if e == nil || e.Facts == nil {
			continue
		}
		for _, v := range values(e) {
			if ok, _ := path.Match(glob, v); ok {
				return true
			}
		}
	}
	return false
}
