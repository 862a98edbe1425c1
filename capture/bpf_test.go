package capture

import (
	"net"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"
)

// bpfPacket describes a test packet for the kernel filter.
type bpfPacket struct {
	v6               bool
	vlanTags         int
	udp              bool
	fragOffset       uint16 // IPv4 fragment offset, in 8-byte units
	ipOptions        bool   // IPv4 header longer than 20 bytes
	srcPort, dstPort uint16
}

// build serialises p with gopacket, from the Ethernet header (link
// filterEthernet) or from the IP header (filterIP).
func (p bpfPacket) build(t *testing.T, link filterLink) []byte {
	t.Helper()
	var ls []gopacket.SerializableLayer
	etherType := layers.EthernetTypeIPv4
	if p.v6 {
		etherType = layers.EthernetTypeIPv6
	}
	if link == filterEthernet {
		eth := &layers.Ethernet{
			SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
			EthernetType: etherType,
		}
		ls = append(ls, eth)
		if p.vlanTags > 0 {
			eth.EthernetType = layers.EthernetTypeQinQ
			if p.vlanTags == 1 {
				eth.EthernetType = layers.EthernetTypeDot1Q
			}
			for i := range p.vlanTags {
				next := layers.EthernetTypeDot1Q
				if i == p.vlanTags-1 {
					next = etherType
				}
				ls = append(ls, &layers.Dot1Q{VLANIdentifier: uint16(100 + i), Type: next})
			}
		}
	}
	var netLayer gopacket.NetworkLayer
	if p.v6 {
		ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP,
			SrcIP: net.ParseIP("fd00::1"), DstIP: net.ParseIP("fd00::2")}
		if p.udp {
			ip.NextHeader = layers.IPProtocolUDP
		}
		netLayer = ip
		ls = append(ls, ip)
	} else {
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, FragOffset: p.fragOffset,
			SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
		if p.udp {
			ip.Protocol = layers.IPProtocolUDP
		}
		if p.ipOptions {
			// Two NOPs and an end of list: a 24-byte header.
			ip.Options = []layers.IPv4Option{{OptionType: 1}, {OptionType: 1}, {OptionType: 0}}
		}
		netLayer = ip
		ls = append(ls, ip)
	}
	if p.udp {
		udp := &layers.UDP{SrcPort: layers.UDPPort(p.srcPort), DstPort: layers.UDPPort(p.dstPort)}
		if err := udp.SetNetworkLayerForChecksum(netLayer); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, udp)
	} else {
		tcp := &layers.TCP{SrcPort: layers.TCPPort(p.srcPort), DstPort: layers.TCPPort(p.dstPort),
			Seq: 1000, Ack: 2000, ACK: true, PSH: true, Window: 65535}
		if err := tcp.SetNetworkLayerForChecksum(netLayer); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, tcp)
	}
	ls = append(ls, gopacket.Payload("\x00\x00\x00\x0cKafka frame!"))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// runFilter runs prog on pkt in x/net/bpf's VM. The VM knows no kernel
// extensions but the packet length, so loads of the packet type and the
// interface index are replaced by constants: what the kernel would load.
func runFilter(t *testing.T, prog []bpf.Instruction, pkt []byte, pktType, ifindex uint32) int {
	t.Helper()
	prog = append([]bpf.Instruction(nil), prog...)
	for i, in := range prog {
		if ext, ok := in.(bpf.LoadExtension); ok {
			switch ext.Num {
			case bpf.ExtType:
				prog[i] = bpf.LoadConstant{Dst: bpf.RegA, Val: pktType}
			case bpf.ExtInterfaceIndex:
				prog[i] = bpf.LoadConstant{Dst: bpf.RegA, Val: ifindex}
			default:
				t.Fatalf("instruction %d: unexpected extension %v", i, ext.Num)
			}
		}
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	n, err := vm.Run(pkt)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

const packetHost = 0 // PACKET_HOST: a packet for this host

func TestBPFPorts(t *testing.T) {
	ports := []PortRange{{9092, 9092}, {19092, 19094}}
	cases := []struct {
		name string
		p    bpfPacket
		want bool
	}{
		{"v4 dst port", bpfPacket{srcPort: 50000, dstPort: 9092}, true},
		{"v4 src port", bpfPacket{srcPort: 9092, dstPort: 50000}, true},
		{"v4 other ports", bpfPacket{srcPort: 50000, dstPort: 9093}, false},
		{"v4 port below range", bpfPacket{srcPort: 50000, dstPort: 19091}, false},
		{"v4 range low end", bpfPacket{srcPort: 50000, dstPort: 19092}, true},
		{"v4 range middle", bpfPacket{srcPort: 19093, dstPort: 50000}, true},
		{"v4 range high end", bpfPacket{srcPort: 50000, dstPort: 19094}, true},
		{"v4 port above range", bpfPacket{srcPort: 19095, dstPort: 50000}, false},
		{"v4 options", bpfPacket{ipOptions: true, srcPort: 50000, dstPort: 9092}, true},
		{"v4 options other ports", bpfPacket{ipOptions: true, srcPort: 50000, dstPort: 80}, false},
		{"v4 udp", bpfPacket{udp: true, srcPort: 50000, dstPort: 9092}, false},
		{"v4 later fragment", bpfPacket{fragOffset: 10, srcPort: 50000, dstPort: 9092}, false},
		{"v6 dst port", bpfPacket{v6: true, srcPort: 50000, dstPort: 9092}, true},
		{"v6 src range", bpfPacket{v6: true, srcPort: 19094, dstPort: 50000}, true},
		{"v6 other ports", bpfPacket{v6: true, srcPort: 50000, dstPort: 443}, false},
		{"v6 udp", bpfPacket{v6: true, udp: true, srcPort: 50000, dstPort: 9092}, false},
		{"v4 vlan", bpfPacket{vlanTags: 1, srcPort: 50000, dstPort: 9092}, true},
		{"v4 vlan other ports", bpfPacket{vlanTags: 1, srcPort: 50000, dstPort: 22}, false},
		{"v6 vlan", bpfPacket{v6: true, vlanTags: 1, srcPort: 9092, dstPort: 50000}, true},
		{"v4 qinq", bpfPacket{vlanTags: 2, srcPort: 50000, dstPort: 19093}, true},
		{"v6 qinq other ports", bpfPacket{v6: true, vlanTags: 2, srcPort: 50000, dstPort: 22}, false},
	}
	for _, link := range []filterLink{filterEthernet, filterIP} {
		prog, err := filterSpec{link: link, ports: ports, snaplen: MaxCaptureLength}.build()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bpf.Assemble(prog); err != nil {
			t.Fatalf("assemble: %v", err)
		}
		for _, c := range cases {
			if link == filterIP && c.p.vlanTags > 0 {
				continue // a cooked packet has no link header to tag
			}
			name := c.name
			if link == filterIP {
				name = "raw " + name
			}
			t.Run(name, func(t *testing.T) {
				n := runFilter(t, prog, c.p.build(t, link), packetHost, 1)
				if got := n > 0; got != c.want {
					t.Errorf("accepted = %v (returned %d), want %v", got, n, c.want)
				}
				if n > 0 && n != MaxCaptureLength {
					t.Errorf("returned %d, want the snap length %d", n, MaxCaptureLength)
				}
			})
		}
	}
}

func TestBPFNonIP(t *testing.T) {
	arp := &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
		HwAddressSize: 6, ProtAddressSize: 4, Operation: 1,
		SourceHwAddress: []byte{2, 0, 0, 0, 0, 1}, SourceProtAddress: []byte{10, 0, 0, 1},
		DstHwAddress: []byte{0, 0, 0, 0, 0, 0}, DstProtAddress: []byte{10, 0, 0, 2}}
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{255, 255, 255, 255, 255, 255},
		EthernetType: layers.EthernetTypeARP}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, arp); err != nil {
		t.Fatal(err)
	}
	for _, link := range []filterLink{filterEthernet, filterIP} {
		prog, err := filterSpec{link: link, ports: []PortRange{{9092, 9092}}, snaplen: MaxCaptureLength}.build()
		if err != nil {
			t.Fatal(err)
		}
		pkt := buf.Bytes()
		if link == filterIP {
			pkt = pkt[14:]
		}
		if n := runFilter(t, prog, pkt, packetHost, 1); n != 0 {
			t.Errorf("link %d: ARP accepted", link)
		}
		// Too short to hold an IP header: the VM, like the kernel, drops it.
		if n := runFilter(t, prog, []byte{0x45}, packetHost, 1); n != 0 {
			t.Errorf("link %d: one-byte packet accepted", link)
		}
	}
}

func TestBPFAllTCP(t *testing.T) {
	prog, err := filterSpec{link: filterEthernet, snaplen: MaxCaptureLength}.build()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []bpfPacket{{srcPort: 1, dstPort: 2}, {v6: true, srcPort: 443, dstPort: 50000}} {
		if n := runFilter(t, prog, p.build(t, filterEthernet), packetHost, 1); n == 0 {
			t.Errorf("%+v dropped by a filter without ports", p)
		}
	}
	if n := runFilter(t, prog, bpfPacket{udp: true, srcPort: 1, dstPort: 2}.build(t, filterEthernet), packetHost, 1); n != 0 {
		t.Error("UDP kept by the TCP filter")
	}
}

// TestBPFLoopbackOutgoing: on loopback the kernel shows each packet twice;
// the filter keeps the received copy only. With "any", only the sent copies
// on the loopback interfaces are dropped.
func TestBPFLoopbackOutgoing(t *testing.T) {
	pkt := bpfPacket{srcPort: 50000, dstPort: 9092}
	ports := []PortRange{{9092, 9092}}

	lo, err := filterSpec{link: filterEthernet, ports: ports, dropOutgoing: true, snaplen: MaxCaptureLength}.build()
	if err != nil {
		t.Fatal(err)
	}
	eth := pkt.build(t, filterEthernet)
	if n := runFilter(t, lo, eth, packetHost, 1); n == 0 {
		t.Error("loopback: received copy dropped")
	}
	if n := runFilter(t, lo, eth, packetOutgoing, 1); n != 0 {
		t.Error("loopback: sent copy kept")
	}
	other := bpfPacket{srcPort: 50000, dstPort: 80}.build(t, filterEthernet)
	if n := runFilter(t, lo, other, packetHost, 1); n != 0 {
		t.Error("loopback: other port kept")
	}

	const loIndex, ethIndex = 1, 2
	anyProg, err := filterSpec{link: filterIP, ports: ports, dropOutgoing: true, outIfindex: []uint32{loIndex}, snaplen: MaxCaptureLength}.build()
	if err != nil {
		t.Fatal(err)
	}
	raw := pkt.build(t, filterIP)
	for _, c := range []struct {
		pktType, ifindex uint32
		want             bool
	}{
		{packetHost, loIndex, true},
		{packetOutgoing, loIndex, false},
		{packetHost, ethIndex, true},
		{packetOutgoing, ethIndex, true},
	} {
		if got := runFilter(t, anyProg, raw, c.pktType, c.ifindex) > 0; got != c.want {
			t.Errorf("any: packet type %d on interface %d: accepted = %v, want %v", c.pktType, c.ifindex, got, c.want)
		}
	}
}

// TestBPFManyPorts: long port lists still assemble (far jumps), and the
// kernel's instruction limit is reported.
func TestBPFManyPorts(t *testing.T) {
	var ports []PortRange
	for p := uint16(10000); p < 10600; p += 2 {
		ports = append(ports, PortRange{p, p})
	}
	prog, err := filterSpec{link: filterEthernet, ports: ports, snaplen: MaxCaptureLength}.build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bpf.Assemble(prog); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		port uint16
		want bool
	}{{10000, true}, {10001, false}, {10598, true}, {10600, false}} {
		if got := runFilter(t, prog, bpfPacket{srcPort: 50000, dstPort: c.port}.build(t, filterEthernet), packetHost, 1) > 0; got != c.want {
			t.Errorf("port %d: accepted = %v, want %v", c.port, got, c.want)
		}
	}

	for p := uint16(20000); p < 22000; p += 2 {
		ports = append(ports, PortRange{p, p})
	}
	if _, err := (filterSpec{link: filterEthernet, ports: ports}).build(); err == nil || !strings.Contains(err.Error(), "kernel") {
		t.Errorf("%d ports: err = %v, want the kernel's limit", len(ports), err)
	}
}

func TestBPFFilterString(t *testing.T) {
	for _, c := range []struct {
		ports []PortRange
		want  string
	}{
		{nil, "tcp"},
		{[]PortRange{{9092, 9092}}, "tcp port 9092"},
		{[]PortRange{{9092, 9092}, {9093, 9095}}, "tcp and (port 9092 or portrange 9093-9095)"},
	} {
		if got := (filterSpec{ports: c.ports}).String(); got != c.want {
			t.Errorf("%v: %q, want %q", c.ports, got, c.want)
		}
	}
}
