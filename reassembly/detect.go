package reassembly

import (
	"bytes"
	"fmt"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	gpr "github.com/gopacket/gopacket/reassembly"

	"github.com/kdissect/kdissect/codec/wire"
)

// Detection finds Kafka on ports nobody named: a connection on an unknown port is held back
// until the first bytes of one side decide, by Options.Detect, whether they start a Kafka
// request. That side is the client. Then the connection is opened as any other and the held
// bytes are replayed into its framers; otherwise it is ignored from then on.

// detectLimit bounds the bytes held per direction while deciding.
const detectLimit = 64 << 10

// detectScan is how far into a stream that did not start with a SYN detection looks for a
// request: such a capture can begin inside a frame.
const detectScan = 4096

// flowKey identifies a connection whichever way a segment goes.
type flowKey struct {
	a, b   gopacket.Endpoint
	pa, pb layers.TCPPort
}

func keyOf(net gopacket.Flow, tcp *layers.TCP) flowKey {
	src, dst := net.Endpoints()
	k := flowKey{src, dst, tcp.SrcPort, tcp.DstPort}
	if c := bytes.Compare(src.Raw(), dst.Raw()); c > 0 || c == 0 && tcp.SrcPort > tcp.DstPort {
		k = flowKey{dst, src, tcp.DstPort, tcp.SrcPort}
	}
	return k
}

// detectBuf holds a direction's first bytes and the packets that carried them.
type detectBuf struct {
	data  []byte
	spans []span
	// out: this direction cannot be the client's (its bytes are no Kafka request).
	out bool
}

// detect takes reassembled bytes of an undecided connection.
func (s *stream) detect(d Dir, sg gpr.ScatterGather, skip int) {
	length, _ := sg.Lengths()
	if length == 0 {
		return
	}
	b := &s.pending[d]
	if skip > 0 && len(b.data) > 0 {
		b.out = true // bytes were lost before the first request could be judged
	}
	if len(b.data) < detectLimit {
		b.spans = collectSpans(b.spans, sg, length, int64(len(b.data)))
		b.data = append(b.data, sg.Fetch(min(length, detectLimit-len(b.data)))...)
	}
	s.decide()
}

// decide judges the held bytes. With a SYN the connection's initiator is the client; without
// one either side may be.
func (s *stream) decide() {
	candidates := []Dir{ToServer, ToClient}
	if s.conn.SYN {
		candidates = candidates[:1]
	}
	open := 0
	for _, d := range candidates {
		b := &s.pending[d]
		if b.out {
			continue
		}
		open++
		if len(b.data) == 0 {
			continue
		}
		if s.syn[d] && s.a.opt.TLSKeys != nil && s.a.opt.TLSKeys.Len() > 0 && looksTLS(b.data) {
			// TLS from the first byte, and keys to read it: the decrypted stream decides on
			// frames as any other once the connection is open.
			s.accept(d, "TLS connection, to be decrypted with the key log")
			return
		}
		scan := 1
		if !s.syn[d] {
			scan = min(len(b.data), detectScan)
		}
		needMore := false
		for i := 0; i < scan; i++ {
			v, reason := s.a.opt.Detect(b.data[i:], i > 0 || !s.syn[d])
			switch v {
			case wire.Yes:
				s.accept(d, reason)
				return
			case wire.NeedMore, wire.Weak:
				needMore = true
			}
			if needMore && i == 0 && s.syn[d] {
				break
			}
		}
		if !needMore || len(b.data) >= detectLimit {
			b.out = true
			open--
		}
	}
	if open == 0 {
		s.undecided, s.rejected = false, true
		s.a.rejected[s.key] = true
		s.pending = [2]detectBuf{}
	}
}

// accept opens the connection with side d as the client and replays the held bytes.
func (s *stream) accept(d Dir, reason string) {
	if d == ToClient {
		// The first packet seen came from the server: swap the sides.
		s.firstIsClient = !s.firstIsClient
		c := s.conn
		c.Client, c.Server = c.Server, c.Client
		s.pending[0], s.pending[1] = s.pending[1], s.pending[0]
		s.syn[0], s.syn[1] = s.syn[1], s.syn[0]
		s.first[0], s.first[1] = s.first[1], s.first[0]
		s.end[0], s.end[1] = s.end[1], s.end[0]
		s.known[0], s.known[1] = s.known[1], s.known[0]
		s.hasEnd[0], s.hasEnd[1] = s.hasEnd[1], s.hasEnd[0]
		s.endPkt[0], s.endPkt[1] = s.endPkt[1], s.endPkt[0]
		s.endTime[0], s.endTime[1] = s.endTime[1], s.endTime[0]
	}
	s.undecided = false
	s.open()
	// Every connection detected says so; the handler, which sees all of a capture's
	// connections, reports each port once.
	var pkt int
	var t time.Time
	if first := s.pending[ToServer].spans; len(first) > 0 {
		pkt, t = first[0].pkt, first[0].time
	}
	s.a.h.Notice(Notice{Conn: s.conn, Dir: ToServer, Kind: NoticeDetected, Packet: pkt, Time: t,
		Msg: fmt.Sprintf("port %d taken as Kafka: %s", s.conn.Server.Port(), reason)})
	for dir := range s.pending {
		f, b := s.framers[dir], s.pending[dir]
		if !f.started {
			f.synced = s.syn[dir]
		}
		if len(b.data) > 0 {
			f.add(b.data, b.spans)
		}
	}
	s.pending = [2]detectBuf{}
}
