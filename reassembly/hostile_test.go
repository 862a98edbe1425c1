package reassembly

import (
	"runtime"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// counter is a Handler that counts and keeps nothing.
type counter struct{ frames, notices, opened, closed int }

func (c *counter) Open(*Conn) (Checker, Checker) { c.opened++; return testCheck, testCheck }
func (c *counter) Frame(Frame)                   { c.frames++ }
func (c *counter) Notice(Notice)                 { c.notices++ }
func (c *counter) Close(*Conn)                   { c.closed++ }

func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// TestManyShortConnectionsFlatMemory: tens of thousands of complete little connections (one
// request each) leave nothing behind: memory after them is what it was after the first few.
func TestManyShortConnectionsFlatMemory(t *testing.T) {
	n := 40000
	if testing.Short() {
		n = 4000
	}
	h := &counter{}
	a := New(h, Options{IsServerPort: func(p uint16) bool { return p == 9092 }})
	frame := tframe('K', 8, 'x')
	num := 0
	var early float64
	for i := 0; i < n; i++ {
		b := newBuilder(uint32(i*7919), uint32(i*104729), true)
		b.send(true, frame)
		b.fin()
		port := layers.TCPPort(1024 + i%60000)
		for _, s := range b.segs {
			num++
			seg := segment(t, num, s)
			if s.toServer {
				seg.TCP.SrcPort = port
			} else {
				seg.TCP.DstPort = port
			}
			a.Add(seg)
		}
		if i == 1000 {
			early = heapMB()
		}
	}
	late := heapMB()
	a.Close()
	if h.frames != n || h.opened != n {
		t.Fatalf("%d frames from %d connections opened, want %d", h.frames, h.opened, n)
	}
	if late > early+16 {
		t.Errorf("heap grew from %.1f MiB after 1000 connections to %.1f MiB after %d", early, late, n)
	}
	t.Logf("heap %.1f MiB after 1000 connections, %.1f MiB after %d", early, late, n)
}

// TestEndlessGarbageBoundedMemory: a connection that never sends a plausible frame (and never
// ends) is searched for frames in a bounded buffer.
func TestEndlessGarbageBoundedMemory(t *testing.T) {
	h := &counter{}
	a := New(h, Options{IsServerPort: func(p uint16) bool { return p == 9092 }})
	b := newBuilder(1000, 5000, false) // no SYN: the framer looks for a frame
	chunk := make([]byte, 1400)
	for i := range chunk {
		chunk[i] = 0xff // sizes of -1: never a frame
	}
	num := 0
	var early float64
	for i := 0; i < 30000; i++ { // 42 MB
		num++
		a.Add(segment(t, num, b.send(true, chunk)))
		b.segs = b.segs[:0]
		if i == 1000 {
			early = heapMB()
		}
	}
	late := heapMB()
	a.Close()
	if h.frames != 0 {
		t.Errorf("%d frames found in garbage", h.frames)
	}
	if late > early+8 {
		t.Errorf("heap grew from %.1f MiB to %.1f MiB on an endless garbage stream", early, late)
	}
}

// TestOverlappingRetransmissionWithOtherBytes: a retransmission that overlaps earlier data
// with different bytes is resolved by the reassembly; frames stay whole and nothing panics.
func TestOverlappingRetransmissionWithOtherBytes(t *testing.T) {
	f1 := tframe('K', 7, '1')
	f2 := tframe('K', 7, '2')
	b := newBuilder(1000, 5000, true)
	s1 := b.send(true, f1)
	b.send(true, f2)
	other := append([]byte(nil), f1...)
	other[11] = '9' // the same sequence range, other bytes
	b.segs = append(b.segs, tcpSeg{toServer: true, seq: s1.seq, ack: s1.ack, flags: "A", data: other})
	b.fin()
	h := run(t, Options{}, b.segs)
	if len(h.frames) != 2 {
		t.Fatalf("frames: %s", frameList(h.frames))
	}
	for _, f := range h.frames {
		if len(f.Data) != 12 {
			t.Errorf("frame of %d bytes", len(f.Data))
		}
	}
}
