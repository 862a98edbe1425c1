package reassembly

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec/wire"
)

// benchSink counts frames; its checker believes any frame whose size fits.
type benchSink struct{ frames, bytes int }

func (s *benchSink) Open(*Conn) (Checker, Checker) { return benchCheck, benchCheck }
func (s *benchSink) Frame(f Frame)                 { s.frames++; s.bytes += len(f.Data) }
func (s *benchSink) Notice(Notice)                 {}
func (s *benchSink) Close(*Conn)                   {}

func benchCheck(head []byte, _ bool) wire.Verdict {
	if len(head) < 4 {
		return wire.NeedMore
	}
	if int32(binary.BigEndian.Uint32(head)) < 0 {
		return wire.No
	}
	return wire.Yes
}

// BenchmarkAssembler reassembles and frames a consumer's connection as it looks on a network
// with a 1500-byte MTU: 500 fetch requests of 120 bytes, each answered by a response of 100 B to
// 64 KiB cut into 1448-byte segments, each segment acknowledged.
func BenchmarkAssembler(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	bld := newBuilder(1000, 5000, true)
	var payload int64
	frame := func(n int) []byte {
		f := make([]byte, 4+n)
		binary.BigEndian.PutUint32(f, uint32(n))
		return f
	}
	for range 500 {
		req := frame(116)
		bld.send(true, req)
		resp := frame(100 + rng.IntN(64<<10))
		for _, c := range chunks(resp, 1448) {
			bld.send(false, c)
			bld.segs = append(bld.segs, tcpSeg{toServer: true, seq: bld.cseq, ack: bld.sseq, flags: "A"})
		}
		payload += int64(len(req) + len(resp))
	}
	bld.fin()
	segs := make([]*capture.Segment, len(bld.segs))
	for i, s := range bld.segs {
		segs[i] = segment(b, i+1, s)
	}
	opt := Options{IsServerPort: func(p uint16) bool { return p == serverAP.Port() }}
	b.SetBytes(payload)
	b.ReportAllocs()
	for b.Loop() {
		h := &benchSink{}
		a := New(h, opt)
		for _, s := range segs {
			a.Add(s)
		}
		a.Close()
		if h.frames != 1000 || int64(h.bytes) != payload {
			b.Fatalf("%d frames, %d bytes; want 1000, %d", h.frames, h.bytes, payload)
		}
	}
	b.ReportMetric(float64(len(segs))*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}
