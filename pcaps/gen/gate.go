package main

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
)

// produceKey is the Kafka API key of Produce requests.
const produceKey = 0

// halfWriteGate wraps a client's connections. Once armed, the next Produce
// request written on any of them is written in two halves: after the first
// half, held is closed and the write waits until release is called. The
// bytes on the wire are the client's, only cut into two TCP segments with a
// pause between them.
type halfWriteGate struct {
	armed   atomic.Bool
	held    chan struct{}
	resume  chan struct{}
	release func()
}

func newHalfWriteGate() *halfWriteGate {
	g := &halfWriteGate{held: make(chan struct{}), resume: make(chan struct{})}
	g.release = sync.OnceFunc(func() { close(g.resume) })
	return g
}

// arm makes the next Produce request stop half written.
func (g *halfWriteGate) arm() { g.armed.Store(true) }

// dial has the signature of kgo.Dialer.
func (g *halfWriteGate) dial(ctx context.Context, network, host string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: conn, g: g}, nil
}

type gatedConn struct {
	net.Conn
	g *halfWriteGate
}

// Write sends b, stopping halfway through if b is the Produce request the
// gate is armed for. franz-go writes each request with a single Write, so b
// starts with the request's size and API key.
func (c *gatedConn) Write(b []byte) (int, error) {
	if len(b) < 8 || int16(binary.BigEndian.Uint16(b[4:6])) != produceKey || !c.g.armed.CompareAndSwap(true, false) {
		return c.Conn.Write(b)
	}
	half := len(b) / 2
	n, err := c.Conn.Write(b[:half])
	if err != nil {
		return n, err
	}
	close(c.g.held)
	<-c.g.resume
	m, err := c.Conn.Write(b[half:])
	return n + m, err
}
