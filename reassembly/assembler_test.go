package reassembly

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec/wire"
)

// sink is a Handler that records everything, with testCheck for both directions.
type sink struct {
	conns   []*Conn
	closed  map[*Conn]int
	frames  []Frame
	notices []Notice
	// lent: frames are lent (Options.ReuseFrames). The sink keeps copies and scribbles over
	// the lent bytes, as a later frame assembled in the same buffer would.
	lent bool
	// started counts the connections Started was told of: it numbers them, as a Handler does.
	started int
}

func (s *sink) Started(c *Conn) {
	c.ID = s.started
	s.started++
}

func (s *sink) Open(c *Conn) (Checker, Checker) {
	s.conns = append(s.conns, c)
	return testCheck, testCheck
}
func (s *sink) Frame(f Frame) {
	if s.lent {
		f.Data = scribble(f.Data)
	}
	s.frames = append(s.frames, f)
}
func (s *sink) Notice(n Notice) { s.notices = append(s.notices, n) }

// scribble returns a copy of a lent frame's bytes and overwrites the bytes lent.
func scribble(lent []byte) []byte {
	kept := bytes.Clone(lent)
	for i := range lent {
		lent[i] = 0xdd
	}
	return kept
}
func (s *sink) Close(c *Conn) {
	if s.closed == nil {
		s.closed = map[*Conn]int{}
	}
	s.closed[c]++
}

func (s *sink) noticeText() string {
	var out []string
	for _, n := range s.notices {
		out = append(out, fmt.Sprintf("[%v dir %d kind %d packet %d: %s]", n.Conn, n.Dir, n.Kind, n.Packet, n.Msg))
	}
	return strings.Join(out, " ")
}

var (
	clientAP = netip.MustParseAddrPort("10.0.0.5:53422")
	serverAP = netip.MustParseAddrPort("10.0.0.9:9092")
)

// tcpSeg is one segment of a test connection.
type tcpSeg struct {
	toServer bool
	seq, ack uint32
	flags    string // S, A, F, R
	data     []byte
}

// segment builds the capture.Segment for packet num.
func segment(t testing.TB, num int, s tcpSeg) *capture.Segment {
	src, dst := clientAP, serverAP
	if !s.toServer {
		src, dst = dst, src
	}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port()),
		Seq: s.seq, Ack: s.ack, Window: 65535,
		SYN: strings.Contains(s.flags, "S"), ACK: strings.Contains(s.flags, "A"),
		FIN: strings.Contains(s.flags, "F"), RST: strings.Contains(s.flags, "R")}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, tcp, gopacket.Payload(s.data)); err != nil {
		t.Fatal(err)
	}
	dec := &layers.TCP{}
	if err := dec.DecodeFromBytes(bytes.Clone(buf.Bytes()), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	ip := func(a netip.AddrPort) net.IP { b := a.Addr().As4(); return net.IP(b[:]) }
	return &capture.Segment{
		Num:  num,
		Info: gopacket.CaptureInfo{Timestamp: pktTime(num), CaptureLength: 54 + len(s.data), Length: 54 + len(s.data)},
		Net:  gopacket.NewFlow(layers.EndpointIPv4, ip(src), ip(dst)),
		TCP:  dec,
	}
}

// run feeds the segments, numbered from 1, and closes the assembler.
func run(t testing.TB, opt Options, segs []tcpSeg) *sink {
	h := &sink{lent: opt.ReuseFrames}
	if opt.IsServerPort == nil {
		opt.IsServerPort = func(p uint16) bool { return p == 9092 }
	}
	a := New(h, opt)
	for i, s := range segs {
		a.Add(segment(t, i+1, s))
	}
	a.Close()
	return h
}

// conversation is a connection with a handshake, data segments as given (client seq from
// 1001, server from 5001), and FINs.
type builder struct {
	cseq, sseq uint32
	segs       []tcpSeg
}

func newBuilder(isnC, isnS uint32, handshake bool) *builder {
	b := &builder{cseq: isnC, sseq: isnS}
	if handshake {
		b.segs = append(b.segs,
			tcpSeg{toServer: true, seq: isnC, flags: "S"},
			tcpSeg{toServer: false, seq: isnS, ack: isnC + 1, flags: "SA"},
			tcpSeg{toServer: true, seq: isnC + 1, ack: isnS + 1, flags: "A"})
	}
	b.cseq++
	b.sseq++
	return b
}

func (b *builder) send(toServer bool, data []byte) tcpSeg {
	s := tcpSeg{toServer: toServer, seq: b.cseq, ack: b.sseq, flags: "A", data: data}
	if toServer {
		b.cseq += uint32(len(data))
	} else {
		s.seq, s.ack = b.sseq, b.cseq
		b.sseq += uint32(len(data))
	}
	b.segs = append(b.segs, s)
	return s
}

func (b *builder) fin() {
	b.segs = append(b.segs,
		tcpSeg{toServer: true, seq: b.cseq, ack: b.sseq, flags: "FA"},
		tcpSeg{toServer: false, seq: b.sseq, ack: b.cseq + 1, flags: "FA"},
		tcpSeg{toServer: true, seq: b.cseq + 1, ack: b.sseq + 1, flags: "A"})
}

func frameList(fs []Frame) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("dir %d %d bytes at %d packets %d-%d", f.Dir, len(f.Data), f.Offset, f.FirstPacket, f.LastPacket))
	}
	return strings.Join(out, "; ")
}

func TestAssemblerConnection(t *testing.T) {
	req, resp := tframe('K', 20, 1), tframe('K', 60, 2)
	for _, isn := range []uint32{1000, 1<<32 - 30} { // the second wraps inside the frames
		t.Run(fmt.Sprint("isn ", isn), func(t *testing.T) {
			b := newBuilder(isn, isn+7, true)
			b.send(true, req[:10]) // 4
			b.send(true, req[10:]) // 5
			b.send(false, resp)    // 6
			b.send(true, req)      // 7
			b.send(false, resp[:1])
			b.send(false, resp[1:]) // 9
			b.fin()
			h := run(t, Options{}, b.segs)
			if len(h.conns) != 1 {
				t.Fatalf("%d connections", len(h.conns))
			}
			c := h.conns[0]
			if c.ID != 0 || c.Client != clientAP || c.Server != serverAP || !c.SYN {
				t.Errorf("connection %+v", c)
			}
			want := "dir 0 25 bytes at 0 packets 4-5; dir 1 65 bytes at 0 packets 6-6; dir 0 25 bytes at 25 packets 7-7; dir 1 65 bytes at 65 packets 8-9"
			if got := frameList(h.frames); got != want {
				t.Errorf("frames %s\nwant   %s", got, want)
			}
			if len(h.notices) != 0 {
				t.Errorf("notices %s", h.noticeText())
			}
			if h.closed[c] != 1 {
				t.Errorf("Close called %d times", h.closed[c])
			}
			for _, f := range h.frames {
				if f.Conn != c || !f.FirstTime.Equal(pktTime(f.FirstPacket)) || !f.LastTime.Equal(pktTime(f.LastPacket)) {
					t.Errorf("frame %+v", f)
				}
			}
		})
	}
}

// A capture that starts in the middle of a connection, with a packet from the server: the
// broker is still the server, and both directions look for a frame boundary.
func TestAssemblerMidStream(t *testing.T) {
	req, resp := tframe('K', 20, 0xee), tframe('K', 60, 0xee)
	b := newBuilder(77, 1<<31, false)
	b.send(false, resp[30:]) // 1: the end of a response
	b.send(true, req)        // 2
	b.send(false, resp)      // 3
	b.send(true, req[:5])    // 4: the start of a request, never finished
	h := run(t, Options{}, b.segs)
	if len(h.conns) != 1 || h.conns[0].Client != clientAP || h.conns[0].Server != serverAP || h.conns[0].SYN {
		t.Fatalf("connections %+v", h.conns)
	}
	want := fmt.Sprintf("dir 0 25 bytes at 0 packets 2-2; dir 1 65 bytes at %d packets 3-3", len(resp)-30)
	if got := frameList(h.frames); got != want {
		t.Errorf("frames %s\nwant   %s", got, want)
	}
	var kinds []NoticeKind
	for _, n := range h.notices {
		kinds = append(kinds, n.Kind)
	}
	slices.Sort(kinds)
	if fmt.Sprint(kinds) != fmt.Sprint([]NoticeKind{NoticeSkipped, NoticePartial}) {
		t.Errorf("notices %s", h.noticeText())
	}
}

// The connection's start is captured, but its first data segment is lost: the framer must not
// believe it is in step with the stream, and the loss must be reported.
func TestAssemblerFirstSegmentLost(t *testing.T) {
	a, b1 := tframe('K', 40, 0xee), tframe('k', 10, 0xee)
	bld := newBuilder(1000, 9000, true)
	lost := bld.send(true, a[:20])
	bld.send(true, cat(a[20:], b1)) // the tail of a, then b1
	bld.send(false, a)
	bld.send(true, b1)
	bld.fin()
	segs := slices.DeleteFunc(slices.Clone(bld.segs), func(s tcpSeg) bool { return s.seq == lost.seq && len(s.data) > 0 && s.toServer })
	h := run(t, Options{}, segs)
	// a's tail is junk; b1 is found (it is Weak, and confirmed by its successor).
	// The client's data waits behind the gap until the end: the response comes first.
	want := "dir 1 45 bytes at 0 packets 5-5; dir 0 15 bytes at 45 packets 4-4; dir 0 15 bytes at 60 packets 6-6"
	if got := frameList(h.frames); got != want {
		t.Errorf("frames %s\nwant   %s", got, want)
	}
	if len(h.notices) != 2 || !strings.Contains(h.noticeText(), "20 bytes lost (not captured) at stream offset 0") ||
		!strings.Contains(h.noticeText(), "25 bytes at stream offset 20 skipped") {
		t.Errorf("notices %s", h.noticeText())
	}
}

// A segment lost in the middle is reported when a flush gives up on it, on the capture's clock,
// and the frames after it are found.
func TestAssemblerGapFlushedOnCaptureClock(t *testing.T) {
	a := tframe('K', 40, 1)
	b := newBuilder(1000, 9000, true)
	b.send(true, a)
	lost := b.send(true, a)
	b.send(true, a)
	segs := slices.DeleteFunc(slices.Clone(b.segs), func(s tcpSeg) bool { return s.seq == lost.seq && len(s.data) > 0 })
	h := &sink{}
	asm := New(h, Options{IsServerPort: func(p uint16) bool { return p == 9092 }, FlushAfter: 2 * time.Second})
	for i, s := range segs {
		asm.Add(segment(t, i+1, s))
	}
	if len(h.frames) != 1 || len(h.notices) != 0 {
		t.Fatalf("before the flush: frames %s, notices %s", frameList(h.frames), h.noticeText())
	}
	// Packets of another connection, 3 seconds later on the capture's clock.
	other := segment(t, 10, tcpSeg{toServer: true, seq: 1, flags: "S"})
	other.TCP.SrcPort = 40000
	other.Info.Timestamp = pktTime(0).Add(3 * time.Second)
	asm.Add(other)
	other = segment(t, 11, tcpSeg{toServer: true, seq: 1, flags: "S"})
	other.TCP.SrcPort = 40001
	other.Info.Timestamp = pktTime(0).Add(5 * time.Second)
	asm.Add(other)
	if got, want := frameList(h.frames), "dir 0 45 bytes at 0 packets 4-4; dir 0 45 bytes at 90 packets 5-5"; got != want {
		t.Errorf("frames %s\nwant   %s", got, want)
	}
	if len(h.notices) != 1 || h.notices[0].Kind != NoticeGap || h.notices[0].Packet != 5 || !strings.Contains(h.notices[0].Msg, "45 bytes lost") {
		t.Errorf("notices %s", h.noticeText())
	}
	asm.Close()
}

// After a connection closes, the last ACK still belongs to it, and a new SYN on the same
// addresses and ports opens a new connection.
func TestAssemblerPortReuse(t *testing.T) {
	a := tframe('K', 10, 1)
	b := newBuilder(1000, 9000, true)
	b.send(true, a)
	b.send(false, a)
	b.fin()
	b.segs = append(b.segs, tcpSeg{toServer: true, seq: b.cseq + 1, ack: b.sseq + 1, flags: "A"}) // a duplicate last ACK
	first := len(b.segs)
	b2 := newBuilder(50000, 70000, true)
	b2.send(true, a)
	b2.send(false, a)
	h := run(t, Options{}, append(b.segs, b2.segs...))
	if len(h.conns) != 2 || h.conns[0].ID != 0 || h.conns[1].ID != 1 || !h.conns[1].SYN {
		t.Fatalf("connections %v", h.conns)
	}
	want := fmt.Sprintf("dir 0 15 bytes at 0 packets 4-4; dir 1 15 bytes at 0 packets 5-5; dir 0 15 bytes at 0 packets %d-%d; dir 1 15 bytes at 0 packets %d-%d",
		first+4, first+4, first+5, first+5)
	if got := frameList(h.frames); got != want {
		t.Errorf("frames %s\nwant   %s", got, want)
	}
	for i, f := range h.frames {
		if f.Conn != h.conns[i/2] {
			t.Errorf("frame %d on connection %d", i, f.Conn.ID)
		}
	}
	if h.closed[h.conns[0]] != 1 || h.closed[h.conns[1]] != 1 {
		t.Errorf("closed %v", h.closed)
	}
}

// Segments of connections without a broker port are ignored.
func TestAssemblerPortFilter(t *testing.T) {
	b := newBuilder(1, 2, true)
	b.send(true, tframe('K', 3, 1))
	h := run(t, Options{IsServerPort: func(p uint16) bool { return p == 9093 }}, b.segs)
	if len(h.conns) != 0 || len(h.frames) != 0 {
		t.Errorf("connections %v, frames %s", h.conns, frameList(h.frames))
	}
}

// TestAssemblerShuffled sends a stream of frames in random segments, reordered within a small
// window, duplicated and overlapping, with sequence numbers that wrap: every frame must come
// out once, in order, with a first and last packet that carried its first and last bytes.
func TestAssemblerShuffled(t *testing.T) {
	for _, lent := range []bool{false, true} {
		for seed := range uint64(200) {
			shuffled(t, seed, lent)
		}
	}
}

// shuffled is one case of TestAssemblerShuffled; lent: with Options.ReuseFrames.
func shuffled(t *testing.T, seed uint64, lent bool) {
	t.Run(fmt.Sprintf("seed %d lent %v", seed, lent), func(t *testing.T) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var stream []byte
		var frames [][]byte
		for range 2 + rng.IntN(20) {
			f := tframe('K', rng.IntN(300), byte(rng.IntN(256)))
			if rng.IntN(3) == 0 {
				f = tframe('k', rng.IntN(30), 0xee)
			}
			frames = append(frames, f)
			stream = append(stream, f...)
		}
		isn := rng.Uint32()
		if rng.IntN(2) == 0 {
			isn = 1<<32 - 1 - uint32(rng.IntN(len(stream)+2))
		}
		segs := []tcpSeg{
			{toServer: true, seq: isn, flags: "S"},
			{toServer: false, seq: 500, ack: isn + 1, flags: "SA"},
		}
		// Segments [from, to) of the stream, in order, then shuffled a little.
		type piece struct{ from, to int }
		var pieces []piece
		for off := 0; off < len(stream); {
			n := 1 + rng.IntN(120)
			pieces = append(pieces, piece{off, min(off+n, len(stream))})
			off += n
		}
		var sent []piece
		for _, p := range pieces {
			sent = append(sent, p)
			switch rng.IntN(6) {
			case 0: // retransmitted whole
				sent = append(sent, p)
			case 1: // re-sent with some bytes before it
				sent = append(sent, piece{max(0, p.from-1-rng.IntN(50)), p.to})
			}
		}
		for i := range sent {
			if j := i + rng.IntN(4); j < len(sent) && rng.IntN(3) == 0 {
				sent[i], sent[j] = sent[j], sent[i]
			}
		}
		carriers := make([][]int, len(stream))
		for _, p := range sent {
			num := len(segs) + 1
			segs = append(segs, tcpSeg{toServer: true, seq: isn + 1 + uint32(p.from), ack: 501, flags: "A", data: stream[p.from:p.to]})
			for j := p.from; j < p.to; j++ {
				carriers[j] = append(carriers[j], num)
			}
		}
		segs = append(segs, tcpSeg{toServer: true, seq: isn + 1 + uint32(len(stream)), ack: 501, flags: "FA"})
		h := run(t, Options{ReuseFrames: lent}, segs)
		if len(h.notices) != 0 {
			t.Errorf("notices %s", h.noticeText())
		}
		if len(h.frames) != len(frames) {
			t.Fatalf("%d frames, want %d: %s", len(h.frames), len(frames), frameList(h.frames))
		}
		off := 0
		for i, f := range h.frames {
			if !bytes.Equal(f.Data, frames[i]) || f.Offset != int64(off) {
				t.Fatalf("frame %d: %d bytes at %d, want %d at %d", i, len(f.Data), f.Offset, len(frames[i]), off)
			}
			last := off + len(f.Data) - 1
			if !slices.Contains(carriers[off], f.FirstPacket) || !slices.Contains(carriers[last], f.LastPacket) {
				t.Errorf("frame %d (bytes %d-%d): packets %d-%d, but those bytes came in %v and %v",
					i, off, last, f.FirstPacket, f.LastPacket, carriers[off], carriers[last])
			}
			off += len(f.Data)
		}
	})
}

// Bytes lost just before the FIN (or before the end of the capture, when a later segment shows
// they existed) are reported, and so is the frame they cut.
func TestAssemblerLossBeforeFIN(t *testing.T) {
	a := tframe('K', 40, 1)
	for _, tc := range []struct {
		name string
		lose func(s tcpSeg) bool
		want []string
	}{
		{"whole last frame", func(s tcpSeg) bool { return s.seq == 1001+45 }, []string{"45 bytes lost (not captured) at stream offset 45"}},
		{"end of the last frame", func(s tcpSeg) bool { return s.seq == 1001+45+20 }, []string{"25 bytes lost (not captured) at stream offset 65; the 20 bytes buffered before the gap are dropped"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder(1000, 9000, true)
			b.send(true, a)
			b.send(true, a[:20])
			b.send(true, a[20:])
			b.segs = slices.DeleteFunc(b.segs, func(s tcpSeg) bool { return len(s.data) > 0 && tc.lose(s) })
			if tc.name == "whole last frame" {
				b.segs = slices.DeleteFunc(b.segs, func(s tcpSeg) bool { return len(s.data) > 0 && s.seq == 1001+45+20 })
			}
			b.fin()
			h := run(t, Options{}, b.segs)
			if got := frameList(h.frames); got != "dir 0 45 bytes at 0 packets 4-4" {
				t.Errorf("frames %s", got)
			}
			if len(h.notices) != len(tc.want) {
				t.Fatalf("notices %s, want %q", h.noticeText(), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(h.notices[i].Msg, w) || h.notices[i].Kind != NoticeGap {
					t.Errorf("notice %s, want %q", h.noticeText(), w)
				}
			}
		})
	}
}

// A file cut down to some frames (kdissect -w) keeps the handshake and drops the segments
// between: read without a port, detection must see the bytes after the loss as what they are,
// a stream that may start inside a frame, and the framer must hear of the loss. Here the
// client's first segment after the handshake is lost and the next starts with the tail of a
// frame.
func TestDetectAfterLoss(t *testing.T) {
	a, b1, c := tframe('K', 40, 0xee), tframe('K', 10, 0xee), tframe('K', 200, 0xdd)
	bld := newBuilder(1000, 9000, true)
	lost := bld.send(true, a[:20])
	bld.send(true, cat(a[20:], b1)) // the tail of a, then b1
	bld.send(false, tframe('k', 30, 0xee))
	bld.send(true, c[:100])
	bld.send(true, c[100:])
	bld.fin()
	segs := slices.DeleteFunc(slices.Clone(bld.segs), func(s tcpSeg) bool { return s.seq == lost.seq && len(s.data) > 0 && s.toServer })
	detect := func(b []byte, strict bool) (wire.Verdict, string) { return testCheck(b, !strict), "test" }
	h := run(t, Options{IsServerPort: func(uint16) bool { return false }, Detect: detect}, segs)
	var toServer []string
	for _, f := range h.frames {
		if f.Dir == ToServer {
			toServer = append(toServer, fmt.Sprintf("%d bytes at %d", len(f.Data), f.Offset))
			if !bytes.Equal(f.Data, b1) && !bytes.Equal(f.Data, c) {
				t.Errorf("a frame of the client's that is neither b1 nor c: %d bytes at %d", len(f.Data), f.Offset)
			}
		}
	}
	want := fmt.Sprintf("15 bytes at 45; %d bytes at 60", len(c))
	if got := strings.Join(toServer, "; "); got != want {
		t.Errorf("client frames %s, want %s (notices: %s)", got, want, h.noticeText())
	}
	if !strings.Contains(h.noticeText(), "20 bytes lost (not captured) at stream offset 0") {
		t.Errorf("the loss is not reported: %s", h.noticeText())
	}
}
