package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// directCases are Ethernet frames around the edges of what ethIPv4TCP decodes itself; direct
// says which it must decode (the others go to the parser).
func directCases(t testing.TB) []struct {
	name   string
	frame  []byte
	direct bool
} {
	plain := ethIP(t, tcp4(t, 53422, 9092, "kafka"))
	edit := func(f func(ip []byte)) []byte {
		p := append([]byte(nil), plain...)
		f(p[14:])
		return p
	}
	withOptions := func() []byte { // IHL 6: one word of options (NOP NOP NOP EOL)
		ip := tcp4(t, 1, 2, "opts")
		out := append(append(append([]byte(nil), ip[:20]...), 1, 1, 1, 0), ip[20:]...)
		out[0] = 0x46
		binary.BigEndian.PutUint16(out[2:], uint16(len(out)))
		return ethIP(t, out)
	}
	tcpOptions := func(opts ...byte) []byte { // opts: a multiple of 4 bytes
		ip := tcp4(t, 1, 2, "ts")
		out := append(append(append([]byte(nil), ip[:40]...), opts...), ip[40:]...)
		out[20+12] = byte((20+len(opts))/4) << 4
		binary.BigEndian.PutUint16(out[2:], uint16(len(out)))
		return ethIP(t, out)
	}
	return []struct {
		name   string
		frame  []byte
		direct bool
	}{
		{"plain", plain, true},
		{"no payload", ethIP(t, tcp4(t, 9092, 53422, "")), true},
		{"TCP options", tcpOptions(1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2), true}, // timestamps, as Linux sends
		// gopacket keeps an MPTCP option's parts behind pointers: two decodes are equal, not identical.
		{"MPTCP option", tcpOptions(append(append([]byte{30, 30, 0x30}, bytes.Repeat([]byte{0x30}, 27)...), 1, 1)...), true},
		{"Ethernet padding", append(ethIP(t, tcp4(t, 1, 2, "ab")), make([]byte, 20)...), true},
		{"trailer", append(append([]byte(nil), plain...), 0xde, 0xad), true},
		{"reserved flag", edit(func(ip []byte) { ip[6] |= 0x80 }), true},
		{"version 6 in an IPv4 ethertype", edit(func(ip []byte) { ip[0] = 0x65 }), true},
		{"IP options", withOptions(), false},
		{"more fragments", edit(func(ip []byte) { ip[6] |= 0x20 }), false},
		{"fragment offset", edit(func(ip []byte) { ip[7] = 1 }), false},
		{"length zero (segmentation offload)", edit(func(ip []byte) { ip[2], ip[3] = 0, 0 }), false},
		{"length under 20", edit(func(ip []byte) { ip[2], ip[3] = 0, 19 }), false},
		{"length past the capture", edit(func(ip []byte) { ip[3] += 9 }), false},
		{"IHL 3", edit(func(ip []byte) { ip[0] = 0x43 }), false},
		{"UDP", ethIP(t, udp4(t)), false},
		{"protocol 6 in a short packet", edit(func(ip []byte) { ip[2], ip[3] = 0, 30 }), false},
		{"TCP data offset 3", edit(func(ip []byte) { ip[20+12] = 0x30 }), false},
		{"TCP data offset past the packet", edit(func(ip []byte) { ip[20+12] = 0xf0 }), false},
		{"IPv6", ethIP(t, tcp6(t, 1, 2, "six")), false},
		{"VLAN", eth(t, layers.EthernetTypeIPv4, tcp4(t, 1, 2, "tagged"), 7), false},
		{"ARP", arp(t), false},
		{"short", plain[:30], false},
	}
}

// TestDirectDecode: what ethIPv4TCP decodes, it decodes as the layer parser does, and it leaves
// every other packet to the parser.
func TestDirectDecode(t *testing.T) {
	for _, c := range directCases(t) {
		t.Run(c.name, func(t *testing.T) {
			var d decoder
			if direct := d.ethIPv4TCP(c.frame) != nil; direct != c.direct {
				t.Errorf("decoded directly: %v, want %v", direct, c.direct)
			}
			if err := sameDecode(c.frame, false); err != nil {
				t.Error(err)
			}
			if err := sameDecode(c.frame, true); err != nil {
				t.Errorf("cut: %v", err)
			}
		})
	}
}

// FuzzDirectDecode: for any Ethernet frames, decoding them one after the other with and
// without ethIPv4TCP gives the same results: whatever the layers kept of the frame before.
func FuzzDirectDecode(f *testing.F) {
	cases := directCases(f)
	for i, c := range cases {
		f.Add(c.frame, cases[(i+1)%len(cases)].frame, false)
	}
	f.Fuzz(func(t *testing.T, first, second []byte, cut bool) {
		var fast, slow decoder
		slow.parserOnly = true
		for _, frame := range [][]byte{first, second, first} {
			if err := sameDecodeWith(&fast, &slow, frame, cut); err != nil {
				t.Error(err)
			}
		}
	})
}

// sameDecode decodes frame with a decoder that may decode it directly and with one that uses
// the parser alone, and says how their results differ.
func sameDecode(frame []byte, cut bool) error {
	var fast, slow decoder
	slow.parserOnly = true
	return sameDecodeWith(&fast, &slow, frame, cut)
}

// sameDecodeWith is sameDecode with the two decoders given.
func sameDecodeWith(fast, slow *decoder, frame []byte, cut bool) error {
	fs, ftr, ferr := fast.decode(frame, layers.LinkTypeEthernet, cut)
	ss, str, serr := slow.decode(frame, layers.LinkTypeEthernet, cut)
	switch {
	case fmt.Sprint(ferr) != fmt.Sprint(serr):
		return fmt.Errorf("error %v, parser's %v", ferr, serr)
	case ftr != str:
		return fmt.Errorf("truncated %v, parser's %v", ftr, str)
	case (fs == nil) != (ss == nil):
		return fmt.Errorf("segment %v, parser's %v", fs != nil, ss != nil)
	case fs == nil:
		return nil
	}
	if f, s := segmentView(fs), segmentView(ss); !reflect.DeepEqual(f, s) {
		return fmt.Errorf("segment\n%+v\nparser's\n%+v", f, s)
	}
	return nil
}

// segmentView is what a Segment says, the TCP layer's unexported ports by its flow. The layer is
// compared as a value, not as printed: printing shows the addresses of its MPTCP options.
func segmentView(s *Segment) map[string]any {
	tcp := *s.TCP
	flow := tcp.TransportFlow()
	tcp.BaseLayer = layers.BaseLayer{}
	return map[string]any{"net": s.Net, "truncated": s.Truncated, "missing": s.Missing,
		"tcp": tcp, "contents": s.TCP.Contents, "payload": s.TCP.Payload,
		"transport": flow.String(), "layer": s.TCP.LayerType()}
}
