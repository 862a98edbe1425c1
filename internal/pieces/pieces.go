// Package pieces keeps bytes in pieces of one size, taken from a free list and given back once
// used: the same memory serves over and over, never a buffer grown by copying. Memory grown so
// is fresh memory, whose pages fault in when first written (dear in a virtual machine), and a
// buffer of any size is hard to bound; pieces are neither.
package pieces

// Pool is a free list of pieces of Size bytes, safe for use by several goroutines.
type Pool struct {
	size int
	free chan []byte
}

// NewPool returns a pool of pieces of size bytes that keeps up to keep of them for reuse.
func NewPool(size, keep int) *Pool {
	return &Pool{size: size, free: make(chan []byte, keep)}
}

// Size is the capacity of the pool's pieces.
func (p *Pool) Size() int { return p.size }

// Get returns an empty piece: one kept, or a new one.
func (p *Pool) Get() []byte {
	select {
	case b := <-p.free:
		return b[:0]
	default:
		return make([]byte, 0, p.size)
	}
}

// Put keeps b for reuse, unless the pool keeps enough or b is not one of its pieces.
func (p *Pool) Put(b []byte) {
	if cap(b) != p.size {
		return
	}
	select {
	case p.free <- b:
	default:
	}
}

// Chain is an io.Writer that keeps what is written in pieces from Pool, in order.
type Chain struct {
	Pool   *Pool
	Pieces [][]byte
	// Len counts the bytes written since the last Release.
	Len int
}

func (c *Chain) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		k := len(c.Pieces) - 1
		if k < 0 || len(c.Pieces[k]) == cap(c.Pieces[k]) {
			c.Pieces = append(c.Pieces, c.Pool.Get())
			k++
		}
		m := copy(c.Pieces[k][len(c.Pieces[k]):cap(c.Pieces[k])], b)
		c.Pieces[k], b = c.Pieces[k][:len(c.Pieces[k])+m], b[m:]
	}
	c.Len += n
	return n, nil
}

// Release gives the pieces back to the pool and empties the chain.
func (c *Chain) Release() {
	for i, b := range c.Pieces {
		c.Pool.Put(b)
		c.Pieces[i] = nil
	}
	c.Pieces, c.Len = c.Pieces[:0], 0
}
