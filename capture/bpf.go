package capture

import (
	"fmt"
	"strings"

	"golang.org/x/net/bpf"
)

// PortRange is an inclusive range of TCP ports; a single port has Lo == Hi.
type PortRange struct{ Lo, Hi uint16 }

func (r PortRange) String() string {
	if r.Lo == r.Hi {
		return fmt.Sprintf("port %d", r.Lo)
	}
	return fmt.Sprintf("portrange %d-%d", r.Lo, r.Hi)
}

// filterLink says what a packet handed to the kernel filter starts with.
type filterLink uint8

const (
	// filterEthernet: an Ethernet header, then up to two 802.1Q/802.1ad tags
	// (the kernel usually strips the first tag before the filter runs).
	filterEthernet filterLink = iota
	// filterIP: the IPv4 or IPv6 header (a cooked SOCK_DGRAM socket, or a
	// layer-3 device such as a tun or WireGuard interface).
	filterIP
)

// Linux packet types (skb->pkt_type, sll_pkttype).
const packetOutgoing = 4 // PACKET_OUTGOING: a packet the host sends

// maxFilterInstructions is the kernel's BPF_MAXINSNS.
const maxFilterInstructions = 4096

// filterSpec describes the kernel filter of a live capture:
// "tcp and (port P or portrange A-B ...)" over IPv4 and IPv6.
type filterSpec struct {
	link  filterLink
	ports []PortRange // none: every TCP segment
	// dropOutgoing drops the copies of the packets the host sends, as seen
	// on loopback, where every packet is seen twice: once sent, once
	// received. With outIfindex it drops only those sent on these
	// interfaces (the loopback ones, when capturing on every interface).
	dropOutgoing bool
	outIfindex   []uint32
	snaplen      uint32
}

// String gives the filter in tcpdump's syntax, for people and for the
// if_filter option of a pcapng file.
func (s filterSpec) String() string {
	if len(s.ports) == 0 {
		return "tcp"
	}
	parts := make([]string, len(s.ports))
	for i, r := range s.ports {
		parts[i] = r.String()
	}
	if len(parts) == 1 {
		return "tcp " + parts[0]
	}
	return "tcp and (" + strings.Join(parts, " or ") + ")"
}

// build assembles the classic BPF program for s. The program accepts a
// packet by returning snaplen and drops it by returning 0. IPv4 fragments
// after the first carry no TCP header and are dropped; IPv6 packets are
// accepted only when TCP is the first next header (no extension headers),
// as tcpdump's "tcp port" does for most of them.
func (s filterSpec) build() ([]bpf.Instruction, error) {
	var p program
	if s.dropOutgoing {
		s.outgoing(&p)
	}
	p.label("link")
	ipOffsets, err := s.linkLayer(&p)
	if err != nil {
		return nil, err
	}
	ipHeaders(&p, ipOffsets)
	p.label("drop")
	p.add(bpf.RetConstant{Val: 0})
	s.portRanges(&p)
	p.label("accept")
	p.add(bpf.RetConstant{Val: s.snaplen})

	ins, err := p.resolve()
	if err != nil {
		return nil, err
	}
	if len(ins) > maxFilterInstructions {
		return nil, fmt.Errorf("the filter for %d port ranges takes %d instructions, more than the kernel's %d", len(s.ports), len(ins), maxFilterInstructions)
	}
	return ins, nil
}

// outgoing drops the packets the host sends (on the interfaces of s.outIfindex, if any); the
// others go on to "link".
func (s filterSpec) outgoing(p *program) {
	p.add(bpf.LoadExtension{Num: bpf.ExtType})
	p.jumpIf(bpf.JumpEqual, packetOutgoing, "outgoing", "link")
	p.label("outgoing")
	if len(s.outIfindex) > 0 {
		p.add(bpf.LoadExtension{Num: bpf.ExtInterfaceIndex})
		for _, ix := range s.outIfindex {
			p.jumpIf(bpf.JumpEqual, ix, "drop-outgoing", "")
		}
		p.jump("link")
	}
	p.label("drop-outgoing")
	p.add(bpf.RetConstant{Val: 0})
}

// linkLayer goes past the link layer to "ip4-OFF" or "ip6-OFF", or to "drop"; it returns the
// offsets OFF at which each link layer leads to IPv4 and IPv6 headers.
func (s filterSpec) linkLayer(p *program) ([]uint32, error) {
	var ipOffsets []uint32
	switch s.link {
	case filterEthernet:
		const (
			etherIPv4 = 0x0800
			etherIPv6 = 0x86dd
			etherVLAN = 0x8100
			etherQinQ = 0x88a8
		)
		for tags := uint32(0); tags <= 2; tags++ {
			off := 14 + 4*tags
			p.label(fmt.Sprintf("ether-%d", tags))
			p.add(bpf.LoadAbsolute{Off: off - 2, Size: 2}) // EtherType
			p.jumpIf(bpf.JumpEqual, etherIPv4, fmt.Sprintf("ip4-%d", off), "")
			p.jumpIf(bpf.JumpEqual, etherIPv6, fmt.Sprintf("ip6-%d", off), "")
			if tags < 2 {
				next := fmt.Sprintf("ether-%d", tags+1)
				p.jumpIf(bpf.JumpEqual, etherVLAN, next, "")
				p.jumpIf(bpf.JumpEqual, etherQinQ, next, "")
			}
			p.jump("drop")
			ipOffsets = append(ipOffsets, off)
		}
	case filterIP:
		p.add(bpf.LoadAbsolute{Off: 0, Size: 1})
		p.add(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf0}) // IP version
		p.jumpIf(bpf.JumpEqual, 0x40, "ip4-0", "")
		p.jumpIf(bpf.JumpEqual, 0x60, "ip6-0", "")
		p.jump("drop")
		ipOffsets = append(ipOffsets, 0)
	default:
		return nil, fmt.Errorf("unknown link %d", s.link)
	}
	return ipOffsets, nil
}

// ipHeaders checks each IP header, at each of the offsets, for TCP and leaves the offset of
// the TCP header in X, going on to "ports"; anything else goes to "drop".
func ipHeaders(p *program, offsets []uint32) {
	const protoTCP = 6
	for _, off := range offsets {
		p.label(fmt.Sprintf("ip4-%d", off))
		p.add(bpf.LoadAbsolute{Off: off + 9, Size: 1}) // protocol
		p.jumpIf(bpf.JumpNotEqual, protoTCP, "drop", "")
		p.add(bpf.LoadAbsolute{Off: off + 6, Size: 2}) // flags and fragment offset
		p.jumpIf(bpf.JumpBitsSet, 0x1fff, "drop", "")
		p.add(bpf.LoadMemShift{Off: off}) // X = 4 * IHL
		if off > 0 {
			p.add(bpf.TXA{})
			p.add(bpf.ALUOpConstant{Op: bpf.ALUOpAdd, Val: off})
			p.add(bpf.TAX{})
		}
		p.jump("ports")

		p.label(fmt.Sprintf("ip6-%d", off))
		p.add(bpf.LoadAbsolute{Off: off + 6, Size: 1}) // next header
		p.jumpIf(bpf.JumpNotEqual, protoTCP, "drop", "")
		p.add(bpf.LoadConstant{Dst: bpf.RegX, Val: off + 40})
		p.jump("ports")
	}
}

// portRanges, at "ports", checks the source port, then the destination port, against every
// range, going on to "accept" at the first in one (at once when there are no ranges).
func (s filterSpec) portRanges(p *program) {
	p.label("ports")
	if len(s.ports) == 0 {
		return
	}
	for i, field := range []uint32{0, 2} {
		p.add(bpf.LoadIndirect{Off: field, Size: 2})
		for j, r := range s.ports {
			next := fmt.Sprintf("range-%d-%d", i, j)
			if r.Lo == r.Hi {
				p.jumpIf(bpf.JumpNotEqual, uint32(r.Lo), next, "")
			} else {
				p.jumpIf(bpf.JumpLessThan, uint32(r.Lo), next, "")
				p.jumpIf(bpf.JumpGreaterThan, uint32(r.Hi), next, "")
			}
			p.jump("accept")
			p.label(next)
		}
	}
	p.add(bpf.RetConstant{Val: 0})
}

// program is a classic BPF program under construction, with jumps to named
// labels that resolve turns into instruction counts.
type program struct {
	ins    []bpf.Instruction
	labels map[string]int
	jumps  []pendingJump
}

type pendingJump struct {
	at          int
	true, false string // "" is the next instruction
}

func (p *program) add(in bpf.Instruction) { p.ins = append(p.ins, in) }

func (p *program) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.ins)
}

// jumpIf jumps to label t if A cond val holds, else to label f.
func (p *program) jumpIf(cond bpf.JumpTest, val uint32, t, f string) {
	p.jumps = append(p.jumps, pendingJump{at: len(p.ins), true: t, false: f})
	p.add(bpf.JumpIf{Cond: cond, Val: val})
}

// jump jumps to label t, however far.
func (p *program) jump(t string) {
	p.jumps = append(p.jumps, pendingJump{at: len(p.ins), true: t})
	p.add(bpf.Jump{})
}

func (p *program) resolve() ([]bpf.Instruction, error) {
	skip := func(at int, name string) (uint32, error) {
		if name == "" {
			return 0, nil
		}
		to, ok := p.labels[name]
		if !ok {
			return 0, fmt.Errorf("bpf: no label %q", name)
		}
		if to <= at {
			return 0, fmt.Errorf("bpf: backward jump to %q", name)
		}
		return uint32(to - at - 1), nil
	}
	for _, j := range p.jumps {
		t, err := skip(j.at, j.true)
		if err != nil {
			return nil, err
		}
		switch in := p.ins[j.at].(type) {
		case bpf.Jump:
			in.Skip = t
			p.ins[j.at] = in
		case bpf.JumpIf:
			f, err := skip(j.at, j.false)
			if err != nil {
				return nil, err
			}
			if t > 255 || f > 255 {
				return nil, fmt.Errorf("bpf: conditional jump of %d instructions", max(t, f))
			}
			in.SkipTrue, in.SkipFalse = uint8(t), uint8(f)
			p.ins[j.at] = in
		}
	}
	return p.ins, nil
}
