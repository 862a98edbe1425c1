package reassembly

import "time"

// Stream frames the two directions of one connection whose bytes come as ordered streams
// rather than as TCP segments: from a proxy, a pipe or a program's own socket. Decrypted TLS
// reaches the framers the same way. Each chunk says where it was seen: a position that grows
// along the input (a packet number, a count of reads) and a time. A Stream is not safe for
// concurrent use.
type Stream struct {
	conn    *Conn
	h       Handler
	framers [2]*framer
	done    bool
}

// NewStream starts a connection whose two streams begin at their first bytes, as after a SYN.
// The handler is told of it as of a connection an assembler found: Started, if it has the
// method, then Open. Of opt, the frame bounds, TLSKeys and ReuseFrames apply.
func NewStream(h Handler, c *Conn, opt Options) *Stream {
	opt = opt.withDefaults()
	if st, ok := h.(interface{ Started(*Conn) }); ok {
		st.Started(c)
	}
	var pool *framePool
	if opt.ReuseFrames {
		pool = &framePool{}
	}
	s := &Stream{conn: c, h: h, framers: newFramers(h, c, &opt, pool)}
	for _, f := range s.framers {
		f.synced = true
	}
	return s
}

// Write takes the next bytes of direction d, seen at position pos and time t. data is not
// kept after Write returns.
func (s *Stream) Write(d Dir, data []byte, pos int, t time.Time) {
	if !s.done && len(data) > 0 {
		s.framers[d].write(data, pos, t)
	}
}

// Lost reports n bytes of direction d that the input lost, noticed at position pos and time
// t: the framer looks for a frame boundary in what follows.
func (s *Stream) Lost(d Dir, n int, pos int, t time.Time) {
	if !s.done && n > 0 {
		s.framers[d].gap(n, pos, t)
	}
}

// Close ends both directions: a frame cut short is reported, and the handler is told.
func (s *Stream) Close() {
	if s.done {
		return
	}
	s.done = true
	s.framers[ToServer].finish()
	s.framers[ToClient].finish()
	s.h.Close(s.conn)
}
