package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

const (
	net4 = "10.0.0.1->10.0.0.2"
	net6 = "fd00::1->fd00::2"
)

// readFrames writes frames as a pcap file of link type lt and reads it back.
// Only the fields the decoder sets are kept of each segment.
func readFrames(t *testing.T, lt layers.LinkType, rs ...rec) ([]got, []*PacketError, Stats) {
	t.Helper()
	r, _, err := openBytes(t, "frames.pcap", pcapFile(t, lt, false, rs...))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	segs, perrs, err := readAll(t, r)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	for i := range segs {
		if segs[i].LinkType != lt {
			t.Errorf("segment %d: link type %v, want %v", segs[i].Num, segs[i].LinkType, lt)
		}
		segs[i] = got{Num: segs[i].Num, Net: segs[i].Net, Ports: segs[i].Ports, Payload: segs[i].Payload,
			Truncated: segs[i].Truncated, Missing: segs[i].Missing}
	}
	checkStats(t, r.Stats())
	return segs, perrs, r.Stats()
}

func TestLinkTypes(t *testing.T) {
	v4 := tcp4(t, 53422, 9092, "kafka over IPv4")
	v6 := tcp6(t, 53423, 9092, "kafka over IPv6")
	want := []got{
		{Num: 1, Net: net4, Ports: "53422->9092", Payload: "kafka over IPv4"},
		{Num: 2, Net: net6, Ports: "53423->9092", Payload: "kafka over IPv6"},
	}
	le, be := binary.LittleEndian, binary.BigEndian
	tests := []struct {
		name   string
		lt     layers.LinkType
		frames [][]byte
	}{
		{"ethernet", layers.LinkTypeEthernet, [][]byte{ethIP(t, v4), ethIP(t, v6)}},
		{"ethernet 802.1Q", layers.LinkTypeEthernet, [][]byte{
			eth(t, layers.EthernetTypeIPv4, v4, 100), eth(t, layers.EthernetTypeIPv6, v6, 4094)}},
		{"ethernet QinQ 802.1ad", layers.LinkTypeEthernet, [][]byte{
			eth(t, layers.EthernetTypeIPv4, v4, 10, 100), eth(t, layers.EthernetTypeIPv6, v6, 10, 101)}},
		{"ethernet four VLAN tags", layers.LinkTypeEthernet, [][]byte{
			eth(t, layers.EthernetTypeIPv4, v4, 1, 2, 3, 4), eth(t, layers.EthernetTypeIPv6, v6, 1, 2, 3, 4)}},
		{"linux SLL", layers.LinkTypeLinuxSLL, [][]byte{sll(v4), sll(v6)}},
		{"linux SLL2", layers.LinkTypeLinuxSLL2, [][]byte{sll2(v4), sll2(v6)}},
		{"null little-endian (linux AF_INET6)", layers.LinkTypeNull, [][]byte{null(le, 2, v4), null(le, 10, v6)}},
		{"null little-endian (darwin AF_INET6)", layers.LinkTypeNull, [][]byte{null(le, 2, v4), null(le, 30, v6)}},
		{"null big-endian", layers.LinkTypeNull, [][]byte{null(be, 2, v4), null(be, 28, v6)}},
		{"loop", layers.LinkTypeLoop, [][]byte{null(be, 2, v4), null(be, 24, v6)}},
		{"raw 101", layers.LinkTypeRaw, [][]byte{v4, v6}},
		{"raw 12", 12, [][]byte{v4, v6}},
		{"raw 14", 14, [][]byte{v4, v6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			segs, perrs, st := readFrames(t, tt.lt, recs(tt.frames...)...)
			if len(perrs) != 0 {
				t.Fatalf("packet errors: %v", perrs)
			}
			if !reflect.DeepEqual(segs, want) {
				t.Errorf("segments\n got %+v\nwant %+v", segs, want)
			}
			if wantSt := (Stats{Packets: 2, TCP: 2}); st != wantSt {
				t.Errorf("stats %+v, want %+v", st, wantSt)
			}
		})
	}
}

func TestLinkTypeIPv4IPv6(t *testing.T) {
	segs, _, _ := readFrames(t, layers.LinkTypeIPv4, recs(tcp4(t, 1, 2, "four"))...)
	if want := []got{{Num: 1, Net: net4, Ports: "1->2", Payload: "four"}}; !reflect.DeepEqual(segs, want) {
		t.Errorf("link type 228: got %+v, want %+v", segs, want)
	}
	segs, _, _ = readFrames(t, layers.LinkTypeIPv6, recs(tcp6(t, 3, 4, "six"))...)
	if want := []got{{Num: 1, Net: net6, Ports: "3->4", Payload: "six"}}; !reflect.DeepEqual(segs, want) {
		t.Errorf("link type 229: got %+v, want %+v", segs, want)
	}
}

// ipv6 extension headers, each 8 bytes: next header, length 0, then a PadN
// option or the fields of a routing or fragment header.
func ext(next layers.IPProtocol, rest ...byte) []byte {
	return append([]byte{byte(next), 0}, rest...)
}

var padN = []byte{1, 4, 0, 0, 0, 0}

func TestIPLayers(t *testing.T) {
	big := strings.Repeat("k", 1000)
	v4big := tcp4(t, 9092, 53422, big)
	v6big := tcp6(t, 9092, 53422, big)

	fragment4 := tcp4(t, 1, 2, "first fragment")
	fragment4[6] |= 0x20 // more fragments
	later4 := tcp4(t, 1, 2, "later fragment")
	binary.BigEndian.PutUint16(later4[6:], 185) // offset 1480

	withTrailer := append(ethIP(t, tcp4(t, 1, 2, "xyz")), 0xde, 0xad, 0xbe, 0xef)
	withTrailer6 := append(ethIP(t, tcp6(t, 1, 2, "xyz")), 0xde, 0xad, 0xbe, 0xef)

	tests := []struct {
		name   string
		frames []rec
		want   []got
		errs   []string // substrings of the packet errors, in order
		stats  Stats
	}{
		{
			name:   "ethernet padding is not payload",
			frames: recs(ethIP(t, tcp4(t, 1, 2, "ab")), ethIP(t, tcp4(t, 1, 2, ""))),
			want: []got{
				{Num: 1, Net: net4, Ports: "1->2", Payload: "ab"},
				{Num: 2, Net: net4, Ports: "1->2", Payload: ""},
			},
			stats: Stats{Packets: 2, TCP: 2},
		},
		{
			name:   "bytes after the IP packet are trimmed",
			frames: recs(withTrailer, withTrailer6),
			want: []got{
				{Num: 1, Net: net4, Ports: "1->2", Payload: "xyz"},
				{Num: 2, Net: net6, Ports: "1->2", Payload: "xyz"},
			},
			stats: Stats{Packets: 2, TCP: 2},
		},
		{
			name:   "cut by the snap length",
			frames: []rec{cut(100, ethIP(t, v4big)), cut(120, ethIP(t, v6big))},
			want: []got{
				{Num: 1, Net: net4, Ports: "9092->53422", Payload: big[:100-54], Truncated: true, Missing: 1000 - (100 - 54)},
				{Num: 2, Net: net6, Ports: "9092->53422", Payload: big[:120-74], Truncated: true, Missing: 1000 - (120 - 74)},
			},
			stats: Stats{Packets: 2, TCP: 2, Truncated: 2},
		},
		{
			name: "cut inside the TCP, IP and ethernet headers",
			frames: []rec{
				cut(40, ethIP(t, v4big)), cut(60, ethIP(t, v6big)),
				cut(20, ethIP(t, v4big)), cut(10, ethIP(t, v4big)),
				{data: ethIP(t, tcp4(t, 5, 6, "whole"))},
			},
			want: []got{{Num: 5, Net: net4, Ports: "5->6", Payload: "whole"}},
			errs: []string{
				"packet 1: cut by the snap length before the end of the TCP header (1014 bytes of the IP packet missing)",
				"packet 2: cut by the snap length before the end of the TCP header (1014 bytes of the IP packet missing)",
				"packet 3: cut by the snap length before the end of the TCP header",
				"packet 4: cut by the snap length before the end of the TCP header",
			},
			stats: Stats{Packets: 5, TCP: 1, Truncated: 4, Malformed: 4},
		},
		{
			name: "non-TCP packets are skipped but counted",
			frames: recs(arp(t), ethIP(t, udp4(t)), ethIP(t, icmp4(t)), ethIP(t, tcp4(t, 1, 2, "four")),
				eth(t, layers.EthernetType(0x88b5), []byte("local experimental ethertype")), ethIP(t, tcp6(t, 3, 4, "six"))),
			want: []got{
				{Num: 4, Net: net4, Ports: "1->2", Payload: "four"},
				{Num: 6, Net: net6, Ports: "3->4", Payload: "six"},
			},
			stats: Stats{Packets: 6, TCP: 2, Other: 4},
		},
		{
			name:   "IPv4 fragments are counted as other",
			frames: recs(ethIP(t, fragment4), ethIP(t, later4), ethIP(t, tcp4(t, 1, 2, "whole"))),
			want:   []got{{Num: 3, Net: net4, Ports: "1->2", Payload: "whole"}},
			stats:  Stats{Packets: 3, TCP: 1, Other: 2},
		},
		{
			name: "IPv6 extension headers",
			frames: recs(
				ethIP(t, tcp6ext(t, 1, 2, "hop-by-hop, destination", layers.IPProtocolIPv6HopByHop,
					append(ext(layers.IPProtocolIPv6Destination, padN...), ext(layers.IPProtocolTCP, padN...)...))),
				ethIP(t, tcp6ext(t, 1, 2, "routing", layers.IPProtocolIPv6Routing,
					ext(layers.IPProtocolTCP, 4, 0, 0, 0, 0, 0))),
				ethIP(t, tcp6ext(t, 1, 2, "atomic fragment", layers.IPProtocolIPv6Fragment,
					ext(layers.IPProtocolTCP, 0, 0, 0, 0, 0, 42))),
				ethIP(t, tcp6ext(t, 1, 2, "first fragment", layers.IPProtocolIPv6Fragment,
					ext(layers.IPProtocolTCP, 0, 1, 0, 0, 0, 43))),
				ethIP(t, tcp6ext(t, 1, 2, "later fragment", layers.IPProtocolIPv6Fragment,
					ext(layers.IPProtocolTCP, 0xb8, 0, 0, 0, 0, 43))),
			),
			want: []got{
				{Num: 1, Net: net6, Ports: "1->2", Payload: "hop-by-hop, destination"},
				{Num: 2, Net: net6, Ports: "1->2", Payload: "routing"},
				{Num: 3, Net: net6, Ports: "1->2", Payload: "atomic fragment"},
			},
			stats: Stats{Packets: 5, TCP: 3, Other: 2},
		},
		{
			name: "IPv6 extension headers cut by the snap length",
			frames: []rec{cut(14+40+16+20+3, ethIP(t, tcp6ext(t, 1, 2, "hop-by-hop, destination", layers.IPProtocolIPv6HopByHop,
				append(ext(layers.IPProtocolIPv6Destination, padN...), ext(layers.IPProtocolTCP, padN...)...))))},
			want:  []got{{Num: 1, Net: net6, Ports: "1->2", Payload: "hop", Truncated: true, Missing: 20}},
			stats: Stats{Packets: 1, TCP: 1, Truncated: 1},
		},
		{
			name: "malformed packets give packet errors and reading goes on",
			frames: recs(
				func() []byte { p := ethIP(t, tcp4(t, 1, 2, "bad IHL")); p[14] = 0x43; return p }(),
				func() []byte { p := ethIP(t, tcp4(t, 1, 2, "bad data offset")); p[14+20+12] = 0x30; return p }(),
				[]byte("short"),
				ethIP(t, tcp4(t, 7, 8, "good")),
			),
			want: []got{{Num: 4, Net: net4, Ports: "7->8", Payload: "good"}},
			errs: []string{
				"packet 1: cannot decode the layer after Ethernet: Invalid (too small) IP header length (3 < 5)",
				"packet 2: cannot decode the layer after IPv4: Invalid TCP data offset 3 < 5",
				"packet 3: cannot decode Ethernet: Ethernet packet too small",
			},
			stats: Stats{Packets: 4, TCP: 1, Malformed: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			segs, perrs, st := readFrames(t, layers.LinkTypeEthernet, tt.frames...)
			if !reflect.DeepEqual(segs, tt.want) {
				t.Errorf("segments\n got %+v\nwant %+v", segs, tt.want)
			}
			if len(perrs) != len(tt.errs) {
				t.Errorf("packet errors %v, want %d", perrs, len(tt.errs))
			}
			for i, pe := range perrs {
				if i < len(tt.errs) && !strings.Contains(pe.Error(), tt.errs[i]) {
					t.Errorf("packet error %q, want it to contain %q", pe, tt.errs[i])
				}
				if !strings.HasSuffix(pe.File, "frames.pcap") || !strings.HasPrefix(pe.Error(), pe.File+": packet ") {
					t.Errorf("packet error %q does not start with the file name", pe)
				}
			}
			if st != tt.stats {
				t.Errorf("stats %+v, want %+v", st, tt.stats)
			}
		})
	}
}

// TestRawErrors covers the packet errors of link types other than Ethernet.
func TestRawErrors(t *testing.T) {
	tests := []struct {
		lt    layers.LinkType
		frame []byte
		err   string
	}{
		{layers.LinkTypeRaw, []byte{0x50, 1, 2, 3}, "packet 1: raw IP packet with IP version 5"},
		{layers.LinkTypeRaw, []byte{}, "packet 1: empty raw IP packet"},
		{layers.LinkTypeNull, []byte{0xff, 0xff, 0xff, 0xff, 0x45}, "packet 1: cannot decode Loopback"},
		{layers.LinkTypeLinuxSLL, []byte("too short"), "packet 1: cannot decode Linux SLL"},
		{layers.LinkTypeLinuxSLL2, []byte("too short"), "packet 1: cannot decode Linux SLL2"},
	}
	for _, tt := range tests {
		t.Run(tt.err, func(t *testing.T) {
			_, perrs, st := readFrames(t, tt.lt, recs(tt.frame)...)
			if len(perrs) != 1 || !strings.Contains(perrs[0].Error(), tt.err) {
				t.Fatalf("packet errors %v, want one with %q", perrs, tt.err)
			}
			if want := (Stats{Packets: 1, Malformed: 1}); st != want {
				t.Errorf("stats %+v, want %+v", st, want)
			}
		})
	}
}

func TestUnsupportedLinkType(t *testing.T) {
	// A pcap file of a link type that cannot be decoded is refused at once.
	_, path, err := openBytes(t, "wifi.pcap", pcapFile(t, layers.LinkTypeIEEE80211Radio, false, recs([]byte("radiotap"))...))
	if !errors.Is(err, ErrUnsupportedLinkType) || !strings.HasPrefix(err.Error(), path+": link type RadioTap (127)") {
		t.Errorf("Open: %v, want an ErrUnsupportedLinkType naming the file and link type", err)
	}

	// In pcapng only the packets of that interface give errors.
	file := ngFile(t, []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeIEEE80211Radio},
		rec{data: ethIP(t, tcp4(t, 1, 2, "one"))},
		rec{data: []byte("radiotap"), iface: 1},
		rec{data: ethIP(t, tcp4(t, 1, 2, "three"))},
	)
	r, path, err := openBytes(t, "mixed.pcapng", file)
	if err != nil {
		t.Fatal(err)
	}
	segs, perrs, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 2 || segs[0].Num != 1 || segs[1].Num != 3 {
		t.Errorf("segments %+v, want packets 1 and 3", segs)
	}
	if len(perrs) != 1 || perrs[0].Num != 2 || perrs[0].File != path || !errors.Is(perrs[0], ErrUnsupportedLinkType) {
		t.Errorf("packet errors %v, want ErrUnsupportedLinkType for packet 2", perrs)
	}
}

// TestPayloadReuse checks that the Segment, its TCP and its payload are
// replaced by the next packet's, as documented: no allocation per packet.
func TestPayloadReuse(t *testing.T) {
	r, _, err := openBytes(t, "reuse.pcap", pcapFile(t, layers.LinkTypeRaw, false,
		recs(tcp4(t, 1, 2, "first"), tcp6(t, 3, 4, "second"))...))
	if err != nil {
		t.Fatal(err)
	}
	s1, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if s1.Net.String() != net4 {
		t.Errorf("flow %v, want %v", s1.Net, net4)
	}
	s2, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if s1 != s2 || s1.TCP != s2.TCP {
		t.Errorf("segment or TCP layer not reused")
	}
	if s2.Net.String() != net6 {
		t.Errorf("flow %v, want %v", s2.Net, net6)
	}
	if !bytes.Equal(s2.TCP.Payload, []byte("second")) {
		t.Errorf("payload %q", s2.TCP.Payload)
	}
}
