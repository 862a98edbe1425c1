package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"
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
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"summary", []string{"--format", "summary"}},
		{"stats", []string{"--stats", "--format", "none"}},
		{"json", []string{"--format", "json"}},
		{"diagram", []string{"--format", "diagram"}},
	} {
		for _, workers := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%s/workers=%d", mode.name, workers), func(b *testing.B) {
				fs, o := captureFlags()
				if err := fs.Parse(append(mode.args, "-p", capturePorts, file)); err != nil {
					b.Fatal(err)
				}
				o.workers = workers
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					if code := o.dissect(captureCommand(), fs.Args(), nil, io.Discard, io.Discard); code != 0 {
						b.Fatalf("exit %d", code)
					}
				}
			})
		}
	}
}
