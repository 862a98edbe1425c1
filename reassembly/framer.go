package reassembly

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
)

// Checker judges candidate frames for one direction of a connection. head holds the first bytes
// of the candidate, size prefix included: at most 64 when the framer is in step, and when it is
// looking for a frame, the whole candidate frame if it is buffered; synced says the framer is in
// step with the stream, so only gross violations should give wire.No.
type Checker func(head []byte, synced bool) wire.Verdict

// maxResyncBuffer bounds the bytes held while looking for a frame boundary.
const maxResyncBuffer = 1 << 20

// span says which packet carried the bytes from stream offset off up to the next span.
type span struct {
	off  int64
	pkt  int
	time time.Time
}

// framer cuts one direction of a connection into int32-size-prefixed frames. It starts in step
// with the stream when the connection's SYN was seen, and otherwise looks for a plausible frame;
// after lost data it does the same.
type framer struct {
	check  Checker
	emit   func(f Frame)
	notice func(n Notice)
	buf    []byte
	base   int64 // stream offset of buf[0]
	// pool, when set (Options.ReuseFrames), lends the buffers frames are assembled in, and
	// frames are valid only while emit runs; own is the pooled buffer buf lies in, if any.
	pool *framePool
	own  []byte
	// borrowed says buf is the caller's data, valid only during add: frames cut from it are
	// copied, unless frames are only lent (pool).
	borrowed bool
	spans    []span
	synced   bool
	maxSize  int
	// started: the first bytes have arrived; tls: the direction carries TLS and is ignored.
	started, tls bool
	// tlsc, when set, takes the direction's bytes (TLS): see tls.go. tlsKeys are the secrets.
	tlsc    *tlsConn
	tlsKeys *tlsdec.KeyLog
	// peer is the framer of the other direction.
	peer *framer
	// maxBuffer bounds the bytes buffered for one frame (0: maxSize); pass counts the bytes of
	// an oversized frame still to pass over.
	maxBuffer int
	pass      int64
	// spillOver, when positive, is the frame size above which a frame is kept in a temporary
	// file in spillDir (Options.SpillOver); big is that file while the frame arrives (big.size
	// the bytes written so far), bigSize the frame's size.
	spillOver int
	spillDir  string
	big       *Spilled
	bigSize   int
	// Bytes skipped while looking for a frame, reported as one notice.
	skipped  int64
	skipFrom int64
	skipPkt  int
	skipTime time.Time
}

// add appends reassembled bytes; spans give the packets that carried them.
func (f *framer) add(data []byte, spans []span) {
	if f.tlsc != nil {
		f.tlsc.add(f, data, spans)
		return
	}
	if f.tls {
		return
	}
	if !f.started {
		f.started = true
		if looksTLS(data) {
			// Both directions go through the decryptor, which gives one notice per
			// connection when it cannot decrypt.
			startTLS(f, f.tlsKeys).add(f, data, spans)
			return
		}
	}
	f.spans = append(f.spans, spans...)
	if f.big != nil {
		if data = f.spill(data); len(data) == 0 {
			return
		}
	}
	if len(f.buf) > 0 || !f.synced || f.pass > 0 {
		f.buffer(data)
		f.cut(false)
		return
	}
	// In step with nothing buffered (the usual case): cut the frames straight from data,
	// which is valid only during this call, and keep a copy of what is left.
	f.buf, f.borrowed = data, true
	f.cut(false)
	f.borrowed = false
	if rest := f.buf; len(rest) > 0 {
		f.buf = nil
		f.buffer(rest)
	}
}

// write appends bytes that come as a stream rather than as reassembled segments (decrypted
// TLS, a Stream): all of them were seen at packet pkt, at time t.
func (f *framer) write(data []byte, pkt int, t time.Time) {
	f.add(data, []span{{off: f.base + f.held(), pkt: pkt, time: t}})
}

// held is how many bytes after base the framer holds: in buf, or in the file of a big frame.
func (f *framer) held() int64 {
	n := len(f.buf)
	if f.big != nil {
		n += f.big.size
	}
	return int64(n)
}

// buffer appends data to buf. A frame that spans many packets would make append grow buf by
// a quarter at a time, copying it over and over; buf grows fourfold instead, up to the size of
// the frame being buffered, so that it ends exactly as large as the frame and is handed over
// whole. It never grows past four times the bytes it holds, whatever the size prefix says.
func (f *framer) buffer(data []byte) {
	need := len(f.buf) + len(data)
	if need > cap(f.buf) {
		c, full := max(4*need, 512), 0
		if f.synced && f.pass == 0 && len(f.buf)+len(data) >= 4 {
			var head [4]byte
			copy(head[copy(head[:], f.buf):], data)
			if size := int64(int32(binary.BigEndian.Uint32(head[:]))); size >= 0 && 4+size >= int64(need) {
				c = int(min(int64(c), 4+size))
				full = c
			}
		}
		f.grow(c, full)
	}
	f.buf = append(f.buf, data...)
}

// grow moves buf to a buffer with room for c bytes; full, when known, is the size of the
// frame being buffered.
func (f *framer) grow(c, full int) {
	if f.pool == nil {
		nb := make([]byte, len(f.buf), c)
		copy(nb, f.buf)
		f.buf = nb
		return
	}
	if cap(f.own) >= c {
		// What is left of a frame moves to the front of the buffer it lies in.
		f.buf = f.own[:copy(f.own[:cap(f.own)], f.buf)]
		return
	}
	nb := append(f.pool.get(c, full), f.buf...)
	if f.own != nil {
		f.pool.put(f.own)
	}
	f.own, f.buf = nb, nb
}

// looksTLS reports whether data starts with a TLS record header (handshake, alert or
// application data, TLS 1.0 to 1.3 record versions).
func looksTLS(data []byte) bool {
	return len(data) >= 5 && (data[0] == 0x16 || data[0] == 0x15 || data[0] == 0x17) && data[1] == 3 && data[2] <= 4
}

// gap records n lost bytes before the next data.
func (f *framer) gap(n int, pkt int, t time.Time) {
	if f.tlsc != nil {
		f.tlsc.gap(f, n, pkt, t)
		return
	}
	if f.tls {
		return
	}
	if !f.synced {
		// The data before the gap ends here, as at the end of the stream: a candidate frame
		// that ends exactly at the gap is believed without the successor it was waiting for.
		f.cut(true)
	}
	f.reportSkipped()
	held := f.held()
	msg := fmt.Sprintf("%s lost (not captured) at stream offset %d", plural.Count(n, "byte"), f.base+held)
	if held > 0 {
		msg += fmt.Sprintf("; the %s buffered before the gap %s dropped", plural.Count(held, "byte"), plural.Pick(held, "is", "are"))
	}
	f.notice(Notice{Kind: NoticeGap, Packet: pkt, Time: t, Msg: msg})
	f.dropBig()
	f.base += held + int64(n)
	f.buf = f.buf[:0]
	f.spans = f.spans[:0]
	f.synced = false
}

// cut emits every complete frame in the buffer. At the end of the stream (eof) a frame that
// ends exactly at the end of the data is believed without a successor.
func (f *framer) cut(eof bool) {
	for len(f.buf) > 0 {
		if f.pass > 0 {
			if f.passOver(); f.pass > 0 {
				return
			}
			continue
		}
		if !f.synced {
			if !f.resync(eof) {
				return
			}
		}
		if len(f.buf) < 4 {
			return
		}
		size := int(int32(binary.BigEndian.Uint32(f.buf)))
		v := f.check(f.buf[:min(len(f.buf), 64)], true)
		if v == wire.NeedMore {
			// Wait for more bytes; at the end of the stream, finish reports a partial frame.
			return
		}
		if v == wire.No || size < 0 || size > f.maxSize {
			f.notice(Notice{Kind: NoticeResync, Packet: f.packetAt(0), Time: f.timeAt(0),
				Msg: fmt.Sprintf("bytes at stream offset %d do not start a plausible frame (size %d): looking for the next frame", f.base, size)})
			f.synced = false
			// No frame starts here: resync must not find this offset again, or a checker that
			// believes what the size bound refuses would keep the framer here for ever.
			f.skip(1)
			continue
		}
		if f.maxBuffer > 0 && 4+size > f.maxBuffer {
			// A frame larger than the buffer may hold is passed over, not buffered: memory
			// stays bounded whatever a size prefix says, and the framer stays in step.
			f.notice(Notice{Kind: NoticeSkipped, Packet: f.packetAt(0), Time: f.timeAt(0),
				Msg: fmt.Sprintf("frame of %d bytes at stream offset %d is larger than the %d-byte buffer limit: passed over, not decoded", 4+size, f.base, f.maxBuffer)})
			f.pass = int64(4 + size)
			f.passOver()
			continue
		}
		if len(f.buf) < 4+size {
			// Once the checker has seen all the head it will see, its verdict stands and the
			// rest of the frame can go to a file.
			if f.spillOver > 0 && 4+size > f.spillOver && len(f.buf) >= 64 {
				f.startBig(4 + size)
			}
			return
		}
		f.emitFrame(4 + size)
	}
}

// resync looks for the first offset where a frame plausibly starts and drops the bytes before
// it. It returns false when it needs more data.
func (f *framer) resync(eof bool) bool {
	for i := 0; i+4 <= len(f.buf); i++ {
		switch f.judge(i, eof) {
		case wire.NeedMore:
			f.skip(i)
			if len(f.buf) <= maxResyncBuffer {
				return false
			}
			f.skip(1) // a candidate that never completes: give up on it
			i = -1    // and go on from the new start of the buffer
		case wire.Yes:
			f.skip(i)
			f.reportSkipped()
			f.synced = true
			return true
		}
	}
	if eof {
		f.skip(len(f.buf))
		return false
	}
	f.skip(max(0, len(f.buf)-3))
	return false
}

// judge decides whether a frame starts at buf[i]; a Weak candidate needs a plausible successor.
func (f *framer) judge(i int, eof bool) wire.Verdict {
	head := f.buf[i:]
	// The checker sees the whole candidate frame when it is buffered (at least 64 bytes
	// otherwise): a frame that is all there can be decoded, which says much more than its
	// first bytes.
	size := int(int32(binary.BigEndian.Uint32(head)))
	n := 64
	if size >= 0 && size <= f.maxSize {
		n = max(n, 4+size)
	}
	v := f.check(head[:min(len(head), n)], false)
	// The size bound holds whatever the checker says: cut would refuse the frame.
	if (v == wire.Yes || v == wire.Weak) && (size < 0 || size > f.maxSize) {
		return wire.No
	}
	if v != wire.Weak {
		return v
	}
	next := 4 + size
	switch {
	case len(head) == next && eof:
		return wire.Yes
	case len(head) < next+8:
		if eof {
			return wire.No
		}
		return wire.NeedMore
	}
	nv := f.check(head[next:min(len(head), next+64)], false)
	switch nv {
	case wire.Yes:
		return wire.Yes
	case wire.Weak:
		// Two weak candidates that both start inside packets do not vouch for each other:
		// inside a body (after a gap), chains of plausible-looking sizes are common. Senders
		// write each frame with its own write, so a real frame usually starts a packet.
		if f.startsPacket(i) || f.startsPacket(i+next) {
			return wire.Yes
		}
		return wire.No
	case wire.NeedMore:
		if eof {
			return wire.No
		}
		return wire.NeedMore
	}
	return wire.No
}

// skip drops n bytes in which no frame starts; they are reported once the framer is in step
// again (or the stream ends), as one notice.
func (f *framer) skip(n int) {
	if n <= 0 {
		return
	}
	if f.skipped == 0 {
		f.skipFrom, f.skipPkt, f.skipTime = f.base, f.packetAt(0), f.timeAt(0)
	}
	f.skipped += int64(n)
	f.drop(n)
}

func (f *framer) reportSkipped() {
	if f.skipped == 0 {
		return
	}
	f.notice(Notice{Kind: NoticeSkipped, Packet: f.skipPkt, Time: f.skipTime,
		Msg: fmt.Sprintf("%s at stream offset %d skipped: no Kafka frame starts in %s", plural.Count(f.skipped, "byte"), f.skipFrom, plural.Pick(f.skipped, "it", "them"))})
	f.skipped = 0
}

func (f *framer) drop(n int) {
	f.buf = f.buf[n:]
	f.advance(n)
	if len(f.buf) == 0 {
		f.buf = nil
		if f.own != nil {
			f.pool.put(f.own)
			f.own = nil
		}
	}
}

// advance moves base n bytes on, and drops the spans before it.
func (f *framer) advance(n int) {
	f.base += int64(n)
	// Keep the span that covers the new first byte, at the front, so that the slice keeps its
	// room for the spans to come.
	i := 0
	for i+1 < len(f.spans) && f.spans[i+1].off <= f.base {
		i++
	}
	if i > 0 {
		f.spans = f.spans[:copy(f.spans, f.spans[i:])]
	}
}

// startsPacket reports whether buf[rel] is the first byte a packet contributed to the stream.
func (f *framer) startsPacket(rel int) bool {
	off := f.base + int64(rel)
	for _, sp := range f.spans {
		if sp.off == off {
			return true
		}
		if sp.off > off {
			break
		}
	}
	return false
}

func (f *framer) spanAt(rel int) span {
	off := f.base + int64(rel)
	s := f.spans[0]
	for _, sp := range f.spans {
		if sp.off > off {
			break
		}
		s = sp
	}
	return s
}

func (f *framer) packetAt(rel int) int {
	if len(f.spans) == 0 {
		return 0
	}
	return f.spanAt(rel).pkt
}

func (f *framer) timeAt(rel int) time.Time {
	if len(f.spans) == 0 {
		return time.Time{}
	}
	return f.spanAt(rel).time
}

func (f *framer) emitFrame(n int) {
	first, last := f.spanAt(0), f.spanAt(n-1)
	var data []byte
	if f.pool != nil || len(f.buf) == n && !f.borrowed {
		// Frames are only lent, or the buffer holds exactly this frame: hand it over rather
		// than copy it.
		data = f.buf[:n:n]
	} else {
		data = make([]byte, n)
		copy(data, f.buf[:n])
	}
	fr := Frame{Data: data, Offset: f.base, FirstPacket: first.pkt, FirstTime: first.time, LastPacket: last.pkt, LastTime: last.time}
	f.drop(n)
	f.emit(fr)
}

// finish is called at the end of the stream.
func (f *framer) finish() {
	if f.tlsc != nil {
		f.tlsc.finish(f)
		return
	}
	if f.tls {
		return
	}
	f.cut(true)
	f.reportSkipped()
	// What is held is the start of a frame: in buf, or in the file of a big frame (buf is then
	// empty).
	if held := int(f.held()); held > 0 {
		msg := fmt.Sprintf("stream ends inside a frame: %s at stream offset %d", plural.Count(held, "byte"), f.base)
		switch {
		case f.big != nil:
			msg += fmt.Sprintf(" of a %d-byte frame", f.bigSize)
		case len(f.buf) >= 4:
			msg += fmt.Sprintf(" of a %d-byte frame", 4+int(int32(binary.BigEndian.Uint32(f.buf))))
		}
		f.notice(Notice{Kind: NoticePartial, Packet: f.packetAt(held - 1), Time: f.timeAt(held - 1), Msg: msg})
		if f.big != nil {
			f.advance(held)
			f.dropBig()
		} else {
			f.drop(held)
		}
	}
}

// passOver drops what is buffered of an oversized frame being passed over.
func (f *framer) passOver() {
	n := int(min(int64(len(f.buf)), f.pass))
	f.drop(n)
	f.pass -= int64(n)
}

// startBig moves the frame of n bytes that buf starts with to a temporary file, where the rest
// of its bytes will go as they come (see spill.go). When no file can be made, the frame stays
// in buf.
func (f *framer) startBig(n int) {
	s, err := newSpilled(f.spillDir)
	if err != nil {
		return
	}
	f.big, f.bigSize = s, n
	s.write(f.buf)
	if f.own != nil {
		f.pool.put(f.own)
		f.own = nil
	}
	f.buf = nil
}

// spill writes the bytes of data that belong to the big frame to its file, emits the frame
// when it is complete, and returns the bytes after it.
func (f *framer) spill(data []byte) []byte {
	n := min(len(data), f.bigSize-f.big.size)
	f.big.write(data[:n])
	if f.big.size < f.bigSize {
		// Only the spans of the frame's first and last bytes will be asked for.
		if len(f.spans) > 64 {
			f.advance(0) // the span of the frame's first byte first
			if k := len(f.spans); k > 3 {
				f.spans = append(f.spans[:1], f.spans[k-2:]...)
			}
		}
		return nil
	}
	f.emitBig()
	return data[n:]
}

// emitBig emits the big frame, complete in its file.
func (f *framer) emitBig() {
	s, n := f.big, f.bigSize
	first, last := f.spanAt(0), f.spanAt(n-1)
	off := f.base
	f.big = nil
	f.advance(n)
	data, err := s.finish()
	if err != nil {
		_ = s.Close()
		f.notice(Notice{Kind: NoticeSkipped, Packet: first.pkt, Time: first.time,
			Msg: fmt.Sprintf("frame of %d bytes at stream offset %d could not be kept in a temporary file (%v): passed over, not decoded", n, off, err)})
		return
	}
	fr := Frame{Data: data, Offset: off, FirstPacket: first.pkt, FirstTime: first.time, LastPacket: last.pkt, LastTime: last.time, Spilled: s}
	f.emit(fr)
	if f.pool != nil {
		_ = s.Close() // lent: valid only while emit ran
	}
}

// dropBig forgets the big frame being written, if any.
func (f *framer) dropBig() {
	if f.big != nil {
		_ = f.big.Close()
		f.big = nil
	}
}
