package reassembly

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/connsgen"
)

// openCounter counts frames and connections as they open and close, and the most open at once.
type openCounter struct {
	open, maxOpen, idle, closed int
	requests, responses         int
	// rejected counts the connections taken for not Kafka before the assembler's Close (at
	// which every connection still undecided is).
	rejected int
}

func (h *openCounter) Open(*Conn) (Checker, Checker) {
	h.open++
	h.maxOpen = max(h.maxOpen, h.open)
	yes := func([]byte, bool) wire.Verdict { return wire.Yes }
	return yes, yes
}

func (h *openCounter) Frame(f Frame) {
	if f.Dir == ToServer {
		h.requests++
	} else {
		h.responses++
	}
}

func (h *openCounter) Notice(Notice) {}

func (h *openCounter) Close(c *Conn) {
	h.open--
	h.closed++
	if c.Idle {
		h.idle++
	}
}

// assemble runs a capture of connsgen's through an assembler.
func assemble(t testing.TB, spec connsgen.Spec, opt Options) *openCounter {
	var buf bytes.Buffer
	if err := connsgen.Write(&buf, spec); err != nil {
		t.Fatal(err)
	}
	r, err := capture.NewReader(&buf, "conns.pcap")
	if err != nil {
		t.Fatal(err)
	}
	h := &openCounter{}
	opt.IsServerPort = func(p uint16) bool { return p == connsgen.ServerPort }
	if opt.Detect != nil {
		opt.IsServerPort = func(uint16) bool { return false }
	}
	a := New(h, opt)
	for {
		seg, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		a.Add(seg)
	}
	h.rejected = len(a.rejected)
	a.Close()
	return h
}

// TestIdleConnections: connections idle for CloseAfter, or the least recently active beyond
// MaxConns, are closed as idle; the others are closed unmarked, by their FINs or at the end;
// every request and response is framed either way.
func TestIdleConnections(t *testing.T) {
	for _, tt := range []struct {
		name       string
		spec       connsgen.Spec
		maxConns   int
		idle       int
		atMostOpen int
	}{
		{"open, under the bound", connsgen.Spec{Conns: 50, Every: time.Millisecond}, 64, 0, 50},
		{"closed, over the bound", connsgen.Spec{Conns: 50, Every: time.Millisecond, Close: true}, 16, 0, 1},
		// At 17 open, the 3 least recently active close (down to 16-16/8); then at 19 open,
		// after connections 22, 27, ..., 47, 5 more each time: 3+6*5.
		{"open, over the bound", connsgen.Spec{Conns: 50, Every: time.Millisecond}, 16, 33, 19},
		{"idle for CloseAfter", connsgen.Spec{Conns: 20, Every: time.Second, Pause: 11 * time.Minute, PauseAfter: 9}, 0, 10, 20},
		{"not quite idle", connsgen.Spec{Conns: 20, Every: time.Second, Pause: 9 * time.Minute, PauseAfter: 9}, 0, 0, 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := assemble(t, tt.spec, Options{MaxConns: tt.maxConns})
			n := tt.spec.Conns
			if h.requests != n || h.responses != n || h.closed != n || h.open != 0 {
				t.Errorf("%d requests, %d responses, %d connections closed, %d left open; want %d, %d, %d, 0", h.requests, h.responses, h.closed, h.open, n, n, n)
			}
			if h.idle != tt.idle || h.maxOpen > tt.atMostOpen {
				t.Errorf("%d closed as idle, at most %d open at once; want %d, at most %d", h.idle, h.maxOpen, tt.idle, tt.atMostOpen)
			}
		})
	}
}

// TestIdleUndecided: a connection closed as idle before its first bytes told whether it is
// Kafka is not taken for one that is not: its later packets start a new connection, whose
// bytes decide. Connections all started at the same capture time make the one just opened (by
// its SYN, no bytes yet) as idle as the others when the bound is passed.
func TestIdleUndecided(t *testing.T) {
	detect := func(first []byte, _ bool) (wire.Verdict, string) {
		if len(first) == 0 {
			return wire.NeedMore, ""
		}
		return wire.Yes, "Kafka"
	}
	const n = 50
	h := assemble(t, connsgen.Spec{Conns: n}, Options{MaxConns: 16, Detect: detect})
	if h.requests != n || h.responses != n || h.idle == 0 || h.rejected != 0 {
		t.Errorf("%d requests, %d responses, %d connections closed as idle, %d rejected; want %d, %d, some, none",
			h.requests, h.responses, h.idle, h.rejected, n, n)
	}
	// One that held bytes had its chance: closed as idle, it is not Kafka.
	never := func([]byte, bool) (wire.Verdict, string) { return wire.NeedMore, "" }
	h = assemble(t, connsgen.Spec{Conns: n}, Options{MaxConns: 16, Detect: never})
	if h.rejected == 0 {
		t.Errorf("no connection that held bytes undecided was rejected when closed as idle")
	}
}

// BenchmarkOpenConnections: the cost of a connection left open, in time and memory allocated,
// does not grow with the connections open (beyond MaxConns, the least recently active close).
func BenchmarkOpenConnections(b *testing.B) {
	for _, n := range []int{5000, 20000, 80000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var buf bytes.Buffer
			if err := connsgen.Write(&buf, connsgen.Spec{Conns: n, Every: connsgen.DefaultEvery}); err != nil {
				b.Fatal(err)
			}
			data := buf.Bytes()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for range b.N {
				r, err := capture.NewReader(bytes.NewReader(data), "conns.pcap")
				if err != nil {
					b.Fatal(err)
				}
				a := New(&openCounter{}, Options{IsServerPort: func(p uint16) bool { return p == connsgen.ServerPort }})
				for {
					seg, err := r.Next()
					if err != nil {
						break
					}
					a.Add(seg)
				}
				a.Close()
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			conns := float64(n) * float64(b.N)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/conns, "ns/conn")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/conns, "B/conn")
		})
	}
}
