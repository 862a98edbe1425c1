package reassembly

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec/wire"
)

// update is accepted by every test package so that "go test ./... -update" (which rewrites the
// golden files of the packages that have them) runs everywhere.
var update = flag.Bool("update", false, "rewrite golden files")

var _ = update

// Test frames are a 4-byte size, a type byte and a body. The test checker believes type 'K'
// (Yes) and type 'k' (Weak, so it needs a plausible successor when the framer is out of step),
// sizes from 1 to 1000, and nothing else.
const maxTestSize = 1000

func testCheck(head []byte, synced bool) wire.Verdict {
	if len(head) < 4 {
		return wire.NeedMore
	}
	size := int32(binary.BigEndian.Uint32(head))
	if size < 1 || size > maxTestSize {
		return wire.No
	}
	if len(head) < 5 {
		return wire.NeedMore
	}
	switch head[4] {
	case 'K':
		return wire.Yes
	case 'k':
		if synced {
			return wire.Yes
		}
		return wire.Weak
	}
	return wire.No
}

// tframe builds a test frame of the given type with n body bytes (the type byte included in
// the size), filled with fill.
func tframe(typ byte, n int, fill byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(n+1))
	b = append(b, typ)
	return append(b, bytes.Repeat([]byte{fill}, n)...)
}

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// pktTime is the time of packet n in these tests.
func pktTime(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// harness drives a framer the way stream.ReassembledSG does, one packet per call unless said
// otherwise, and records what it emits.
type harness struct {
	f       *framer
	pkt     int // number of the last packet fed
	frames  []Frame
	notices []Notice
	spilled int // frames that came in temporary files
}

func newHarness(chk Checker, maxSize int, synced bool) *harness {
	h := &harness{}
	h.f = &framer{
		check:   chk,
		maxSize: maxSize,
		emit:    func(fr Frame) { h.frames = append(h.frames, fr) },
		notice:  func(n Notice) { h.notices = append(h.notices, n) },
		synced:  synced,
	}
	return h
}

// lend makes the framer lend its frames (Options.ReuseFrames), with a pool of its own; the
// harness keeps copies and scribbles over the bytes lent.
func (h *harness) lend() *harness {
	h.f.pool = &framePool{}
	h.f.emit = func(fr Frame) {
		if fr.Spilled != nil {
			fr.Data = bytes.Clone(fr.Data) // mapped read-only, and unmapped after emit
		} else {
			fr.Data = scribble(fr.Data)
		}
		h.frames = append(h.frames, fr)
	}
	return h
}

// spill makes the framer keep frames larger than n bytes in temporary files (Options.SpillOver);
// the harness keeps copies of their bytes and closes them as a receiver does.
func (h *harness) spill(t testing.TB, n int) *harness {
	h.f.spillOver, h.f.spillDir = n, t.TempDir()
	emit := h.f.emit
	h.f.emit = func(fr Frame) {
		if fr.Spilled != nil && h.f.pool == nil {
			data := bytes.Clone(fr.Data)
			if err := fr.Spilled.Close(); err != nil {
				t.Errorf("closing a spilled frame: %v", err)
			}
			fr.Data = data
		}
		if fr.Spilled != nil {
			h.spilled++
		}
		emit(fr)
	}
	return h
}

// data feeds one packet's bytes.
func (h *harness) data(b []byte) {
	h.pkt++
	h.f.add(bytes.Clone(b), []span{{off: h.f.base + h.f.held(), pkt: h.pkt, time: pktTime(h.pkt)}})
}

// packets feeds several packets' bytes in one call, as reassembly does after a wait.
func (h *harness) packets(bs ...[]byte) {
	var all []byte
	var spans []span
	off := h.f.base + h.f.held()
	for _, b := range bs {
		h.pkt++
		spans = append(spans, span{off: off, pkt: h.pkt, time: pktTime(h.pkt)})
		off += int64(len(b))
		all = append(all, b...)
	}
	h.f.add(all, spans)
}

// lost reports n lost bytes before the next packet, which it then feeds.
func (h *harness) lost(n int, next []byte) {
	h.pkt++
	h.f.gap(n, h.pkt, pktTime(h.pkt))
	h.f.add(bytes.Clone(next), []span{{off: h.f.base + h.f.held(), pkt: h.pkt, time: pktTime(h.pkt)}})
}

func (h *harness) end() { h.f.finish() }

// chunks cuts b into pieces of n bytes.
func chunks(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > n {
		out = append(out, b[:n])
		b = b[n:]
	}
	return append(out, b)
}

// want is an expected frame: its bytes, stream offset and first and last packets.
type want struct {
	data        []byte
	off         int64
	first, last int
}

func (h *harness) check(t *testing.T, frames []want, kinds []NoticeKind, packets []int) {
	t.Helper()
	if len(h.frames) != len(frames) {
		for _, f := range h.frames {
			t.Logf("frame at %d: % x", f.Offset, f.Data[:min(len(f.Data), 16)])
		}
		t.Fatalf("%d frames, want %d; notices %s", len(h.frames), len(frames), h.noticeText())
	}
	for i, w := range frames {
		g := h.frames[i]
		if !bytes.Equal(g.Data, w.data) || g.Offset != w.off || g.FirstPacket != w.first || g.LastPacket != w.last {
			t.Errorf("frame %d: %d bytes at offset %d, packets %d-%d; want %d bytes at %d, packets %d-%d",
				i, len(g.Data), g.Offset, g.FirstPacket, g.LastPacket, len(w.data), w.off, w.first, w.last)
		}
		if !g.FirstTime.Equal(pktTime(w.first)) || !g.LastTime.Equal(pktTime(w.last)) {
			t.Errorf("frame %d: times %v-%v, want the times of packets %d-%d", i, g.FirstTime, g.LastTime, w.first, w.last)
		}
	}
	var gk []NoticeKind
	var gp []int
	for _, n := range h.notices {
		gk = append(gk, n.Kind)
		gp = append(gp, n.Packet)
		if !n.Time.Equal(pktTime(n.Packet)) {
			t.Errorf("notice %q: time %v is not that of its packet %d", n.Msg, n.Time, n.Packet)
		}
	}
	if fmt.Sprint(gk) != fmt.Sprint(kinds) || (packets != nil && fmt.Sprint(gp) != fmt.Sprint(packets)) {
		t.Errorf("notices %s; want kinds %v in packets %v", h.noticeText(), kinds, packets)
	}
}

func (h *harness) noticeText() string {
	var s []string
	for _, n := range h.notices {
		s = append(s, fmt.Sprintf("[kind %d, packet %d: %s]", n.Kind, n.Packet, n.Msg))
	}
	return strings.Join(s, " ")
}

func (h *harness) noticeHas(t *testing.T, kind NoticeKind, text string) {
	t.Helper()
	for _, n := range h.notices {
		if n.Kind == kind && strings.Contains(n.Msg, text) {
			return
		}
	}
	t.Errorf("no notice of kind %d saying %q in %s", kind, text, h.noticeText())
}

func TestFramerSplitAcrossChunks(t *testing.T) {
	a := tframe('K', 200, 0xaa)
	for _, size := range []int{1, 2, 3, 5, 7, 64, 203} {
		t.Run(fmt.Sprint(size, "-byte chunks"), func(t *testing.T) {
			h := newHarness(testCheck, 1<<20, true)
			cs := chunks(a, size)
			for _, c := range cs {
				h.data(c)
			}
			h.end()
			h.check(t, []want{{data: a, off: 0, first: 1, last: len(cs)}}, nil, nil)
		})
	}
}

func TestFramerSeveralFramesInOneChunk(t *testing.T) {
	a, b, c := tframe('K', 10, 1), tframe('k', 0, 2), tframe('K', 300, 3)
	stream := append(append(bytes.Clone(a), b...), c...)
	h := newHarness(testCheck, 1<<20, true)
	h.data(stream)
	h.data(a[:3]) // the start of a fourth frame, never finished
	h.end()
	h.check(t, []want{
		{data: a, off: 0, first: 1, last: 1},
		{data: b, off: int64(len(a)), first: 1, last: 1},
		{data: c, off: int64(len(a) + len(b)), first: 1, last: 1},
	}, []NoticeKind{NoticePartial}, []int{2})
	h.noticeHas(t, NoticePartial, fmt.Sprintf("3 bytes at stream offset %d", len(stream)))
}

// Packet numbers come from the spans of one add call: a frame that starts in the second packet
// of a call and ends in the third of the next.
func TestFramerPacketsWithinACall(t *testing.T) {
	a, b := tframe('K', 20, 1), tframe('K', 40, 2)
	h := newHarness(testCheck, 1<<20, true)
	h.packets(a[:10], a[10:], b[:5])            // packets 1, 2, 3
	h.packets(b[5:20], b[20:30], b[30:], a[:2]) // packets 4, 5, 6, 7
	h.packets(a[2:])                            // packet 8
	h.end()
	h.check(t, []want{
		{data: a, off: 0, first: 1, last: 2},
		{data: b, off: int64(len(a)), first: 3, last: 6},
		{data: a, off: int64(len(a) + len(b)), first: 7, last: 8},
	}, nil, nil)
}

func TestFramerGapInsideFrame(t *testing.T) {
	a, b, c, d := tframe('K', 30, 1), tframe('K', 100, 0xee), tframe('K', 5, 3), tframe('k', 7, 4)
	h := newHarness(testCheck, 1<<20, true)
	h.data(a)                     // 1
	h.data(b[:10])                // 2
	h.lost(40, cat(b[50:], c, d)) // 3: b[10:50] lost
	h.data(a)                     // 4
	h.end()
	tail := len(b) - 50
	off := int64(len(a) + len(b))
	h.check(t, []want{
		{data: a, off: 0, first: 1, last: 1},
		{data: c, off: off, first: 3, last: 3},
		{data: d, off: off + int64(len(c)), first: 3, last: 3},
		{data: a, off: off + int64(len(c)+len(d)), first: 4, last: 4},
	}, []NoticeKind{NoticeGap, NoticeSkipped}, []int{3, 3})
	h.noticeHas(t, NoticeGap, fmt.Sprintf("40 bytes lost (not captured) at stream offset %d; the 10 bytes buffered", len(a)+10))
	h.noticeHas(t, NoticeSkipped, fmt.Sprintf("%d bytes at stream offset %d skipped", tail, len(a)+50))
}

// A gap exactly at a frame boundary: the framer must still look for the next frame, which
// starts right there.
func TestFramerGapAtBoundary(t *testing.T) {
	a, b := tframe('K', 30, 1), tframe('K', 8, 2)
	h := newHarness(testCheck, 1<<20, true)
	h.data(a)
	h.lost(len(b), b)
	h.end()
	h.check(t, []want{
		{data: a, off: 0, first: 1, last: 1},
		{data: b, off: int64(len(a) + len(b)), first: 2, last: 2},
	}, []NoticeKind{NoticeGap}, []int{2})
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

func TestFramerStartMidFrame(t *testing.T) {
	a, b, c := tframe('K', 60, 0xee), tframe('k', 20, 0xee), tframe('k', 3, 0xee)
	tests := []struct {
		name   string
		feed   func(h *harness)
		frames []want
		kinds  []NoticeKind
	}{
		{"Yes frame after a tail", func(h *harness) {
			h.data(cat(a[25:], a))
		}, []want{{data: a, off: int64(len(a) - 25), first: 1, last: 1}}, []NoticeKind{NoticeSkipped}},
		{"Weak frame believed for its successor", func(h *harness) {
			h.data(a[25:])
			h.data(cat(b, c))
		}, []want{
			{data: b, off: int64(len(a) - 25), first: 2, last: 2},
			{data: c, off: int64(len(a) - 25 + len(b)), first: 2, last: 2},
		}, []NoticeKind{NoticeSkipped}},
		{"Weak frame believed for a successor that starts a packet", func(h *harness) {
			h.data(cat(a[25:], b))
			h.data(c)
		}, []want{
			{data: b, off: int64(len(a) - 25), first: 1, last: 1},
			{data: c, off: int64(len(a) - 25 + len(b)), first: 2, last: 2},
		}, []NoticeKind{NoticeSkipped}},
		// Inside a body, sizes that chain are common: two Weak candidates that both start
		// inside packets do not vouch for each other. The last is believed at the end.
		{"Weak frames inside a packet", func(h *harness) {
			h.data(cat(a[25:], b, c))
		}, []want{
			{data: c, off: int64(len(a) - 25 + len(b)), first: 1, last: 1},
		}, []NoticeKind{NoticeSkipped}},
		{"Yes frame inside a packet", func(h *harness) {
			h.data(cat(a[25:], a, b))
		}, []want{
			{data: a, off: int64(len(a) - 25), first: 1, last: 1},
			{data: b, off: int64(len(a) - 25 + len(a)), first: 1, last: 1},
		}, []NoticeKind{NoticeSkipped}},
		{"Weak frame waits for its successor", func(h *harness) {
			h.data(a[25:])
			h.data(b[:12])
			h.data(b[12:])
			h.data(c)
		}, []want{
			{data: b, off: int64(len(a) - 25), first: 2, last: 3},
			{data: c, off: int64(len(a) - 25 + len(b)), first: 4, last: 4},
		}, []NoticeKind{NoticeSkipped}},
		{"Weak last frame believed at the end", func(h *harness) {
			h.data(a[25:])
			h.data(b)
		}, []want{{data: b, off: int64(len(a) - 25), first: 2, last: 2}}, []NoticeKind{NoticeSkipped}},
		{"nothing plausible", func(h *harness) {
			h.data(a[25:])
			h.data(a[5:])
		}, nil, []NoticeKind{NoticeSkipped}},
		{"starts on a boundary", func(h *harness) {
			h.data(a)
		}, []want{{data: a, off: 0, first: 1, last: 1}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(testCheck, 1<<20, false)
			tc.feed(h)
			h.end()
			h.check(t, tc.frames, tc.kinds, nil)
			if len(tc.kinds) > 0 && h.notices[0].Packet != 1 {
				t.Errorf("skipped bytes reported in packet %d, want 1", h.notices[0].Packet)
			}
		})
	}
}

func TestFramerTLS(t *testing.T) {
	// A TLS 1.2 ClientHello record header and the start of the handshake message.
	hello := []byte{0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03}
	hello = append(hello, bytes.Repeat([]byte{0x4b}, 160)...) // 'K': no Kafka frames either
	for _, synced := range []bool{true, false} {
		t.Run(fmt.Sprint("synced=", synced), func(t *testing.T) {
			h := newHarness(testCheck, 1<<20, synced)
			h.data(hello)
			h.data(tframe('K', 10, 1))
			h.lost(100, tframe('K', 10, 1))
			h.end()
			h.check(t, nil, []NoticeKind{NoticeTLS}, []int{1})
			h.noticeHas(t, NoticeTLS, "TLS: cannot be decrypted: ClientHello")
		})
	}
}

func TestFramerStreamEndsInsideFrame(t *testing.T) {
	a := tframe('K', 50, 1)
	tests := []struct {
		name string
		tail []byte
		text string
	}{
		{"inside the body", a[:30], "30 bytes at stream offset 55 of a 55-byte frame"},
		{"inside the size", a[:2], "2 bytes at stream offset 55"},
		// 4 bytes: the checker needs the type byte to judge; the end of the stream is not a
		// reason to call the frame implausible.
		{"before the checker can judge", a[:4], "4 bytes at stream offset 55 of a 55-byte frame"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(testCheck, 1<<20, true)
			h.data(a)
			h.data(tc.tail)
			h.end()
			h.check(t, []want{{data: a, off: 0, first: 1, last: 1}}, []NoticeKind{NoticePartial}, []int{2})
			h.noticeHas(t, NoticePartial, "stream ends inside a frame: "+tc.text)
		})
	}
}

// trusting believes any frame of type 'K', whatever its size: the framer's own size bound is
// all that protects it.
func trusting(head []byte, synced bool) wire.Verdict {
	if len(head) < 5 {
		return wire.NeedMore
	}
	if head[4] != 'K' {
		return wire.No
	}
	return wire.Yes
}

func TestFramerHugeSize(t *testing.T) {
	a := tframe('K', 10, 0xee)
	inStep := []NoticeKind{NoticeResync, NoticeSkipped}
	outOfStep := []NoticeKind{NoticeSkipped}
	for _, tc := range []struct {
		name   string
		chk    Checker
		size   uint32
		synced bool
		kinds  []NoticeKind
	}{
		{"2^31-1 in step", testCheck, 1<<31 - 1, true, inStep},
		{"2^31-1 out of step", testCheck, 1<<31 - 1, false, outOfStep},
		{"2^31-1 trusted in step", trusting, 1<<31 - 1, true, inStep},
		{"2^31-1 trusted out of step", trusting, 1<<31 - 1, false, outOfStep},
		{"negative trusted in step", trusting, 1 << 31, true, inStep},
		{"negative trusted out of step", trusting, 0xfffffffc, false, outOfStep},
		{"over the bound trusted", trusting, 1<<20 + 1, false, outOfStep},
		{"over the bound trusted in step", trusting, 1<<20 + 1, true, inStep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(tc.chk, 1<<20, tc.synced)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			huge := binary.BigEndian.AppendUint32(nil, tc.size)
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.data(cat(huge, []byte("K"), bytes.Repeat([]byte{0xee}, 100)))
				h.data(a)
				h.end()
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				panic("the framer does not come to an end")
			}
			runtime.ReadMemStats(&after)
			if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
				t.Errorf("the framer allocated %d bytes", got)
			}
			h.check(t, []want{{data: a, off: int64(len(huge) + 101), first: 2, last: 2}}, tc.kinds, nil)
			h.noticeHas(t, NoticeSkipped, "105 bytes at stream offset 0 skipped")
		})
	}
}

// A candidate that asks for more bytes forever (a Weak frame whose size is within the bound but
// never completes) is given up after maxResyncBuffer bytes, and the frames in those bytes are
// found, including one that starts at the candidate's second byte.
func TestFramerResyncBufferBound(t *testing.T) {
	weakHuge := func(head []byte, synced bool) wire.Verdict {
		if len(head) < 5 {
			return wire.NeedMore
		}
		if head[4] == 'W' && !synced {
			return wire.Weak
		}
		return testCheck(head, synced)
	}
	h := newHarness(weakHuge, 64<<20, false)
	// At offset 0: size 32 MiB, type 'W'. At offset 1: size 0x57 (the 'W'), type 'K'.
	inner := tframe('K', 0x57-1, 0xee)
	cand := append([]byte{0x02}, inner...)
	if cand[4] != 'W' {
		t.Fatal("bad candidate")
	}
	a := tframe('K', 500, 0xee)
	h.data(cand)
	n := 0
	for h.f.base+int64(len(h.f.buf)) < 2*maxResyncBuffer {
		h.data(a)
		n++
	}
	h.end()
	if len(h.frames) != n+1 {
		t.Fatalf("%d frames, want %d", len(h.frames), n+1)
	}
	if f := h.frames[0]; !bytes.Equal(f.Data, inner) || f.Offset != 1 {
		t.Errorf("first frame at %d: % x", f.Offset, f.Data[:16])
	}
	for _, f := range h.frames[1:] {
		if !bytes.Equal(f.Data, a) || (f.Offset-int64(len(cand)))%int64(len(a)) != 0 {
			t.Fatalf("frame at %d is not one of those sent: % x", f.Offset, f.Data[:16])
		}
	}
	if len(h.notices) != 1 {
		t.Errorf("notices %s, want one", h.noticeText())
	}
	h.noticeHas(t, NoticeSkipped, "1 byte at stream offset 0 skipped: no Kafka frame starts in it")
}

// chaotic is a checker whose verdicts follow no rule but are a function of the bytes it sees:
// the framer must survive any protocol's judgement.
func chaotic(head []byte, synced bool) wire.Verdict {
	h := uint32(2166136261)
	for _, b := range head[:min(len(head), 6)] {
		h = (h ^ uint32(b)) * 16777619
	}
	if synced {
		h ^= 0x9e3779b9
	}
	return wire.Verdict(h % 4)
}

// feedPlan feeds stream to h's framer as plan says (FuzzFramer): pairs of bytes, a chunk's
// length less one and flags (1: lost, 2: in one call with the next). It returns which bytes
// were lost, the packet of each byte, and what the framer's first add call got.
func feedPlan(h *harness, stream, plan []byte) (lost []bool, pktOf []int, firstData []byte) {
	lost = make([]bool, len(stream))
	pktOf = make([]int, len(stream))
	fed := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		var group [][]byte
		flush := func() {
			if len(group) > 0 {
				if firstData == nil {
					firstData = cat(group...)
				}
				h.packets(group...)
				group = nil
			}
		}
		for off, i := 0, 0; off < len(stream); i += 2 {
			n, flags := 7, byte(0)
			if i+1 < len(plan) {
				n, flags = 1+int(plan[i]), plan[i+1]
			}
			n = min(n, len(stream)-off)
			chunk := stream[off : off+n]
			if flags&1 != 0 && fed {
				// Lost: reported before the next data, as reassembly does.
				flush()
				for j := off; j < off+n; j++ {
					lost[j] = true
				}
				off += n
				if off >= len(stream) {
					break
				}
				m := min(7, len(stream)-off)
				if i+3 < len(plan) {
					m = min(1+int(plan[i+2]), len(stream)-off)
					i += 2
				}
				for j := off; j < off+m; j++ {
					pktOf[j] = h.pkt + 1
				}
				h.lost(n, stream[off:off+m])
				off += m
				continue
			}
			fed = true
			for j := off; j < off+n; j++ {
				pktOf[j] = h.pkt + 1 + len(group)
			}
			group = append(group, chunk)
			if flags&2 == 0 {
				flush()
			}
			off += n
		}
		flush()
		h.end()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		panic("the framer does not come to an end")
	}
	return lost, pktOf, firstData
}

// FuzzFramer feeds arbitrary bytes in arbitrary chunkings, with lost chunks, to a framer with
// one of the test checkers, lending its frames or not, keeping big ones in temporary files or not. No panic, no hang, and every frame emitted is exactly 4+size
// bytes, taken from the stream at its offset, from bytes that were not lost, with the packets
// and times of its first and last bytes.
func FuzzFramer(f *testing.F) {
	a, b, c := tframe('K', 30, 1), tframe('k', 200, 2), tframe('K', 0, 3)
	hello := []byte{0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03}
	f.Add(cat(a, b, c, a), []byte{5, 0, 40, 1, 3, 2, 200, 0}, true, uint8(0))
	f.Add(cat(b[50:], a, b, c), []byte{}, false, uint8(0))
	f.Add(cat(a, b, c, a, b), []byte{20, 0, 10, 1, 255, 2, 3, 0}, true, uint8(0))
	f.Add(cat([]byte{0x7f, 0xff, 0xff, 0xff, 'K'}, a, c), []byte{2, 0}, true, uint8(1))
	f.Add(cat([]byte{0x80, 0, 0, 0, 'K'}, a, c), []byte{2, 0}, false, uint8(1))
	f.Add(cat(hello, a, a), []byte{3, 0, 5, 1}, false, uint8(0))
	f.Add(cat(a, b, c), []byte{1, 2, 1, 2, 1, 2, 9, 0}, false, uint8(2))
	// The same, with frames lent (which 3 to 5).
	f.Add(cat(a, b, c, a), []byte{5, 0, 40, 1, 3, 2, 200, 0}, true, uint8(3))
	f.Add(cat(b[50:], a, b, c), []byte{}, false, uint8(3))
	f.Add(cat(a, b, c, a, b), []byte{20, 0, 10, 1, 255, 2, 3, 0}, true, uint8(3))
	f.Add(cat([]byte{0x7f, 0xff, 0xff, 0xff, 'K'}, a, c), []byte{2, 0}, true, uint8(4))
	f.Add(cat(a, b, c), []byte{1, 2, 1, 2, 1, 2, 9, 0}, false, uint8(5))
	// Frames over 40 bytes in temporary files (which 6 to 11), lent or not.
	f.Add(cat(a, b, c, a, b), []byte{20, 0, 10, 1, 255, 2, 3, 0}, true, uint8(6))
	f.Add(cat(a, b, c, a), []byte{5, 0, 40, 1, 3, 2, 200, 0}, true, uint8(9))
	f.Add(cat(b[50:], a, b, c), []byte{}, false, uint8(7))
	f.Add(cat(a, b, b[:100]), []byte{9, 0, 9, 2, 9, 0}, true, uint8(10))
	f.Fuzz(func(t *testing.T, stream, plan []byte, synced bool, which uint8) {
		const maxSize = 1 << 16
		chk := []Checker{testCheck, trusting, chaotic}[int(which)%3]
		h := newHarness(chk, maxSize, synced)
		if which%6 >= 3 {
			h.lend()
		}
		if which%12 >= 6 {
			h.spill(t, 40)
		}
		lost, pktOf, firstData := feedPlan(h, stream, plan)
		if h.spilled > 0 {
			// Frames in temporary files are the frames, packets and notices of frames on the heap.
			ref := newHarness(chk, maxSize, synced)
			if which%6 >= 3 {
				ref.lend()
			}
			feedPlan(ref, stream, plan)
			if len(ref.frames) != len(h.frames) || ref.noticeText() != h.noticeText() {
				t.Fatalf("spilling: %d frames, notices %s; on the heap: %d frames, notices %s", len(h.frames), h.noticeText(), len(ref.frames), ref.noticeText())
			}
			for i, fr := range ref.frames {
				g := h.frames[i]
				if !bytes.Equal(g.Data, fr.Data) || g.Offset != fr.Offset || g.FirstPacket != fr.FirstPacket || g.LastPacket != fr.LastPacket || !g.FirstTime.Equal(fr.FirstTime) || !g.LastTime.Equal(fr.LastTime) {
					t.Fatalf("frame %d spilled differs from the heap's", i)
				}
			}
		}

		// TLS is recognised by the first bytes the framer gets; reassembly hands it whole
		// segments, and a TLS record header fits in the first.
		tls := looksTLS(firstData)
		if tls && (len(h.frames) > 0 || len(h.notices) != 1 || h.notices[0].Kind != NoticeTLS) {
			t.Fatalf("TLS stream: %d frames, notices %s", len(h.frames), h.noticeText())
		}
		end := int64(0)
		for _, fr := range h.frames {
			n := int64(len(fr.Data))
			if n < 4 || int64(int32(binary.BigEndian.Uint32(fr.Data)))+4 != n || n > 4+maxSize {
				t.Fatalf("frame of %d bytes with size prefix % x", n, fr.Data[:min(4, len(fr.Data))])
			}
			if fr.Offset < end || fr.Offset+n > int64(len(stream)) {
				t.Fatalf("frame at %d+%d: the previous one ended at %d, the stream has %d bytes", fr.Offset, n, end, len(stream))
			}
			end = fr.Offset + n
			if !bytes.Equal(fr.Data, stream[fr.Offset:end]) {
				t.Fatalf("frame at %d is not the stream's bytes there", fr.Offset)
			}
			for j := fr.Offset; j < end; j++ {
				if lost[j] {
					t.Fatalf("frame at %d+%d holds lost byte %d", fr.Offset, n, j)
				}
			}
			if fr.FirstPacket != pktOf[fr.Offset] || fr.LastPacket != pktOf[end-1] ||
				!fr.FirstTime.Equal(pktTime(fr.FirstPacket)) || !fr.LastTime.Equal(pktTime(fr.LastPacket)) {
				t.Fatalf("frame at %d+%d: packets %d-%d, want %d-%d", fr.Offset, n, fr.FirstPacket, fr.LastPacket, pktOf[fr.Offset], pktOf[end-1])
			}
		}
		for _, n := range h.notices {
			if n.Packet < 1 || n.Packet > h.pkt || !n.Time.Equal(pktTime(n.Packet)) {
				t.Fatalf("notice %q in packet %d at %v; %d packets fed", n.Msg, n.Packet, n.Time, h.pkt)
			}
		}
		if len(h.f.buf) != 0 || h.f.big != nil {
			t.Fatalf("%d bytes left in the buffer at the end (a frame in a file: %v)", len(h.f.buf), h.f.big != nil)
		}
	})
}

// A Weak frame found after a gap that waits for its successor is believed when another gap
// comes right after it, as at the end of the stream.
func TestFramerWeakFrameBeforeGap(t *testing.T) {
	a, b := tframe('k', 20, 0xee), tframe('k', 30, 0xee)
	h := newHarness(testCheck, 1<<20, true)
	h.data(a[:10])    // 1
	h.lost(5, a[15:]) // 2: a's tail, junk to the framer
	h.data(b)         // 3: a Weak frame, waiting for a successor
	h.lost(7, b)      // 4
	h.data(a)         // 5
	h.end()
	off := int64(len(a))
	h.check(t, []want{
		{data: b, off: off, first: 3, last: 3},
		{data: b, off: off + int64(len(b)) + 7, first: 4, last: 4},
		{data: a, off: off + 2*int64(len(b)) + 7, first: 5, last: 5},
	}, []NoticeKind{NoticeGap, NoticeSkipped, NoticeGap}, []int{2, 2, 4})
}

// TestFramerDoesNotKeepCallerData: reassembly's bytes are valid only during add. Frames cut
// straight from them, and the bytes kept for the next call, must be copies: the caller's
// buffer is overwritten here after every call.
func TestFramerDoesNotKeepCallerData(t *testing.T) {
	a, b, c := tframe('K', 10, 1), tframe('k', 40, 2), tframe('K', 300, 3)
	stream := slices.Concat(a, b, c, a)
	for _, size := range []int{7, 30, 64, len(stream)} {
		for _, lent := range []bool{false, true} {
			name := fmt.Sprint(size, "-byte packets")
			if lent {
				name += ", frames lent"
			}
			t.Run(name, func(t *testing.T) {
				h := newHarness(testCheck, 1<<20, true)
				if lent {
					h.lend()
				}
				scratch := make([]byte, size)
				for _, p := range chunks(stream, size) {
					h.pkt++
					n := copy(scratch, p)
					h.f.add(scratch[:n], []span{{off: h.f.base + h.f.held(), pkt: h.pkt, time: pktTime(h.pkt)}})
					for i := range scratch {
						scratch[i] = 0xee
					}
				}
				h.end()
				var got [][]byte
				for _, fr := range h.frames {
					got = append(got, fr.Data)
				}
				if want := [][]byte{a, b, c, a}; !slices.EqualFunc(got, want, bytes.Equal) {
					t.Errorf("frames %x, want %x", got, want)
				}
			})
		}
	}
}

// TestFramerLargeFrameAllocations: a frame that comes in many packets is buffered in a few
// allocations (the buffer grows fourfold, not by a quarter, which would copy the frame about
// five times over), and handed over without a copy.
func TestFramerLargeFrameAllocations(t *testing.T) {
	big := tframe('K', 1<<20, 7)
	packets := chunks(big, 1448)
	// testCheck refuses frames this large; the framer needs only a yes to cut.
	h := newHarness(func([]byte, bool) wire.Verdict { return wire.Yes }, 1<<21, true)
	spans := make([][]span, len(packets))
	off := int64(0)
	for i, p := range packets {
		spans[i] = []span{{off: off, pkt: i + 1, time: pktTime(i + 1)}}
		off += int64(len(p))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, p := range packets {
		h.f.add(p, spans[i])
	}
	runtime.ReadMemStats(&after)
	if len(h.frames) != 1 || !bytes.Equal(h.frames[0].Data, big) {
		t.Fatal("the frame did not come out whole")
	}
	allocs, bytes := after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc
	t.Logf("%d allocations, %d bytes for a frame of %d bytes in %d packets", allocs, bytes, len(big), len(packets))
	if allocs > 24 || bytes > 2*uint64(len(big)) {
		t.Errorf("%d allocations, %d bytes for a frame of %d bytes", allocs, bytes, len(big))
	}
	if d := h.frames[0].Data; cap(d) != len(d) {
		t.Errorf("frame of %d bytes in a buffer of %d", len(d), cap(d))
	}
}

// TestFramerLentFrames: with frames lent, a frame that came whole in one segment is the
// segment's own bytes, and the buffer a frame spanning segments was assembled in is used again
// for the next one: a second large frame costs no new buffer.
func TestFramerLentFrames(t *testing.T) {
	big := tframe('K', 1<<20, 7)
	small := tframe('K', 100, 8)
	h := newHarness(func([]byte, bool) wire.Verdict { return wire.Yes }, 1<<21, true)
	h.f.pool = &framePool{}
	var lent [][]byte
	h.f.emit = func(fr Frame) {
		lent = append(lent, fr.Data)
		h.frames = append(h.frames, fr)
	}
	bigPackets := chunks(big, 1448)
	feed := func(packets [][]byte) {
		for _, p := range packets {
			h.pkt++
			h.f.add(p, []span{{off: h.f.base, pkt: h.pkt, time: pktTime(h.pkt)}})
		}
	}
	feed([][]byte{small})
	if len(lent) != 1 || &lent[0][0] != &small[0] {
		t.Fatal("a frame in one segment was not lent as the segment's bytes")
	}
	feed(bigPackets)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	feed(bigPackets)
	runtime.ReadMemStats(&after)
	if len(lent) != 3 || !bytes.Equal(lent[2], big) {
		t.Fatalf("%d frames; the last one whole: %v", len(lent), len(lent) == 3 && bytes.Equal(lent[2], big))
	}
	if &lent[1][0] != &lent[2][0] {
		t.Error("the second large frame was not assembled in the first one's buffer")
	}
	// What is allocated is the list of the frame's packets, not a buffer.
	if b := after.TotalAlloc - before.TotalAlloc; b > uint64(len(big)/8) {
		t.Errorf("the second large frame allocated %d bytes", b)
	}
}

// TestFramePool: get prefers a buffer that holds the whole frame, then one that holds what is
// asked; put keeps the largest buffers within the pool's bounds.
func TestFramePool(t *testing.T) {
	var p framePool
	for _, c := range []int{1 << 10, 64 << 10, 1 << 20} {
		p.put(make([]byte, 0, c))
	}
	if b := p.get(2<<10, 100<<10); cap(b) != 1<<20 {
		t.Errorf("get(2 KiB, whole 100 KiB) gave %d bytes, want the 1 MiB buffer", cap(b))
	}
	if b := p.get(2<<10, 0); cap(b) != 64<<10 {
		t.Errorf("get(2 KiB) gave %d bytes, want the 64 KiB buffer", cap(b))
	}
	if b := p.get(2<<10, 0); cap(b) != 2<<10 || len(p.free) != 1 {
		t.Errorf("get(2 KiB) with only 1 KiB pooled gave %d bytes, %d left pooled; want a new 2 KiB buffer, 1 left", cap(b), len(p.free))
	}
	for range 2 * maxPooled {
		p.put(make([]byte, 0, 4<<10))
	}
	p.put(make([]byte, 0, maxPooledBytes/2))
	p.put(make([]byte, 0, maxPooledBytes+1))
	if len(p.free) != maxPooled || p.bytes > maxPooledBytes {
		t.Errorf("%d buffers, %d bytes pooled; at most %d and %d", len(p.free), p.bytes, maxPooled, maxPooledBytes)
	}
	if b := p.get(maxPooledBytes/4, 0); cap(b) != maxPooledBytes/2 {
		t.Errorf("the largest buffer was not kept: got %d bytes", cap(b))
	}
	sum := 0
	for _, b := range p.free {
		sum += cap(b)
	}
	if sum != p.bytes {
		t.Errorf("pool counts %d bytes, holds %d", p.bytes, sum)
	}
}

// Frames over Options.SpillOver come through temporary files with the bytes, offsets, packets
// and notices of frames on the heap: here a big frame that starts a packet right after a frame
// that ended one, spans hundreds of packets, and is followed by a small frame in its last
// packet; then one cut short by the end of the stream.
func TestFramerSpill(t *testing.T) {
	a, big := tframe('K', 30, 1), tframe('K', 20000, 2)
	stream := cat(a, a, big, a, big[:5000])
	run := func(spill int) *harness {
		h := newHarness(trusting, 1<<20, true)
		if spill > 0 {
			h.spill(t, spill)
		}
		h.data(stream[:70]) // two frames, ending with the packet
		for _, c := range chunks(stream[70:], 100) {
			h.data(c)
		}
		h.end()
		return h
	}
	heap, spilled := run(0), run(1000)
	if spilled.spilled != 1 {
		t.Fatalf("%d frames came through files, want 1", spilled.spilled)
	}
	heap.check(t, []want{{a, 0, 1, 1}, {a, 35, 1, 1}, {big, 70, 2, 202}, {a, 20075, 202, 202}}, []NoticeKind{NoticePartial}, []int{252})
	spilled.check(t, []want{{a, 0, 1, 1}, {a, 35, 1, 1}, {big, 70, 2, 202}, {a, 20075, 202, 202}}, []NoticeKind{NoticePartial}, []int{252})
	if heap.noticeText() != spilled.noticeText() {
		t.Errorf("notices through files: %s; on the heap: %s", spilled.noticeText(), heap.noticeText())
	}
	if spilled.f.big != nil {
		t.Error("the frame cut short is still in its file")
	}
}
