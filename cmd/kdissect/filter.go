package main

import (
	"fmt"
	"path"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/render"
)

// selection holds the flags that choose which messages are shown, and --stats.
type selection struct {
	apis          []string
	topic, group  string
	clientID      string
	errors        bool
	minLatency    time.Duration
	correlationID int32
	stream        int
	requests      bool
	responses     bool
	stats         bool
}

func (s *selection) register(fs *flag.FlagSet) {
	fs.StringSliceVar(&s.apis, "api", nil, "show only these APIs, by name or key (repeatable)")
	fs.StringVar(&s.topic, "topic", "", "show only pairs that name a topic matching this glob (its name, or its topic id)")
	fs.StringVar(&s.group, "group", "", "show only pairs that name a consumer group matching this glob")
	fs.StringVar(&s.clientID, "client-id", "", "show only pairs whose request's client id matches this glob")
	fs.BoolVar(&s.errors, "errors", false, "show only pairs whose response carries a non-zero error code")
	fs.DurationVar(&s.minLatency, "min-latency", 0, "show only pairs answered this slowly or slower (e.g. 50ms)")
	fs.Int32Var(&s.correlationID, "correlation-id", -1, "show only messages with this correlation id")
	fs.IntVar(&s.stream, "stream", -1, "show only this connection (the stream number in the output)")
	fs.BoolVar(&s.requests, "requests", false, "show requests only")
	fs.BoolVar(&s.responses, "responses", false, "show responses only")
	fs.BoolVar(&s.stats, "stats", false, "after the messages, print tables: per API, per error code, per connection, per topic")
}

// filter decides which request/response pairs are shown.
type filter struct {
	sel  selection
	apis map[int16]bool
}

// build checks the flags and resolves API names; it returns nil when nothing is filtered.
func (s *selection) build(c *codec.Codec) (*filter, error) {
	if s.requests && s.responses {
		return nil, fmt.Errorf("--requests and --responses exclude each other")
	}
	for _, g := range []string{s.topic, s.group, s.clientID} {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("bad glob %q: %v", g, err)
		}
	}
	f := &filter{sel: *s}
	if len(s.apis) > 0 {
		f.apis = map[int16]bool{}
		for _, name := range s.apis {
			a, err := c.Schemas.Lookup(name)
			if err != nil {
				return nil, fmt.Errorf("--api: %v", err)
			}
			f.apis[a.Key] = true
		}
	}
	if f.apis == nil && s.topic == "" && s.group == "" && s.clientID == "" && !s.errors && s.minLatency == 0 &&
		s.correlationID < 0 && s.stream < 0 && !s.requests && !s.responses {
		return nil, nil
	}
	return f, nil
}

// pairOnly says whether the filter needs to see the response before it can decide on a
// request: every filter but --stream and --correlation-id looks at both sides.
func (f *filter) pairOnly() bool {
	s := f.sel
	return f.apis != nil || s.topic != "" || s.group != "" || s.clientID != "" || s.errors || s.minLatency > 0
}

// streamOK reports whether a notice or message of this connection may be shown.
func (f *filter) streamOK(stream int) bool { return f.sel.stream < 0 || f.sel.stream == stream }

// match decides on a pair; req or resp may be nil (unanswered request, unpaired response,
// SASL token).
func (f *filter) match(req, resp *render.Entry) bool {
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
	if s.correlationID >= 0 && m.CorrelationID != s.correlationID {
		return false
	}
	if f.apis != nil && !f.apis[m.APIKey] {
		return false
	}
	if s.clientID != "" {
		if req == nil || req.Msg.ClientID == nil {
			return false
		}
		if ok, _ := path.Match(s.clientID, *req.Msg.ClientID); !ok {
			return false
		}
	}
	if s.topic != "" && !anyMatch(s.topic, func(e *render.Entry) []string { return topicsOf(e.Facts) }, req, resp) {
		return false
	}
	if s.group != "" && !anyMatch(s.group, func(e *render.Entry) []string { return e.Facts.Groups }, req, resp) {
		return false
	}
	if s.errors && (resp == nil || resp.Facts == nil || len(resp.Facts.Errors) == 0) {
		return false
	}
	if s.minLatency > 0 && (resp == nil || resp.RequestFrame == 0 || resp.Latency < s.minLatency) {
		return false
	}
	return true
}

// topicsOf lists the topics a message names: their names, including those of its record sets,
// and their topic ids as Kafka prints them, so that a topic whose name the capture does not say
// can be chosen by its id (as the summary and --stats show it).
func topicsOf(f *codec.Facts) []string {
	out := append([]string(nil), f.Topics...)
	for _, id := range f.TopicIDs {
		out = append(out, id.String())
	}
	for _, r := range f.RecordSets {
		out = append(out, r.Key())
	}
	return out
}

func anyMatch(glob string, values func(*render.Entry) []string, entries ...*render.Entry) bool {
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
