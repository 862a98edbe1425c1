package reassembly

// framePool keeps the buffers framers assemble frames in, for Options.ReuseFrames: one
// assembler's framers take a buffer when a frame spans segments and give it back once the
// buffer is empty, so that a long capture does not allocate (and clear, and collect) a fresh
// buffer for every frame. It holds at most maxPooled buffers of at most maxPooledBytes in all,
// so that a burst of large frames does not stay in memory after it.
type framePool struct {
	free  [][]byte
	bytes int
}

const (
	maxPooled      = 8
	maxPooledBytes = 2 << 20
)

// get returns an empty buffer with room for at least want bytes. It prefers a pooled buffer
// with room for full bytes (the whole frame, when its size is known; 0 when not), then one
// with room for want; it allocates only want bytes, so that no more is allocated than the
// caller's growth rule allows.
func (p *framePool) get(want, full int) []byte {
	best := -1
	for i, b := range p.free {
		c := cap(b)
		if c < want {
			continue
		}
		// The smallest buffer that holds the whole frame, else the largest that holds want.
		if best < 0 {
			best = i
			continue
		}
		bc := cap(p.free[best])
		switch {
		case full > 0 && c >= full && (bc < full || c < bc):
			best = i
		case (full == 0 || bc < full) && c > bc:
			best = i
		}
	}
	if best < 0 {
		return make([]byte, 0, want)
	}
	b := p.free[best]
	last := len(p.free) - 1
	p.free[best], p.free[last] = p.free[last], nil
	p.free = p.free[:last]
	p.bytes -= cap(b)
	return b[:0]
}

// put gives a buffer back. When the pool is full, the smallest buffers make room for a larger
// one; a buffer larger than the whole pool may hold is dropped.
func (p *framePool) put(b []byte) {
	if cap(b) > maxPooledBytes {
		return
	}
	for len(p.free) >= maxPooled || p.bytes+cap(b) > maxPooledBytes {
		small := 0
		for i := range p.free {
			if cap(p.free[i]) < cap(p.free[small]) {
				small = i
			}
		}
		if cap(p.free[small]) >= cap(b) {
			return
		}
		p.bytes -= cap(p.free[small])
		last := len(p.free) - 1
		p.free[small], p.free[last] = p.free[last], nil
		p.free = p.free[:last]
	}
	p.free = append(p.free, b[:0])
	p.bytes += cap(b)
}
