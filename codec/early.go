package codec

// Early holds, for one connection, the responses that reached the pairing before any request
// they could answer. The two directions of a connection can arrive out of order (one waited
// behind a gap), so such a response waits until a request with its correlation id arrives, or
// until the client has sent something captured after it, which proves that its request is not
// in the capture. F is the caller's frame, which Early reads through a Place.
type Early[F any] struct {
	cv    *Conversation
	place func(*F) Place
	// keep is called on a frame before it is held (a frame whose bytes are only lent copies
	// them); deliver takes the frames in the order the pairing needs them.
	keep    func(*F)
	deliver func(F)
	held    []F
}

// Place is what Early reads of a frame: who sent it, its bytes, and the positions in the
// capture (packet numbers) of its first and last bytes.
type Place struct {
	Request     bool
	Data        []byte
	First, Last int
}

// maxEarly bounds the responses held per connection while waiting for their requests.
const maxEarly = 64

// NewEarly returns the queue of the connection that cv follows.
func NewEarly[F any](cv *Conversation, place func(*F) Place, keep func(*F), deliver func(F)) *Early[F] {
	return &Early[F]{cv: cv, place: place, keep: keep, deliver: deliver}
}

// Add takes the connection's next frame, and delivers it and any held response it frees.
func (q *Early[F]) Add(f F) {
	p := q.place(&f)
	if !p.Request && !q.cv.Expects(p.Data) {
		q.keep(&f)
		h := append(q.held, f)
		if len(h) > maxEarly {
			q.deliver(h[0])
			h = h[1:]
		}
		q.held = h
		return
	}
	if !p.Request || len(q.held) == 0 {
		q.deliver(f)
		return
	}
	// Responses captured before this request cannot answer it: their requests are not in the
	// capture. They go first, to keep capture order, then the request and what it answers. A
	// response with this request's correlation id is kept for it even when it was captured
	// first: a capture merged from two interfaces, or taken on a multi-queue NIC, can hold a
	// request after its response.
	var keep []F
	for _, r := range q.held {
		if rp := q.place(&r); rp.Last < p.First && !Answers(rp.Data, p.Data) {
			q.deliver(r)
		} else {
			keep = append(keep, r)
		}
	}
	q.deliver(f)
	q.held = keep[:0]
	for _, r := range keep {
		if q.cv.Expects(q.place(&r).Data) {
			q.deliver(r)
		} else {
			q.held = append(q.held, r)
		}
	}
}

// Close delivers the responses still held: the connection ended without their requests.
func (q *Early[F]) Close() {
	for _, r := range q.held {
		q.deliver(r)
	}
	q.held = nil
}
