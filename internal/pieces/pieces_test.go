package pieces

import (
	"bytes"
	"testing"
)

func TestChain(t *testing.T) {
	tests := []struct {
		name   string
		writes []int // sizes written one after another
		pieces int
	}{
		{"nothing", nil, 0},
		{"less than a piece", []int{3}, 1},
		{"exactly a piece", []int{8}, 1},
		{"across pieces", []int{5, 5, 5}, 2},
		{"one write of several pieces", []int{17}, 3},
	}
	pool := NewPool(8, 2)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Chain{Pool: pool}
			var want []byte
			for i, n := range tt.writes {
				b := bytes.Repeat([]byte{byte('a' + i)}, n)
				want = append(want, b...)
				if k, err := c.Write(b); k != n || err != nil {
					t.Fatalf("Write(%d bytes) = %d, %v", n, k, err)
				}
			}
			if got := bytes.Join(c.Pieces, nil); !bytes.Equal(got, want) || c.Len != len(want) {
				t.Errorf("chain holds %q (Len %d), want %q", got, c.Len, want)
			}
			if len(c.Pieces) != tt.pieces {
				t.Errorf("%d pieces, want %d", len(c.Pieces), tt.pieces)
			}
			for _, p := range c.Pieces {
				if cap(p) != 8 {
					t.Errorf("a piece of capacity %d, want 8", cap(p))
				}
			}
			c.Release()
			if len(c.Pieces) != 0 || c.Len != 0 {
				t.Errorf("after Release: %d pieces, Len %d", len(c.Pieces), c.Len)
			}
		})
	}
}

func TestPoolReuses(t *testing.T) {
	p := NewPool(16, 1)
	a := p.Get()
	a = append(a, "kept"...)
	p.Put(a)
	p.Put(make([]byte, 4)) // not one of its pieces: dropped
	b := p.Get()
	if len(b) != 0 || cap(b) != 16 || &b[:1][0] != &a[:1][0] {
		t.Errorf("Get after Put: len %d cap %d, same memory %v; want the piece put back, emptied",
			len(b), cap(b), cap(b) > 0 && &b[:1][0] == &a[:1][0])
	}
	if c := p.Get(); cap(c) != 16 {
		t.Errorf("a new piece of capacity %d, want 16", cap(c))
	}
}
