package dissect

import "github.com/kdissect/kdissect/model"

// Pending holds the requests that wait for their responses, so that a display filter decides
// on a request and its response together: the pipeline's filters and serve's, which must pair
// as they do. A request is found by its connection (stream) and correlation id. The zero
// value is ready to use.
type Pending[T comparable] struct {
	open map[pairKey]T
}

// pairKey finds a held request: its connection and correlation id.
type pairKey struct {
	stream int
	corr   int32
}

func keyOf(e *model.Entry) pairKey { return pairKey{e.Stream, e.Msg.CorrelationID} }

// AwaitsResponse reports whether request e is held until its response comes: not a request
// that asks for none (Produce with acks=0), nor a frame without a Kafka header (SASL tokens).
func AwaitsResponse(e *model.Entry) bool {
	return e.Request && !e.NoResponse && e.Msg != nil && e.Msg.APIKey >= 0
}

// Hold holds v for request e (AwaitsResponse). A request held with the same id will not be
// answered now, since the client reused the id: it is let go and returned.
func (p *Pending[T]) Hold(e *model.Entry, v T) (reused T, ok bool) {
	if p.open == nil {
		p.open = map[pairKey]T{}
	}
	k := keyOf(e)
	reused, ok = p.open[k]
	p.open[k] = v
	return reused, ok
}

// Answer lets go of and returns the request that response e answers, if one is held.
func (p *Pending[T]) Answer(e *model.Entry) (req T, ok bool) {
	k := keyOf(e)
	if req, ok = p.open[k]; ok {
		delete(p.open, k)
	}
	return req, ok
}

// Holds reports whether v is held for request e.
func (p *Pending[T]) Holds(e *model.Entry, v T) bool {
	held, ok := p.open[keyOf(e)]
	return ok && held == v
}

// Forget lets go of v, held for request e, if it still is.
func (p *Pending[T]) Forget(e *model.Entry, v T) {
	if p.Holds(e, v) {
		delete(p.open, keyOf(e))
	}
}

// Closed lets go of and returns the requests held on a connection that ended: no response
// will come for them. Their order is the map's: callers put them in capture order.
func (p *Pending[T]) Closed(stream int) []T {
	var left []T
	for k, v := range p.open {
		if k.stream == stream {
			delete(p.open, k)
			left = append(left, v)
		}
	}
	return left
}
