package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/reassembly"
)

// The floor program: what any dissector built on gopacket pays before it does Kafka work.
// It reads the capture with pcapgo (zero-copy), decodes the layers with a
// DecodingLayerParser, reassembles every TCP stream with gopacket/reassembly (flushing as
// kdissect does) and sums every reassembled byte so that none of them goes untouched.
// With -count it only counts the reassembled bytes (Lengths, no Fetch): a stricter floor, the
// cost of reassembly alone, which the cost of reading big messages is measured against.

func floorMain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kbench floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	count := fs.Bool("count", false, "count the reassembled bytes without reading them (the stricter floor)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: kbench floor [-count] FILE")
		return errUsage
	}
	st, err := floor(fs.Arg(0), !*count)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "packets %d  tcp %d  streams %d  reassembled bytes %d  byte sum %d\n",
		st.packets, st.tcp, st.streams, st.bytes, st.sum)
	return nil
}

type floorStats struct {
	packets, tcp, streams, bytes int64
	sum                          uint64
}

// floor runs the floor program on a capture; read sums the reassembled bytes, otherwise they
// are only counted (byte sum 0).
func floor(name string, read bool) (*floorStats, error) {
	src, f, err := openCapture(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	var (
		eth     layers.Ethernet
		loop    layers.Loopback
		sll     layers.LinuxSLL
		dot1q   layers.Dot1Q
		ip4     layers.IPv4
		ip6     layers.IPv6
		tcp     layers.TCP
		decoded = make([]gopacket.LayerType, 0, 8)
	)
	var first gopacket.LayerType
	switch lt := src.LinkType(); lt {
	case layers.LinkTypeEthernet:
		first = layers.LayerTypeEthernet
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		first = layers.LayerTypeLoopback
	case layers.LinkTypeLinuxSLL:
		first = layers.LayerTypeLinuxSLL
	case layers.LinkTypeRaw, layers.LinkTypeIPv4:
		first = layers.LayerTypeIPv4
	case layers.LinkTypeIPv6:
		first = layers.LayerTypeIPv6
	default:
		return nil, fmt.Errorf("%s: link type %v is not one the floor program reads", name, lt)
	}
	parser := gopacket.NewDecodingLayerParser(first, &eth, &loop, &sll, &dot1q, &ip4, &ip6, &tcp)
	parser.IgnoreUnsupported = true

	st := &floorStats{}
	asm := reassembly.NewAssembler(reassembly.NewStreamPool(&floorFactory{st: st, read: read}))
	var lastFlush time.Time
	for {
		data, ci, err := src.ZeroCopyReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: after packet %d: %w", name, st.packets, err)
		}
		st.packets++
		if err := parser.DecodeLayers(data, &decoded); err != nil {
			continue
		}
		var netFlow gopacket.Flow
		isTCP := false
		for _, t := range decoded {
			switch t {
			case layers.LayerTypeIPv4:
				netFlow = ip4.NetworkFlow()
			case layers.LayerTypeIPv6:
				netFlow = ip6.NetworkFlow()
			case layers.LayerTypeTCP:
				isTCP = true
			}
		}
		if !isTCP {
			continue
		}
		st.tcp++
		asm.AssembleWithContext(netFlow, &tcp, &floorContext{ci: ci})
		if lastFlush.IsZero() {
			lastFlush = ci.Timestamp
		}
		if ci.Timestamp.Sub(lastFlush) >= time.Second {
			lastFlush = ci.Timestamp
			asm.FlushWithOptions(reassembly.FlushOptions{T: ci.Timestamp.Add(-3 * time.Second), TC: ci.Timestamp.Add(-10 * time.Minute)})
		}
	}
	asm.FlushAll()
	return st, nil
}

type floorContext struct{ ci gopacket.CaptureInfo }

func (c *floorContext) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

type floorFactory struct {
	st   *floorStats
	read bool
}

func (f *floorFactory) New(_, _ gopacket.Flow, _ *layers.TCP, _ reassembly.AssemblerContext) reassembly.Stream {
	f.st.streams++
	return &floorStream{st: f.st, read: f.read}
}

type floorStream struct {
	st   *floorStats
	read bool
}

func (s *floorStream) Accept(_ *layers.TCP, _ gopacket.CaptureInfo, _ reassembly.TCPFlowDirection, _ reassembly.Sequence, start *bool, _ reassembly.AssemblerContext) bool {
	*start = true // streams whose SYN was not captured too, as kdissect
	return true
}

func (s *floorStream) ReassembledSG(sg reassembly.ScatterGather, _ reassembly.AssemblerContext) {
	n, _ := sg.Lengths()
	if n == 0 {
		return
	}
	s.st.bytes += int64(n)
	if !s.read {
		return
	}
	var sum uint64
	for _, b := range sg.Fetch(n) {
		sum += uint64(b)
	}
	s.st.sum += sum
}

func (s *floorStream) ReassemblyComplete(_ reassembly.AssemblerContext) bool { return true }
