package capture

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/kdissect/kdissect/internal/plural"
)

// Link types that hold raw IP on some systems: DLT_RAW is 12 on most BSDs and
// 14 on OpenBSD, and pcap files from those systems carry the DLT value.
const (
	linkTypeRawBSD     layers.LinkType = 12
	linkTypeRawOpenBSD layers.LinkType = 14
)

// supported reports whether packets of link type lt can be decoded.
func supported(lt layers.LinkType) bool {
	switch lt {
	case layers.LinkTypeEthernet,
		layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2,
		layers.LinkTypeNull, layers.LinkTypeLoop,
		layers.LinkTypeRaw, linkTypeRawBSD, linkTypeRawOpenBSD,
		layers.LinkTypeIPv4, layers.LinkTypeIPv6:
		return true
	}
	return false
}

// decoder decodes packets into layer structs that are reused from packet to
// packet. It holds one DecodingLayerParser per first layer type (a pcapng file
// may mix link types), all sharing the same layers.
type decoder struct {
	eth     layers.Ethernet
	dot1q   layers.Dot1Q // 802.1Q and 802.1ad; decoded again for each tag
	sll     layers.LinuxSLL
	sll2    layers.LinuxSLL2
	loop    layers.Loopback // BSD null and OpenBSD loop, either byte order
	ip4     layers.IPv4
	ip6     layers.IPv6 // decodes a hop-by-hop header itself
	ip6ext  layers.IPv6ExtensionSkipper
	ip6frag layers.IPv6Fragment
	tcp     layers.TCP
	seg     Segment // what decode returns, reused as tcp is

	parsers map[gopacket.LayerType]*gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
	// parserOnly turns the direct decoding of the usual packet off (ethIPv4TCP): tests
	// compare the two ways.
	parserOnly bool
}

func (d *decoder) parser(first gopacket.LayerType) *gopacket.DecodingLayerParser {
	if p, ok := d.parsers[first]; ok {
		return p
	}
	// ip6frag comes after ip6ext so that it, not the skipper, decodes
	// fragment headers.
	// The layers are found in a slice indexed by layer type rather than the parser's default
	// map: a lookup for each layer of every packet, on the goroutine that reads the capture.
	var dlc gopacket.DecodingLayerContainer = gopacket.DecodingLayerSparse(nil)
	for _, l := range []gopacket.DecodingLayer{&d.eth, &d.dot1q, &d.sll, &d.sll2, &d.loop,
		&d.ip4, &d.ip6, &d.ip6ext, &d.ip6frag, &d.tcp} {
		dlc = dlc.Put(l)
	}
	p := gopacket.NewDecodingLayerParser(first)
	p.SetDecodingLayerContainer(dlc)
	// Any layer without a decoder here (ARP, UDP, LLC, ...) ends decoding
	// without an error; decode then finds no TCP in d.decoded.
	p.IgnoreUnsupported = true
	if d.parsers == nil {
		d.parsers = make(map[gopacket.LayerType]*gopacket.DecodingLayerParser)
		d.decoded = make([]gopacket.LayerType, 0, 16)
	}
	d.parsers[first] = p
	return p
}

// firstLayer is the layer type a packet of link type lt starts with.
func firstLayer(lt layers.LinkType, data []byte) (gopacket.LayerType, error) {
	switch lt {
	case layers.LinkTypeEthernet:
		return layers.LayerTypeEthernet, nil
	case layers.LinkTypeLinuxSLL:
		return layers.LayerTypeLinuxSLL, nil
	case layers.LinkTypeLinuxSLL2:
		return layers.LayerTypeLinuxSLL2, nil
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		return layers.LayerTypeLoopback, nil
	case layers.LinkTypeIPv4:
		return layers.LayerTypeIPv4, nil
	case layers.LinkTypeIPv6:
		return layers.LayerTypeIPv6, nil
	case layers.LinkTypeRaw, linkTypeRawBSD, linkTypeRawOpenBSD:
		if len(data) == 0 {
			return 0, errors.New("empty raw IP packet")
		}
		switch v := data[0] >> 4; v {
		case 4:
			return layers.LayerTypeIPv4, nil
		case 6:
			return layers.LayerTypeIPv6, nil
		default:
			return 0, fmt.Errorf("raw IP packet with IP version %d", v)
		}
	}
	return 0, fmt.Errorf("link type %s (%d): %w", lt, uint16(lt), ErrUnsupportedLinkType)
}

// decode decodes one packet of link type lt; cut says whether the capture
// holds fewer bytes than the original packet had. It returns a Segment
// (without Num, Info and LinkType) if the packet carries TCP, nil and no error
// if it does not, or an error if it cannot be decoded; truncated says whether
// the packet lacks bytes of its TCP header or payload.
func (d *decoder) decode(data []byte, lt layers.LinkType, cut bool) (seg *Segment, truncated bool, err error) {
	if lt == layers.LinkTypeEthernet && !d.parserOnly {
		if seg := d.ethIPv4TCP(data); seg != nil {
			return seg, false, nil
		}
	}
	first, err := firstLayer(lt, data)
	if err != nil {
		return nil, false, err
	}
	p := d.parser(first)
	err = p.DecodeLayers(data, &d.decoded)

	// The last IP layer decoded gives the flow and tells whether the packet
	// is complete. With IP in IP it is the inner one.
	var (
		net     gopacket.Flow
		missing int
		isTCP   bool
		last    gopacket.LayerType // the last layer decoded
	)
	for _, t := range d.decoded {
		last = t
		switch t {
		case layers.LayerTypeIPv4:
			if d.ip4.Flags&layers.IPv4MoreFragments != 0 || d.ip4.FragOffset != 0 {
				// IP fragments are not reassembled: a Kafka connection
				// on a sane network has none. They count as Other.
				return nil, false, nil
			}
			net = d.ip4.NetworkFlow()
			missing = ip4Missing(&d.ip4)
		case layers.LayerTypeIPv6:
			net = d.ip6.NetworkFlow()
			missing = ip6Missing(&d.ip6)
		case layers.LayerTypeIPv6Fragment:
			if d.ip6frag.FragmentOffset != 0 || d.ip6frag.MoreFragments {
				return nil, false, nil // not reassembled, as for IPv4
			}
		case layers.LayerTypeTCP:
			isTCP = true
		}
	}
	truncated = missing > 0 || p.Truncated

	if err != nil {
		// A cut packet that cannot be decoded is taken to be cut before the
		// end of its TCP header, even when the decoder that failed (the
		// Ethernet one, say) does not say so.
		if truncated || cut {
			if missing > 0 {
				return nil, true, fmt.Errorf("cut by the snap length before the end of the TCP header (%s of the IP packet missing): %v", plural.Count(missing, "byte"), err)
			}
			return nil, true, fmt.Errorf("cut by the snap length before the end of the TCP header: %v", err)
		}
		if len(d.decoded) == 0 {
			return nil, false, fmt.Errorf("cannot decode %s: %v", first, err)
		}
		return nil, false, fmt.Errorf("cannot decode the layer after %s: %v", last, err)
	}
	if !isTCP {
		return nil, false, nil
	}
	d.seg = Segment{Net: net, TCP: &d.tcp, Truncated: truncated, Missing: missing}
	return &d.seg, truncated, nil
}

// ethIPv4TCP decodes the packet that most captures are made of, TCP in IPv4 without options in
// Ethernet, without the layer parser, whose dispatch from layer to layer cost more than the
// decoding of the three headers. It returns nil for any other packet, and for one of these that
// is cut short, a fragment or not decodable: the parser decodes those, and says what is wrong.
// What it returns is what the parser makes of the packet (TestDirectDecode, FuzzDirectDecode).
func (d *decoder) ethIPv4TCP(data []byte) *Segment {
	const (
		ethLen, ipLen = 14, 20
		ihlPlain      = ipLen / 4 // the header length, in words, of an IPv4 header without options
		fragmentBits  = 0x3fff    // of the flags and fragment offset: More Fragments, the offset
	)
	if len(data) < ethLen+ipLen || binary.BigEndian.Uint16(data[12:]) != uint16(layers.EthernetTypeIPv4) {
		return nil
	}
	ip := data[ethLen:]
	n := int(binary.BigEndian.Uint16(ip[2:])) // the IP packet's length: what follows is padding
	// No options, a length that the capture holds (0 is segmentation offload), no fragment,
	// TCP.
	if ip[0]&0x0f != ihlPlain || n < ipLen || n > len(ip) || binary.BigEndian.Uint16(ip[6:])&fragmentBits != 0 ||
		layers.IPProtocol(ip[9]) != layers.IPProtocolTCP {
		return nil
	}
	if d.tcp.DecodeFromBytes(ip[ipLen:n], gopacket.NilDecodeFeedback) != nil {
		return nil
	}
	d.seg = Segment{Net: gopacket.NewFlow(layers.EndpointIPv4, ip[12:16], ip[16:20]), TCP: &d.tcp}
	return &d.seg
}

// ip4Missing is how many bytes of ip the IP total length claims beyond those
// captured. gopacket has already trimmed the payload to the total length.
func ip4Missing(ip *layers.IPv4) int {
	if ip.Length == 0 { // TCP segmentation offload: the length is what was captured
		return 0
	}
	return max(0, int(ip.Length)-len(ip.Contents)-len(ip.Payload))
}

// ip6Missing is ip4Missing for IPv6, whose payload length counts the
// extension headers, of which gopacket strips a hop-by-hop header.
func ip6Missing(ip *layers.IPv6) int {
	if ip.Length == 0 { // a jumbogram: gopacket sets Truncated if it is cut
		return 0
	}
	have := len(ip.Payload)
	if ip.HopByHop != nil {
		have += ip.HopByHop.ActualLength
	}
	return max(0, int(ip.Length)-have)
}
