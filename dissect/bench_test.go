package dissect

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/pcaps"
)

// benchCapture is a capture of 40 copies of the three-broker consumer-group capture, one after
// another, each copy's clients on an address of their own: about 3 MB, 300 connections.
func benchCapture(b *testing.B) (string, int64) {
	orig := loadPackets(b, pcapPath("kgo-group-3brokers.pcap"))
	span := orig[len(orig)-1].ci.Timestamp.Sub(orig[0].ci.Timestamp)
	var all []rpkt
	for k := range 40 {
		for _, p := range orig {
			q := p.clone()
			q.ci.Timestamp = q.ci.Timestamp.Add(time.Duration(k) * (span + time.Second))
			client := net.IPv4(10, 1, byte(k), 1)
			if q.toServer() {
				q.ip.SrcIP = client
			} else {
				q.ip.DstIP = client
			}
			all = append(all, q)
		}
	}
	name := writePcap(b, all, linkEthernet, false)
	fi, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	return name, fi.Size()
}

// BenchmarkDissect runs a capture file through the whole pipeline (read, reassemble, decode,
// render to io.Discard) in each output mode, on one goroutine and spread over shards.
func BenchmarkDissect(b *testing.B) {
	file, size := benchCapture(b)
	// kdissect lets the heap grow for its shallow formats (summary, statistics): the numbers
	// before the pipeline left package main were taken so, from the first mode on.
	defer debug.SetGCPercent(debug.SetGCPercent(200))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(48 << 20))
	for _, mode := range []struct {
		name string
		run  testRun
	}{
		{"summary", testRun{format: "summary"}},
		{"stats", testRun{format: "none", stats: true}},
		{"json", testRun{format: "json"}},
		{"diagram", testRun{format: "diagram"}},
	} {
		for _, workers := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%s/workers=%d", mode.name, workers), func(b *testing.B) {
				r := mode.run
				r.ports, r.workers = pcaps.Ports, workers
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					if code := r.run(b, io.Discard, io.Discard, file); code != 0 {
						b.Fatalf("exit %d", code)
					}
				}
			})
		}
	}
}

// BenchmarkFilter measures what choosing messages costs in summaries, per message read: no
// filter, --api, and display filters (-Y) that read the header, the latency, and a body. The
// capture is benchCapture's, or the file $KDISSECT_BENCH_PCAP names (cmd/kbench gen makes a
// large one); its broker ports are 9092-9094.
func BenchmarkFilter(b *testing.B) {
	file, _ := benchCapture(b)
	if env := os.Getenv("KDISSECT_BENCH_PCAP"); env != "" {
		file = env
	}
	fi, err := os.Stat(file)
	if err != nil {
		b.Fatal(err)
	}
	size := fi.Size()
	defer debug.SetGCPercent(debug.SetGCPercent(200))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(48 << 20))
	out, _ := testRun{format: "summary", ports: pcaps.Ports}.mustDissect(b, file)
	messages := strings.Count(out, " Request ") + strings.Count(out, " Response ")
	for _, mode := range []struct {
		name string
		sel  func(*Selection)
	}{
		{"none", nil},
		{"api", func(s *Selection) { s.APIs = []string{"Fetch"} }},
		{"Y-api", func(s *Selection) { s.Expr = `api == "Fetch"` }},
		{"Y-latency", func(s *Selection) { s.Expr = `api == "Fetch" && latency_ms > 1` }},
		{"Y-topics", func(s *Selection) { s.Expr = `"orders" in topics` }},
		{"Y-body", func(s *Selection) { s.Expr = `api == "Produce" && req.Acks == 0` }},
	} {
		b.Run(mode.name, func(b *testing.B) {
			r := testRun{format: "summary", ports: pcaps.Ports, workers: 1, sel: mode.sel}
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if code := r.run(b, io.Discard, io.Discard, file); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(messages), "ns/message")
		})
	}
}

// BenchmarkLearnNames measures the first pass over a capture file alone (learnNames: topic
// names for topic ids from the whole file), to set beside BenchmarkDissect's whole runs, which
// include it. The capture is benchCapture's, or the file $KDISSECT_BENCH_PCAP names.
func BenchmarkLearnNames(b *testing.B) {
	file, size := benchCapture(b)
	if env := os.Getenv("KDISSECT_BENCH_PCAP"); env != "" {
		fi, err := os.Stat(env)
		if err != nil {
			b.Fatal(err)
		}
		file, size = env, fi.Size()
	}
	p, _ := testRun{format: "summary", ports: pcaps.Ports}.pipeline(b, io.Discard, io.Discard, Config{})
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		p.learnNames(file, new(codec.TopicNames))
	}
}
