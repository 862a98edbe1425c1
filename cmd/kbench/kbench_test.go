package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

func TestDropped(t *testing.T) {
	report := "listening on lo; 1200 packets captured; 2400 packets received by filter; 0 packets dropped by kernel"
	lost, found := dropped(report)
	if !found || lost["kernel"] != 0 {
		t.Errorf("dropped(%q) = %v, %v", report, lost, found)
	}
	lost, found = dropped("10 packets captured; 3 packets dropped by kernel; 1 packet dropped by interface")
	if !found || lost["kernel"] != 3 || lost["interface"] != 1 {
		t.Errorf("dropped: %v, %v; want kernel 3, interface 1", lost, found)
	}
	if _, found := dropped("tcpdump: lo: No such device exists"); found {
		t.Error("dropped found a count where there is none")
	}
}

func TestMaxRSSBytes(t *testing.T) {
	if got := maxRSSBytes(&syscall.Rusage{Maxrss: 2048}); got != 2<<20 {
		t.Errorf("maxRSSBytes(2048 KiB) = %d, want %d", got, 2<<20)
	}
}

func TestCPUModel(t *testing.T) {
	in := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu\n"
	if got := cpuModel(strings.NewReader(in)); got != "AMD EPYC 7B13" {
		t.Errorf("cpuModel = %q", got)
	}
}

func TestHasStatsMode(t *testing.T) {
	if hasStatsMode("      --format string   output format: summary or json (default \"summary\")") {
		t.Error("stats mode found in a help without --stats")
	}
	if !hasStatsMode("      --format string   output format: summary, json or none\n      --stats   print statistics tables") {
		t.Error("stats mode not found")
	}
}

func TestBest(t *testing.T) {
	r := &result{runs: []measurement{
		{wall: 3 * time.Second, rss: 10 << 20},
		{wall: 2 * time.Second, rss: 12 << 20},
		{wall: 4 * time.Second, rss: 30 << 20},
	}}
	m, ok := r.best()
	if !ok || m.wall != 2*time.Second || m.rss != 30<<20 {
		t.Errorf("best = %+v, %v; want the fastest wall time and the highest peak RSS", m, ok)
	}
	if _, ok := (&result{}).best(); ok {
		t.Error("best of no runs")
	}
}

func TestRenderResults(t *testing.T) {
	file := captureInfo{size: 200e6, packets: 100000}
	res := func(name, mode string, wall time.Duration, rss int64) *result {
		return &result{prog: program{name: name, mode: mode}, file: file, runs: []measurement{{wall: wall, cpu: wall, rss: rss}}}
	}
	results := []*result{
		res("floor", "read+decode+reassemble", time.Second, 20<<20),
		res("floor", floorCountMode, time.Second/2, 10<<20),
		res("kdissect", "summary", 2*time.Second, 40<<20),
		res("kdissect", "json", 4*time.Second, 50<<20),
		res("tshark", "one-line", 20*time.Second, 900<<20),
		res("tshark", "json", 80*time.Second, 1000<<20),
		{prog: program{name: "kdissect", mode: "stats"}, err: os.ErrNotExist},
	}
	var out bytes.Buffer
	if err := renderResults(&out, results, true); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"| program", "÷ floor", // the header, not upper-cased
		"200.0", "100000", // floor: 200 MB in 1 s, 100000 packets/s
		"2.0×", "4.0×", // kdissect vs floor
		"8.0×", "÷ count floor", // json vs the stricter floor
		"10.0× (summary)", "20.0× (json)", // tshark vs kdissect
		"900 MiB", "FAILED",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}

	out.Reset()
	double := []*result{res("kdissect", "summary", 4*time.Second, 44<<20)}
	double[0].file = captureInfo{size: 400e6, packets: 200000}
	if err := renderMemory(&out, results, double, false); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "44 MiB") || !strings.Contains(s, "1.10") || !strings.Contains(s, "4.00 s") {
		t.Errorf("memory table:\n%s", s)
	}
}

// TestFloorAndDouble runs the floor program on a capture of the repository, and on that
// capture doubled: twice the packets and reassembled bytes, timestamps in order.
func TestFloorAndDouble(t *testing.T) {
	in := filepath.Join("..", "..", "pcaps", "kgo-group-3brokers.pcap")
	if _, err := os.Stat(in); err != nil {
		t.Skip(err)
	}
	one, err := floor(in, true)
	if err != nil {
		t.Fatal(err)
	}
	if one.packets == 0 || one.tcp != one.packets || one.bytes == 0 || one.streams == 0 {
		t.Fatalf("floor: %+v", one)
	}
	// The stricter floor reassembles the same bytes and reads none of them.
	counted, err := floor(in, false)
	if err != nil {
		t.Fatal(err)
	}
	if counted.bytes != one.bytes || counted.streams != one.streams || counted.sum != 0 {
		t.Errorf("floor -count: %+v; floor: %+v", counted, one)
	}
	dbl := filepath.Join(t.TempDir(), "double.pcap")
	if unmoved, err := doubleCapture(in, dbl); err != nil || unmoved != 0 {
		t.Fatalf("doubleCapture: %d packets not moved, %v", unmoved, err)
	}
	two, err := floor(dbl, true)
	if err != nil {
		t.Fatal(err)
	}
	if two.packets != 2*one.packets || two.bytes != 2*one.bytes || two.sum != 2*one.sum || two.streams != 2*one.streams {
		t.Errorf("floor on the doubled capture: %+v; on the capture: %+v", two, one)
	}
	ci, err := inspectCapture(in)
	if err != nil {
		t.Fatal(err)
	}
	di, err := inspectCapture(dbl)
	if err != nil {
		t.Fatal(err)
	}
	if di.packets != 2*ci.packets || di.duration() <= 2*ci.duration() || !di.first.Equal(ci.first) {
		t.Errorf("doubled capture: %+v; capture: %+v", di, ci)
	}
	// Timestamps never go back.
	src, f, err := openCapture(dbl)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last time.Time
	for {
		_, c, err := src.ZeroCopyReadPacketData()
		if err != nil {
			break
		}
		if c.Timestamp.Before(last) {
			t.Fatalf("timestamp %v after %v", c.Timestamp, last)
		}
		last = c.Timestamp
	}
}

func TestFloorBytes(t *testing.T) {
	n, ok := floorBytes("packets 198  tcp 198  streams 24  reassembled bytes 17066  byte sum 837406")
	if !ok || n != 17066 {
		t.Errorf("floorBytes = %d, %v", n, ok)
	}
	if _, ok := floorBytes("nothing"); ok {
		t.Error("floorBytes found a count in nothing")
	}
}

// TestMoveAddresses checks the incremental checksums against ones computed from scratch.
func TestMoveAddresses(t *testing.T) {
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP,
		SrcIP: net.IPv4(127, 0, 0, 1), DstIP: net.IPv4(127, 0, 0, 1)}
	tcp := &layers.TCP{SrcPort: 40000, DstPort: 9092, Seq: 7, ACK: true, PSH: true, Window: 512}
	build := func() []byte {
		if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
		buf := gopacket.NewSerializeBuffer()
		eth := &layers.Ethernet{EthernetType: layers.EthernetTypeIPv4, SrcMAC: make(net.HardwareAddr, 6), DstMAC: make(net.HardwareAddr, 6)}
		err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true, FixLengths: true},
			eth, ip, tcp, gopacket.Payload("some kafka bytes"))
		if err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	pkt := build()
	if !moveAddresses(pkt, layers.LinkTypeEthernet) {
		t.Fatal("moveAddresses refused an Ethernet IPv4 TCP packet")
	}
	ip.SrcIP, ip.DstIP = net.IPv4(127, 0, 0, 2), net.IPv4(127, 0, 0, 2)
	if want := build(); !bytes.Equal(pkt, want) {
		t.Errorf("moved packet\n%x\nwant\n%x", pkt, want)
	}
	if moveAddresses([]byte{1, 2, 3}, layers.LinkTypeEthernet) {
		t.Error("moveAddresses took a runt")
	}
}
