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
	// lost counts the bytes lost before the first ones held (the SYN was captured, the first
	// data segments were not: a capture cut down to some frames), at packet lostPkt: the held
	// bytes may then start inside a frame, and the framer must be told of the gap.
	lost     int
	lostPkt  int
	lostTime time.Time
}

// detect takes reassembled bytes of an undecided connection.
func (s *stream) detect(d Dir, sg gpr.ScatterGather, skip int) {
	length, _ := sg.Lengths()
	if length == 0 {
		return
	}
	b := &s.held()[d]
	if skip > 0 {
		if len(b.data) > 0 {
			b.out = true // bytes were lost before the first request could be judged
		} else {
			b.lost += skip
			b.lostPkt, b.lostTime = packetNum(sg.CaptureInfo(0))
		}
	}
	// Held whole or not at all: bytes dropped here would be missing from the stream without a
	// word. Past detectLimit, decide gives up on the direction.
	if len(b.data) < detectLimit {
		b.spans = collectSpans(b.spans, sg, length, int64(len(b.data)))
		b.data = append(b.data, sg.Fetch(length)...)
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
		b := &s.held()[d]
		if b.out {
			continue
		}
		open++
		if len(b.data) == 0 {
			continue
		}
		// From the stream's first byte: its SYN was seen and nothing was lost before the data.
		fromStart := s.syn[d] && b.lost == 0
		if fromStart && looksTLS(b.data) {
			if s.a.opt.TLSKeys != nil && s.a.opt.TLSKeys.Len() > 0 {
				// TLS from the first byte, and keys to read it: the decrypted stream decides on
				// frames as any other once the connection is open.
				s.accept(d, "TLS connection, to be decrypted with the key log")
				return
			}
			// TLS without keys: whether Kafka is inside cannot be told, but the connection gets
			// the one-line report a named port's TLS gets (version, server name, cipher, and
			// how to decrypt it), without taking the port as Kafka.
			s.accept(d, "")
			return
		}
		scan := 1
		if !fromStart {
			scan = min(len(b.data), detectScan)
		}
		needMore := false
		for i := 0; i < scan; i++ {
			v, reason := s.a.opt.Detect(b.data[i:], i > 0 || !fromStart)
			switch v {
			case wire.Yes:
				s.accept(d, reason)
				return
			case wire.NeedMore, wire.Weak:
				needMore = true
			}
			if needMore && i == 0 && fromStart {
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
		s.pending = nil
	}
}

// held returns the bytes held per direction until detection decides, made on first use: most
// connections are on a Kafka port and never need them.
func (s *stream) held() *[2]detectBuf {
	if s.pending == nil {
		s.pending = new([2]detectBuf)
	}
	return s.pending
}

// accept opens the connection with side d as the client and replays the held bytes. The first
// connection accepted on a port reports the port as Kafka, and why (reason), unless reason is
// empty.
func (s *stream) accept(d Dir, reason string) {
	pending := s.held()
	if d == ToClient {
		// The first packet seen came from the server: swap the sides.
		s.firstIsClient = !s.firstIsClient
		c := s.conn
		c.Client, c.Server = c.Server, c.Client
		pending[0], pending[1] = pending[1], pending[0]
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
	// Every connection detected says so, unless reason is empty (TLS without keys, which is
	// not known to be Kafka); the handler, which sees all of a capture's connections, reports
	// each port once.
	var pkt int
	var t time.Time
	if first := pending[ToServer].spans; len(first) > 0 {
		pkt, t = first[0].pkt, first[0].time
	}
	if reason != "" {
		s.a.h.Notice(Notice{Conn: s.conn, Dir: ToServer, Kind: NoticeDetected, Packet: pkt, Time: t,
			Msg: fmt.Sprintf("port %d taken as Kafka: %s", s.conn.Server.Port(), reason)})
	}
	for dir := range pending {
		f, b := s.framers[dir], pending[dir]
		if !f.started {
			f.synced = s.syn[dir]
		}
		if b.lost > 0 {
			// As ReassembledSG does for a gap before the first data: the framer looks for a
			// frame, and the held bytes' offsets start after the loss.
			f.gap(b.lost, b.lostPkt, b.lostTime)
			for i := range b.spans {
				b.spans[i].off += f.base
			}
		}
		if len(b.data) > 0 {
			f.add(b.data, b.spans)
		}
	}
	s.pending = nil
}
