package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kgoUnanswered: a broker on 19405 that never answers one request while it answers the next
// one of the same connection. kfake cannot do it (it reads a connection's next request only
// once it has answered the one before), so the broker here is kfake behind dropProxy, which
// forwards every byte both ways but the first ListGroups response. A franz-go client sends a
// ListGroups request to its seed broker, and, once its answer is lost, a second one on the same
// connection, which is answered: the client, given the answer to a request it did not expect
// next, fails both and closes the connection. A third ListGroups, on a new connection, is
// answered.
func kgoUnanswered(ctx context.Context, file string) error {
	ports := []int{19405}
	c, addrs, err := newCluster([]int{0}) // kfake on a port of its own, not captured
	if err != nil {
		return err
	}
	defer c.Close()
	p, err := newDropProxy(ports[0], addrs[0], int16(kmsg.ListGroups))
	if err != nil {
		return err
	}
	defer p.close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		cl, err := kgo.NewClient(kgoOpts([]string{"127.0.0.1:" + strconv.Itoa(ports[0])}, "kdissect-doctor-lister")...)
		if err != nil {
			return err
		}
		defer cl.Close()
		seed := cl.SeedBrokers()[0]
		first := make(chan error, 1)
		go func() {
			_, err := seed.Request(ctx, kmsg.NewPtrListGroupsRequest())
			first <- err
		}()
		select {
		case <-p.dropped:
		case <-ctx.Done():
			return fmt.Errorf("no ListGroups answer to drop: %w", ctx.Err())
		}
		_, _ = seed.Request(ctx, kmsg.NewPtrListGroupsRequest()) // fails with the first
		if err := <-first; err == nil {
			return errors.New("the first ListGroups, whose answer was dropped, succeeded")
		}
		if _, err := seed.Request(ctx, kmsg.NewPtrListGroupsRequest()); err != nil {
			return fmt.Errorf("ListGroups on a new connection: %w", err)
		}
		return nil
	})
}

// dropProxy listens on a port and passes each connection's bytes to and from a broker, but
// for the response to the first request of one API key, which it drops.
type dropProxy struct {
	ln      net.Listener
	broker  string
	key     int16
	corr    atomic.Int64 // the correlation id whose response to drop, -1 before the request
	once    sync.Once
	dropped chan struct{} // closed once the response is dropped
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
}

// maxProxyFrame bounds the Kafka frames dropProxy reads.
const maxProxyFrame = 64 << 20

func newDropProxy(port int, broker string, key int16) (*dropProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	p := &dropProxy{ln: ln, broker: broker, key: key, dropped: make(chan struct{})}
	p.corr.Store(-1)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *dropProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		broker, err := net.Dial("tcp", p.broker)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, broker)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pass(client, broker, p.requests)
		go p.pass(broker, client, p.response)
	}
}

// pass copies Kafka frames from src to dst while keep says to, then closes both.
func (p *dropProxy) pass(src, dst net.Conn, keep func(frame []byte) bool) {
	defer p.wg.Done()
	defer src.Close()
	defer dst.Close()
	for {
		var size [4]byte
		if _, err := io.ReadFull(src, size[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(size[:])
		if n < 8 || n > maxProxyFrame {
			return
		}
		frame := make([]byte, 4+n)
		copy(frame, size[:])
		if _, err := io.ReadFull(src, frame[4:]); err != nil {
			return
		}
		if !keep(frame) {
			continue
		}
		if _, err := dst.Write(frame); err != nil {
			return
		}
	}
}

// requests notes the correlation id of the first request of p.key; it keeps every request.
func (p *dropProxy) requests(frame []byte) bool {
	if int16(binary.BigEndian.Uint16(frame[4:])) == p.key {
		p.corr.CompareAndSwap(-1, int64(int32(binary.BigEndian.Uint32(frame[8:]))))
	}
	return true
}

// response drops the response to the request requests noted, once.
func (p *dropProxy) response(frame []byte) bool {
	corr := int64(int32(binary.BigEndian.Uint32(frame[4:])))
	drop := false
	if corr == p.corr.Load() {
		p.once.Do(func() { drop = true; close(p.dropped) })
	}
	return !drop
}

// close stops listening, closes every connection and waits for the copies to end.
func (p *dropProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
