// Package reassembly turns TCP segments into the two ordered byte streams of each connection,
// with gopacket's reassembly, and cuts each stream into length-prefixed frames. Every frame
// knows the packets (numbered from 1, as Wireshark numbers them) and the times that carried its
// first and last bytes. Connections that start with TLS are decrypted with the secrets of a key
// log (package tlsdec) when it holds them; lost data, mid-stream starts and TLS left encrypted
// are reported as notices.
//
// What counts as a plausible frame is the protocol's business: the caller gives a Checker per
// direction.
package reassembly

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	gpr "github.com/gopacket/gopacket/reassembly"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
)

// Dir is the direction of a frame within its connection.
type Dir uint8

const (
	// ToServer is the client's direction (requests).
	ToServer Dir = iota
	// ToClient is the server's direction (responses).
	ToClient
)

// Conn is one TCP connection.
type Conn struct {
	// ID is the connection's number, the Handler's to give (see Handler): the assembler sets
	// none, as one capture may be spread over several assemblers.
	ID     int
	Client netip.AddrPort
	Server netip.AddrPort
	// SYN reports that the connection's start was captured.
	SYN bool
	// Idle, set when the connection is closed, says it was flushed and forgotten for being idle
	// (Options.CloseAfter, Options.MaxConns) rather than ended by its FINs or the capture.
	Idle bool
}

// Frame is one length-prefixed frame of a stream: a Kafka frame, not a packet. Packets are
// numbered in FirstPacket and LastPacket (the outputs call a packet a frame, as Wireshark does).
type Frame struct {
	Conn *Conn
	Dir  Dir
	// Data is the whole frame, size prefix included. It belongs to the receiver, unless
	// Options.ReuseFrames is set: then it is valid only during Handler.Frame.
	Data []byte
	// Offset is the stream offset (bytes since the first captured byte of the direction) of Data[0].
	Offset                  int64
	FirstPacket, LastPacket int
	FirstTime, LastTime     time.Time
	// TLS is set on frames decrypted from TLS: the version and cipher suite
	// ("TLS 1.3 TLS_AES_128_GCM_SHA256").
	TLS string
	// Spilled, when set, holds Data: a frame larger than Options.SpillOver, in a temporary file
	// mapped into memory (see Spilled). The receiver closes it once it is done with Data, or
	// Data stays mapped; with Options.ReuseFrames the framer closes it after Handler.Frame.
	Spilled *Spilled
}

// NoticeKind says what a notice is about.
type NoticeKind uint8

// The kinds of notices.
const (
	NoticeGap      NoticeKind = iota + 1 // bytes were lost
	NoticeSkipped                        // bytes were skipped to find a frame boundary
	NoticeResync                         // the stream fell out of step
	NoticePartial                        // the stream ended inside a frame
	NoticeTLS                            // the connection carries TLS
	NoticeDetected                       // a connection was found to carry Kafka (each one says so)
)

// Notice reports something the reader of a dissection should know.
type Notice struct {
	Conn   *Conn
	Dir    Dir
	Kind   NoticeKind
	Packet int
	Time   time.Time
	Msg    string
	// NoSecrets, on a NoticeTLS, says why the connection is not decrypted: secrets were given
	// (a key log, a capture's Decryption Secrets Blocks), but none for this connection.
	NoSecrets bool
}

// Handler receives what the assembler finds. A Handler that also has a method
// Started(*Conn) is told of every connection as its first packet appears, Kafka or not yet
// known, in capture order: that is where it numbers connections (tshark's tcp.stream).
type Handler interface {
	// Open is called for a new connection; it returns the checker for each direction.
	Open(c *Conn) (toServer, toClient Checker)
	Frame(f Frame)
	Notice(n Notice)
	// Close is called when a connection ends or at the end of the capture.
	Close(c *Conn)
}

// Options tune the assembler.
type Options struct {
	// IsServerPort says whether a port is a Kafka broker port. Segments of connections with no
	// such port are ignored.
	IsServerPort func(port uint16) bool
	// MaxFrameSize bounds a believable frame (bytes after the size prefix); default
	// wire.MaxFrameSize.
	MaxFrameSize int
	// TLSKeys holds the secrets that connections starting with TLS are decrypted with (nil:
	// none; such connections get a notice).
	TLSKeys *tlsdec.KeyLog
	// MaxFrameBuffer bounds the bytes buffered for one frame: a believable frame larger than
	// this is passed over with a notice instead of being held in memory (default 128 MiB).
	MaxFrameBuffer int
	// FlushAfter is how long, on the capture's clock, to wait for a missing segment before
	// reporting it lost. CloseAfter closes connections idle that long (default
	// DefaultCloseAfter).
	FlushAfter, CloseAfter time.Duration
	// MaxConns bounds the connections an assembler keeps open: beyond it, the least recently
	// active are closed as idle (default DefaultMaxConns). A later packet of a connection
	// closed as idle starts a new one.
	MaxConns int
	// Detect, when set, looks for Kafka on connections whose ports IsServerPort does not name:
	// it judges the first bytes one side sent (strict when they may start mid-frame) and gives
	// the reason for a Yes. Connections it refuses are ignored.
	Detect func(first []byte, strict bool) (wire.Verdict, string)
	// Buffer limits, in pages of 1900 bytes, while waiting for out-of-order segments (default
	// 8192 per connection, DefaultMaxPagesTotal in all).
	MaxPagesPerConn, MaxPagesTotal int
	// ManualFlush leaves the capture clock to the caller, who calls Flush: an assembler that
	// sees only some of a capture's connections must flush when the whole capture's clock says.
	ManualFlush bool
	// ReuseFrames lends frames instead of giving them: a Frame's Data is valid only during
	// Handler.Frame, and a handler that keeps it, or anything that points into it, copies it.
	// Frames that arrived whole in one segment are then handed over without a copy, and the
	// buffers that frames spanning segments are assembled in are used again.
	ReuseFrames bool
	// SpillOver, when positive, keeps each frame larger than this many bytes outside the heap:
	// its bytes go to an unlinked temporary file in SpillDir ("": os.TempDir) as they arrive,
	// and Frame.Data maps the file (Frame.Spilled). Where files cannot be mapped, or a file
	// cannot be made, frames stay on the heap.
	SpillOver int
	SpillDir  string
}

// spillOver is SpillOver where frames can be spilled, and 0 elsewhere.
func (opt *Options) spillOver() int {
	if !spillMaps {
		return 0
	}
	return opt.SpillOver
}

// withDefaults fills in the options left zero.
func (opt Options) withDefaults() Options {
	if opt.MaxFrameSize <= 0 {
		opt.MaxFrameSize = wire.MaxFrameSize
	}
	if opt.MaxFrameBuffer <= 0 {
		opt.MaxFrameBuffer = 128 << 20
	}
	if opt.FlushAfter <= 0 {
		opt.FlushAfter = 3 * time.Second
	}
	if opt.CloseAfter <= 0 {
		opt.CloseAfter = DefaultCloseAfter
	}
	if opt.MaxConns <= 0 {
		opt.MaxConns = DefaultMaxConns
	}
	if opt.MaxPagesPerConn <= 0 {
		opt.MaxPagesPerConn = 8192
	}
	if opt.MaxPagesTotal <= 0 {
		opt.MaxPagesTotal = DefaultMaxPagesTotal
	}
	return opt
}

// DefaultMaxPagesTotal bounds the pages an assembler holds for out-of-order segments, over
// all its connections (about 120 MiB).
const DefaultMaxPagesTotal = 65536

// DefaultCloseAfter is how long a connection may be idle, on the capture's clock, before it is
// closed: a broker's default connections.max.idle.ms, after which the broker has closed it
// unseen.
const DefaultCloseAfter = 10 * time.Minute

// DefaultMaxConns bounds the open connections of an assembler, so that memory stays bounded
// (a few KiB each, with their decoders') over a capture of connections left open, such as a
// day of health checks: beyond it, those closed are the least recently active, which a
// client that keeps its connection busy never is.
const DefaultMaxConns = 8192

// FlushInterval is how often, on the capture's clock, Add flushes (see Flush): once the time of
// a segment is FlushInterval past the last flush.
const FlushInterval = time.Second

// FlushClock is the flushing rule on a capture's clock: a flush is due once a segment's time is
// FlushInterval past the last flush. The assembler keeps one; a caller that flushes by hand
// (Options.ManualFlush) keeps one for the whole capture.
type FlushClock struct{ last time.Time }

// Due reports whether a flush is due at a segment of time t, and if so starts the next interval.
func (c *FlushClock) Due(t time.Time) bool {
	if c.last.IsZero() {
		c.last = t
	}
	if t.Sub(c.last) < FlushInterval {
		return false
	}
	c.last = t
	return true
}

// Assembler reassembles segments and frames the streams. Feed it segments in capture order
// with Add; call Close at the end.
type Assembler struct {
	opt   Options
	h     Handler
	asm   *gpr.Assembler
	clock FlushClock
	now   time.Time
	// streams lists the open connections, the most recently active first (see lru.go).
	streams lru
	// idleBefore, during a flush, is the time before which a connection closed was idle.
	idleBefore time.Time
	// evictAt is the count of open connections at which the least recently active are closed.
	evictAt int
	// gapSince is the time of the latest segment out of order, which gopacket may hold back
	// (gapWait: one may still be held); disorder: the capture's clock went back. See Flush.
	gapSince          time.Time
	gapWait, disorder bool
	// rejected holds connections detection found not to be Kafka, to skip their segments.
	rejected map[flowKey]bool
	// closed holds recently finished connections and when they finished.
	closed finished
	// frames holds the buffers of lent frames (Options.ReuseFrames; nil otherwise).
	frames *framePool
	// contexts is the slab packets' contexts come from; spans is collectSpans' scratch.
	contexts []context
	spans    []span
}

// New returns an assembler that reports to h.
func New(h Handler, opt Options) *Assembler {
	opt = opt.withDefaults()
	a := &Assembler{opt: opt, h: h, rejected: map[flowKey]bool{}, evictAt: opt.MaxConns + 1}
	if opt.ReuseFrames {
		a.frames = &framePool{}
	}
	pool := gpr.NewStreamPool(factory{a})
	a.asm = gpr.NewAssembler(pool)
	a.asm.MaxBufferedPagesPerConnection = opt.MaxPagesPerConn
	a.asm.MaxBufferedPagesTotal = opt.MaxPagesTotal
	return a
}

// context carries through gopacket's assembler what kdissect reads of a packet: its time and
// its number, which GetCaptureInfo hands back in place of the interface index (gopacket reads
// only the time). gopacket keeps the context of every packet whose bytes it holds back, so
// each packet has its own, taken from a slab; keeping only these two makes the slab a third of
// the capture info's size.
type context struct {
	time time.Time
	num  int
}

func (c *context) GetCaptureInfo() gopacket.CaptureInfo {
	return gopacket.CaptureInfo{Timestamp: c.time, InterfaceIndex: c.num}
}

// context returns the context of packet num, seen at t.
func (a *Assembler) context(t time.Time, num int) *context {
	if len(a.contexts) == cap(a.contexts) {
		a.contexts = make([]context, 0, 256)
	}
	a.contexts = append(a.contexts, context{time: t, num: num})
	return &a.contexts[len(a.contexts)-1]
}

// Add takes one TCP segment, then, unless Options.ManualFlush is set, flushes when the
// segment's time is FlushInterval past the last flush.
func (a *Assembler) Add(seg *capture.Segment) {
	a.add(seg)
	if now := seg.Info.Timestamp; !a.opt.ManualFlush && a.clock.Due(now) {
		a.Flush(now)
	}
}

// Flush moves the capture clock to now: data waiting more than FlushAfter behind a gap is
// delivered with the gap reported, and connections idle for CloseAfter are closed.
func (a *Assembler) Flush(now time.Time) {
	if now.After(a.now) {
		a.now = now
	}
	fo := gpr.FlushOptions{T: now.Add(-a.opt.FlushAfter), TC: now.Add(-a.opt.CloseAfter)}
	// gopacket's flush visits every connection: it is called only when it has work, so that
	// the cost of a packet does not grow with the connections open.
	if a.disorder || a.gapWait || a.streams.idleBefore(fo.TC) {
		a.flush(fo)
		if a.gapSince.Before(fo.T) {
			a.gapWait = false // whatever was held back behind a gap has been delivered
		}
	}
	a.closed.forget(now.Add(-a.opt.FlushAfter))
}

func (a *Assembler) add(seg *capture.Segment) {
	tcp := seg.TCP
	// Packets that trail a finished connection (its last ACK, a retransmitted FIN) belong to
	// it; a SYN starts a new connection on the same ports.
	if k, ok := a.closed.find(seg.Net, tcp); ok {
		if !tcp.SYN {
			return
		}
		a.closed.remove(k)
	}
	if !a.known(uint16(tcp.SrcPort), uint16(tcp.DstPort)) {
		if a.opt.Detect == nil || a.rejected[keyOf(seg.Net, tcp)] {
			return
		}
	}
	if seg.Info.Timestamp.Before(a.now) {
		a.disorder = true
	}
	a.now = seg.Info.Timestamp
	a.asm.AssembleWithContext(seg.Net, tcp, a.context(seg.Info.Timestamp, seg.Num))
	if a.streams.n >= a.evictAt {
		a.evict()
	}
}

// flush runs gopacket's flush; connections it closes for being last seen before fo.TC are idle.
func (a *Assembler) flush(fo gpr.FlushOptions) {
	a.idleBefore = fo.TC
	a.asm.FlushWithOptions(fo)
	a.idleBefore = time.Time{}
}

// evict closes the least recently active connections beyond Options.MaxConns, and an eighth
// more, so that the flush, which visits every connection, comes once per so many new ones.
func (a *Assembler) evict() {
	n := a.streams.n - (a.opt.MaxConns - a.opt.MaxConns/8)
	if last := a.streams.nth(n); last != nil {
		a.flush(gpr.FlushOptions{TC: last.lastSeen.Add(1)})
	}
	// Connections waiting behind a gap are not closed: try again a while later.
	a.evictAt = max(a.streams.n, a.opt.MaxConns) + a.opt.MaxConns/8 + 1
}

// Close flushes every connection: data still waiting behind a gap is delivered, and every
// stream is finished.
func (a *Assembler) Close() {
	a.asm.FlushAll()
	for a.streams.head != nil {
		a.streams.head.finish()
	}
}

type factory struct{ a *Assembler }

func (f factory) New(netFlow, tcpFlow gopacket.Flow, tcp *layers.TCP, ac gpr.AssemblerContext) gpr.Stream {
	a := f.a
	src := addrPort(netFlow.Src(), tcpFlow.Src())
	dst := addrPort(netFlow.Dst(), tcpFlow.Dst())
	// The server is the side on a Kafka port; the first packet may come from either side when
	// the capture starts mid-connection.
	clientIsSrc := true
	if a.opt.IsServerPort != nil && !a.opt.IsServerPort(dst.Port()) && a.opt.IsServerPort(src.Port()) {
		clientIsSrc = false
	}
	c := &Conn{Client: src, Server: dst, SYN: tcp.SYN && !tcp.ACK}
	if !clientIsSrc {
		c.Client, c.Server = dst, src
	}
	if st, ok := a.h.(interface{ Started(*Conn) }); ok {
		st.Started(c)
	}
	s := &stream{a: a, conn: c, firstIsClient: clientIsSrc, key: keyOf(netFlow, tcp)}
	a.streams.push(s)
	if !a.known(src.Port(), dst.Port()) {
		// Neither port is a Kafka port: the first bytes will tell (see detect.go).
		s.undecided = true
		return s
	}
	s.open()
	return s
}

// known reports whether either port is a configured Kafka port.
func (a *Assembler) known(p1, p2 uint16) bool {
	return a.opt.IsServerPort == nil || a.opt.IsServerPort(p1) || a.opt.IsServerPort(p2)
}

// open hands the connection to the handler and makes its framers.
func (s *stream) open() {
	s.framers = newFramers(s.a.h, s.conn, &s.a.opt, s.a.frames)
}

// newFramers hands a connection to h and makes the framers of its two directions.
func newFramers(h Handler, c *Conn, opt *Options, pool *framePool) [2]*framer {
	toServer, toClient := h.Open(c)
	var fs [2]*framer
	for d, chk := range []Checker{toServer, toClient} {
		dir := Dir(d)
		fs[d] = &framer{
			check:     chk,
			maxSize:   opt.MaxFrameSize,
			maxBuffer: opt.MaxFrameBuffer,
			spillOver: opt.spillOver(),
			spillDir:  opt.SpillDir,
			tlsKeys:   opt.TLSKeys,
			pool:      pool,
			emit:      func(fr Frame) { fr.Conn, fr.Dir = c, dir; h.Frame(fr) },
			notice:    func(n Notice) { n.Conn, n.Dir = c, dir; h.Notice(n) },
		}
	}
	fs[0].peer, fs[1].peer = fs[1], fs[0]
	return fs
}

func addrPort(ep, port gopacket.Endpoint) netip.AddrPort {
	ip, _ := netip.AddrFromSlice(ep.Raw())
	p := port.Raw()
	var n uint16
	if len(p) == 2 {
		n = uint16(p[0])<<8 | uint16(p[1])
	}
	return netip.AddrPortFrom(ip.Unmap(), n)
}

// stream is one connection as gopacket's assembler sees it.
type stream struct {
	a             *Assembler
	conn          *Conn
	firstIsClient bool
	framers       [2]*framer
	syn           [2]bool
	done          bool
	key           flowKey
	// undecided: detection has not yet said whether the connection is Kafka; rejected: it is not.
	undecided, rejected bool
	pending             *[2]detectBuf // see held
	// Per direction: the sequence number of the stream's first byte (from the SYN, or the
	// packet the stream was started at), and the furthest a data segment or FIN reached, with
	// its packet. Bytes before a FIN that never arrived are reported when the stream ends:
	// gopacket's reassembly closes such a stream without a word.
	first, end    [2]gpr.Sequence
	known, hasEnd [2]bool
	endPkt        [2]int
	endTime       [2]time.Time
	// Per direction, before it starts: the furthest sequence number of the segments without
	// data (ACKs, keep-alive probes) seen, and the bytes lost between it and the first data
	// (see Accept), reported with that data.
	bare    [2]gpr.Sequence
	hasBare [2]bool
	lead    [2]int
	// lastSeen is the time of the connection's latest segment, as gopacket's; prev and next
	// link the assembler's streams, the most recently active first.
	lastSeen   time.Time
	prev, next *stream
}

func (s *stream) dir(d gpr.TCPFlowDirection) Dir {
	if (d == gpr.TCPDirClientToServer) == s.firstIsClient {
		return ToServer
	}
	return ToClient
}

func (s *stream) Accept(tcp *layers.TCP, ci gopacket.CaptureInfo, dir gpr.TCPFlowDirection, nextSeq gpr.Sequence, start *bool, ac gpr.AssemblerContext) bool {
	d := s.dir(dir)
	if t := ci.Timestamp; t.After(s.lastSeen) {
		s.lastSeen = t
	}
	if !s.done {
		s.a.streams.touch(s)
	}
	seq := gpr.Sequence(tcp.Seq)
	if nextSeq >= 0 && nextSeq.Difference(seq) > 0 {
		// Ahead of the stream: gopacket may hold it back until a flush. A segment behind it
		// (a retransmission, a keep-alive probe) never is.
		s.a.gapSince, s.a.gapWait = ci.Timestamp, true
	}
	if nextSeq < 0 && !tcp.SYN && !tcp.FIN && !tcp.RST && len(tcp.Payload) == 0 {
		// A direction starts at its SYN or its first data, not at a segment without data: a
		// capture of a quiet connection may begin with a keep-alive probe, whose sequence
		// number is one below the next byte.
		if !s.hasBare[d] || s.bare[d].Difference(seq) > 0 {
			s.bare[d], s.hasBare[d] = seq, true
		}
		return false
	}
	if tcp.SYN && (s.framers[d] == nil || !s.framers[d].started) {
		s.syn[d] = true
	}
	if !s.known[d] && (tcp.SYN || nextSeq < 0) {
		// The SYN, or the packet the forced start below makes the first one.
		s.first[d], s.known[d] = seq, true
		if tcp.SYN {
			s.first[d] = seq.Add(1)
		} else if s.hasBare[d] && s.bare[d].Difference(seq) > 1 {
			// Bytes were sent after a segment without data and not captured: gopacket, which
			// starts at this segment, does not know, so they are reported with its data.
			// Without a SYN a probe (one below the next byte) cannot be told from an ACK (at
			// it): the count is one byte over after a probe, and one lost byte after an ACK
			// goes unreported.
			s.first[d], s.lead[d] = s.bare[d], s.bare[d].Difference(seq)
		}
	}
	if !tcp.SYN && !tcp.RST && (len(tcp.Payload) > 0 || tcp.FIN) {
		if e := seq.Add(len(tcp.Payload)); !s.hasEnd[d] || s.end[d].Difference(e) > 0 {
			s.end[d], s.hasEnd[d] = e, true
			s.endPkt[d], s.endTime[d] = packetNum(ci)
		}
	}
	// Accept connections whose SYN was not captured.
	*start = true
	return true
}

func (s *stream) ReassembledSG(sg gpr.ScatterGather, ac gpr.AssemblerContext) {
	dir, _, _, skip := sg.Info()
	d := s.dir(dir)
	if s.rejected {
		return
	}
	if s.lead[d] > 0 {
		skip, s.lead[d] = max(skip, 0)+s.lead[d], 0
	}
	if s.undecided {
		s.detect(d, sg, skip)
		return
	}
	f := s.framers[d]
	length, _ := sg.Lengths()
	if length == 0 {
		// A FIN after lost bytes: the loss is all there is to report, with the packet that
		// brought the FIN.
		if skip > 0 && ac != nil {
			ci := ac.GetCaptureInfo()
			pkt, _ := packetNum(ci)
			f.gap(skip, pkt, ci.Timestamp)
		}
		return
	}
	spans := collectSpans(s.a.spans[:0], sg, length, f.base+f.held())
	s.a.spans = spans
	if !f.started {
		f.synced = s.syn[d]
	}
	// skip > 0 can come with the first data too: the SYN was captured but the first data
	// segment was not. The framer is then out of step, and the loss is reported.
	if skip > 0 {
		f.gap(skip, spans[0].pkt, spans[0].time)
		// gap moved base; recompute span offsets from the new end of the buffer.
		spans = collectSpans(spans[:0], sg, length, f.base+f.held())
		s.a.spans = spans
	}
	f.add(sg.Fetch(length), spans)
}

// packetNum reads the packet number that Add put in the capture info (see context).
func packetNum(ci gopacket.CaptureInfo) (int, time.Time) {
	return ci.InterfaceIndex, ci.Timestamp
}

// collectSpans appends to spans which packet carried which bytes of sg; those who take the
// spans copy them. A packet's bytes are contiguous in the reassembled data, so each boundary
// can be found by bisection on CaptureInfo.
func collectSpans(spans []span, sg gpr.ScatterGather, length int, base int64) []span {
	pkt := func(off int) (int, time.Time) {
		return packetNum(sg.CaptureInfo(off))
	}
	for off := 0; off < length; {
		n, t := pkt(off)
		spans = append(spans, span{off: base + int64(off), pkt: n, time: t})
		if sg.Stats().Chunks == 1 {
			break
		}
		lo, hi := off, length-1 // last offset of this packet is in [lo, hi]
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if m, _ := pkt(mid); m == n {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		off = lo + 1
	}
	return spans
}

// ReassemblyComplete is called when both directions are closed.
func (s *stream) ReassemblyComplete(ac gpr.AssemblerContext) bool {
	s.finish()
	if s.conn.Idle {
		return true // a later packet starts a new connection
	}
	// Forget the connection, so that memory stays flat over millions of short connections, but
	// remember its end for a while: the last ACK and retransmitted FINs that follow must not
	// open a connection of their own (they would take the next ID, unlike tshark's tcp.stream).
	s.a.closed.add(s.key, s.a.now)
	return true
}

func (s *stream) finish() {
	if s.done {
		return
	}
	s.done = true
	s.a.streams.remove(s)
	s.conn.Idle = s.lastSeen.Before(s.a.idleBefore)
	if s.undecided || s.rejected {
		if s.undecided && (!s.conn.Idle || s.pending != nil) {
			// Never decided: not Kafka, or too little to tell. One closed as idle before any
			// bytes (s.held) has not had its chance: its later packets start a new connection.
			s.a.rejected[s.key] = true
		}
		return
	}
	for d, f := range s.framers {
		if s.known[d] && s.hasEnd[d] {
			if lost := int64(s.first[d].Difference(s.end[d])) - (f.base + f.held()); lost > 0 {
				f.gap(int(lost), s.endPkt[d], s.endTime[d])
			}
		}
	}
	s.framers[ToServer].finish()
	s.framers[ToClient].finish()
	s.a.h.Close(s.conn)
}

// String names a connection the way the output shows it.
func (c *Conn) String() string { return fmt.Sprintf("%s <-> %s", c.Client, c.Server) }
