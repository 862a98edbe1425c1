package dissect

import (
	"bytes"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/render"
)

// TestStream: a connection given as two byte streams, cut anywhere, comes out as the same
// paired messages a capture gives: numbered after the connections before it, each frame at the
// positions of its first and last bytes, the response answering its request with the latency
// between; a loss is reported, and the frames after it are found again.
func TestStream(t *testing.T) {
	var out bytes.Buffer
	p, err := New(Config{Codec: newCodec(t), Out: render.NewJSON(&out), Plan: planOf(t, render.Needs{Tree: true, Bytes: true}, SelectAll()), Select: SelectAll()})
	if err != nil {
		t.Fatal(err)
	}
	client, server := netip.MustParseAddrPort("10.0.0.1:50000"), netip.MustParseAddrPort("10.0.0.2:9092")
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	p.Stream(client, server).Close() // connection 0, silent
	s := p.Stream(client, server)
	req, resp := apiVersionsRequest, apiVersionsResponse
	s.Write(reassembly.ToServer, req[:3], 1, at(0))
	s.Write(reassembly.ToServer, req[3:9], 2, at(1))
	s.Write(reassembly.ToServer, req[9:], 3, at(2))
	s.Write(reassembly.ToClient, resp[:5], 4, at(4))
	s.Write(reassembly.ToClient, resp[5:], 5, at(7))
	// Half a request, then the rest of it lost: the next requests (correlation ids 6 and 7)
	// are found after the gap.
	s.Write(reassembly.ToServer, req[:7], 6, at(8))
	s.Lost(reassembly.ToServer, len(req)-7, 7, at(9))
	next := slices.Clone(req)
	next[11] = 6
	s.Write(reassembly.ToServer, next, 8, at(10))
	next[11] = 7
	s.Write(reassembly.ToServer, next, 9, at(11))
	s.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	lines := jsonLines(t, out.Bytes())
	if len(lines) < 4 {
		t.Fatalf("%d lines, want at least 4:\n%s", len(lines), out.String())
	}
	r, a := lines[0], lines[1]
	if r.Kind != "request" || r.APIName != "ApiVersions" || r.Stream != 1 || r.FirstFrame != 1 || r.Frame != 3 || r.Src != client.String() {
		t.Errorf("request %+v", r)
	}
	if a.Kind != "response" || a.FirstFrame != 4 || a.Frame != 5 || a.RequestFrame == nil || *a.RequestFrame != 3 ||
		a.LatencyUS == nil || *a.LatencyUS != 5000 || a.Src != server.String() {
		t.Errorf("response %+v", a)
	}
	var gap bool
	var after int
	for _, l := range lines[2:] {
		gap = gap || l.Kind == "notice" && strings.Contains(l.Text, "lost")
		if l.Kind == "request" && l.Frame == 8 && l.FirstFrame == 8 {
			after++
		}
	}
	if !gap || after != 1 {
		t.Errorf("after the loss: gap reported %v, %d requests at position 8 (want 1):\n%s", gap, after, out.String())
	}
}

// TestLimit: with Limit, nothing is shown after that many messages, and Stop is called when the
// limit is reached; with Flush, the output is flushed after each message.
func TestLimit(t *testing.T) {
	var out bytes.Buffer
	stops := 0
	fl := &flushCounter{Renderer: render.NewJSON(&out)}
	p, err := New(Config{Codec: newCodec(t), Out: fl, Plan: planOf(t, render.Needs{Tree: true}, SelectAll()), Select: SelectAll(),
		Limit: 1, Flush: true, Stop: func() { stops++ }})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Stream(netip.MustParseAddrPort("10.0.0.1:50000"), netip.MustParseAddrPort("10.0.0.2:9092"))
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s.Write(reassembly.ToServer, apiVersionsRequest, 1, at)
	s.Write(reassembly.ToClient, apiVersionsResponse, 2, at)
	s.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n, _ := p.Shown(); n != 1 || len(jsonLines(t, out.Bytes())) != 1 || stops == 0 || fl.flushes != 1 {
		t.Errorf("%d shown, output %q, %d stops, %d flushes; want 1 message, a stop and a flush", n, out.String(), stops, fl.flushes)
	}
}

type flushCounter struct {
	render.Renderer
	flushes int
}

func (f *flushCounter) Flush() error {
	f.flushes++
	return f.Renderer.Flush()
}
