package dissect

import (
	"slices"
	"testing"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// TestPending: requests are found by connection and correlation id; a reused id lets the first
// go; a connection's end lets go of its requests only.
func TestPending(t *testing.T) {
	entry := func(stream int, corr int32, request bool) *model.Entry {
		return &model.Entry{Stream: stream, Request: request, Msg: &codec.Message{CorrelationID: corr}}
	}
	var p Pending[string]
	if _, ok := p.Answer(entry(1, 7, false)); ok {
		t.Fatal("the zero Pending answered a response")
	}
	for _, h := range []struct {
		stream int
		corr   int32
		name   string
	}{{1, 7, "a"}, {2, 7, "b"}, {1, 8, "c"}, {2, 9, "d"}} {
		if _, ok := p.Hold(entry(h.stream, h.corr, true), h.name); ok {
			t.Fatalf("holding %s displaced a request", h.name)
		}
	}
	if old, ok := p.Hold(entry(1, 8, true), "c2"); !ok || old != "c" {
		t.Errorf("id 8 reused on stream 1: displaced %q, %v; want c", old, ok)
	}
	if req, ok := p.Answer(entry(2, 7, false)); !ok || req != "b" {
		t.Errorf("response 7 on stream 2 answers %q, %v; want b", req, ok)
	}
	if _, ok := p.Answer(entry(2, 7, false)); ok {
		t.Error("a request answered twice")
	}
	if p.Holds(entry(1, 8, true), "c") || !p.Holds(entry(1, 8, true), "c2") {
		t.Error("Holds: the displaced request is held, or the one that displaced it is not")
	}
	p.Forget(entry(1, 8, true), "c") // displaced already: changes nothing
	if !p.Holds(entry(1, 8, true), "c2") {
		t.Error("forgetting a displaced request let go of the one held under its id")
	}
	left := p.Closed(1)
	slices.Sort(left)
	if !slices.Equal(left, []string{"a", "c2"}) {
		t.Errorf("stream 1 closed: %q; want a and c2", left)
	}
	if left := p.Closed(1); len(left) != 0 {
		t.Errorf("stream 1 closed again: %q", left)
	}
	if req, ok := p.Answer(entry(2, 9, false)); !ok || req != "d" {
		t.Errorf("stream 2 lost its request to stream 1's end: %q, %v", req, ok)
	}
}
