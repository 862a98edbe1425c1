package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Test packets are built with gopacket's serialization, and files with
// pcapgo's writers where they can write the format (pcapgo writes only
// little-endian files and pcapng interfaces with nanosecond timestamps; the
// other variants are written by hand below).

var (
	macA = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x0a}
	macB = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x0b}
	ts0  = time.Date(2026, 11, 29, 10, 0, 1, 234567891, time.UTC)
)

func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		t.Fatalf("serialize: %v", err)
	}
	return bytes.Clone(buf.Bytes())
}

func ip4(s string) net.IP { return net.ParseIP(s).To4() }
func ip6(s string) net.IP { return net.ParseIP(s).To16() }

func tcpLayer(sport, dport uint16) *layers.TCP {
	return &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport),
		Seq: 1000, Ack: 2000, ACK: true, PSH: true, Window: 65535}
}

// tcp4 is an IPv4 packet from 10.0.0.1 to 10.0.0.2 carrying TCP.
func tcp4(t testing.TB, sport, dport uint16, payload string) []byte {
	ip := &layers.IPv4{Version: 4, TTL: 64, Id: 7, Flags: layers.IPv4DontFragment,
		Protocol: layers.IPProtocolTCP, SrcIP: ip4("10.0.0.1"), DstIP: ip4("10.0.0.2")}
	tcp := tcpLayer(sport, dport)
	tcp.SetNetworkLayerForChecksum(ip)
	return serialize(t, ip, tcp, gopacket.Payload(payload))
}

// tcp6ext is an IPv6 packet from fd00::1 to fd00::2 carrying TCP after the
// given extension header bytes, whose first next-header field is next.
func tcp6ext(t testing.TB, sport, dport uint16, payload string, next layers.IPProtocol, ext []byte) []byte {
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP,
		SrcIP: ip6("fd00::1"), DstIP: ip6("fd00::2")}
	tcp := tcpLayer(sport, dport)
	tcp.SetNetworkLayerForChecksum(ip)
	seg := serialize(t, tcp, gopacket.Payload(payload))
	ip.NextHeader = next
	return serialize(t, ip, gopacket.Payload(append(bytes.Clone(ext), seg...)))
}

// tcp6 is tcp6ext without extension headers.
func tcp6(t testing.TB, sport, dport uint16, payload string) []byte {
	return tcp6ext(t, sport, dport, payload, layers.IPProtocolTCP, nil)
}

func udp4(t testing.TB) []byte {
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: ip4("10.0.0.1"), DstIP: ip4("10.0.0.53")}
	udp := &layers.UDP{SrcPort: 5353, DstPort: 53}
	udp.SetNetworkLayerForChecksum(ip)
	return serialize(t, ip, udp, gopacket.Payload("dns?"))
}

func icmp4(t testing.TB) []byte {
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolICMPv4,
		SrcIP: ip4("10.0.0.1"), DstIP: ip4("10.0.0.2")}
	return serialize(t, ip, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0)}, gopacket.Payload("ping"))
}

// eth wraps an IP (or other) packet in Ethernet, with one 802.1Q tag per
// VLAN id; with two or more tags the outer one is an 802.1ad (QinQ) tag.
func eth(t testing.TB, typ layers.EthernetType, payload []byte, vlans ...uint16) []byte {
	ls := []gopacket.SerializableLayer{&layers.Ethernet{SrcMAC: macA, DstMAC: macB}}
	for i, id := range vlans {
		tpid := layers.EthernetTypeDot1Q
		if i == 0 && len(vlans) > 1 {
			tpid = layers.EthernetTypeQinQ
		}
		setNext(ls[len(ls)-1], tpid)
		ls = append(ls, &layers.Dot1Q{VLANIdentifier: id})
	}
	setNext(ls[len(ls)-1], typ)
	ls = append(ls, gopacket.Payload(payload))
	return serialize(t, ls...)
}

func setNext(l gopacket.SerializableLayer, typ layers.EthernetType) {
	switch l := l.(type) {
	case *layers.Ethernet:
		l.EthernetType = typ
	case *layers.Dot1Q:
		l.Type = typ
	}
}

func etherType(ipPacket []byte) layers.EthernetType {
	if ipPacket[0]>>4 == 6 {
		return layers.EthernetTypeIPv6
	}
	return layers.EthernetTypeIPv4
}

// ethIP wraps an IP packet in an Ethernet frame without VLAN tags.
func ethIP(t testing.TB, ipPacket []byte) []byte {
	return eth(t, etherType(ipPacket), ipPacket)
}

func arp(t testing.TB) []byte {
	return serialize(t,
		&layers.Ethernet{SrcMAC: macA, DstMAC: layers.EthernetBroadcast, EthernetType: layers.EthernetTypeARP},
		&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
			HwAddressSize: 6, ProtAddressSize: 4, Operation: layers.ARPRequest,
			SourceHwAddress: macA, SourceProtAddress: ip4("10.0.0.1"),
			DstHwAddress: make([]byte, 6), DstProtAddress: ip4("10.0.0.2")})
}

// sll is a Linux cooked (v1) header followed by an IP packet.
func sll(ipPacket []byte) []byte {
	h := make([]byte, 16)
	binary.BigEndian.PutUint16(h[0:], 4) // outgoing
	binary.BigEndian.PutUint16(h[2:], 1) // ARPHRD_ETHER
	binary.BigEndian.PutUint16(h[4:], 6)
	copy(h[6:], macA)
	binary.BigEndian.PutUint16(h[14:], uint16(etherType(ipPacket)))
	return append(h, ipPacket...)
}

// sll2 is a Linux cooked v2 header followed by an IP packet.
func sll2(ipPacket []byte) []byte {
	h := make([]byte, 20)
	binary.BigEndian.PutUint16(h[0:], uint16(etherType(ipPacket)))
	binary.BigEndian.PutUint32(h[4:], 3) // interface index
	binary.BigEndian.PutUint16(h[8:], 1) // ARPHRD_ETHER
	h[10] = 0                            // to us
	h[11] = 6
	copy(h[12:], macA)
	return append(h, ipPacket...)
}

// null is a BSD loopback header (the address family in the given byte
// order) followed by an IP packet.
func null(order binary.AppendByteOrder, family uint32, ipPacket []byte) []byte {
	return append(order.AppendUint32(nil, family), ipPacket...)
}

// rec is one packet record to write; orig is the original length if the
// data was cut (0: len(data)).
type rec struct {
	data  []byte
	orig  int
	ts    time.Time
	iface int
}

func (r rec) info() gopacket.CaptureInfo {
	ci := gopacket.CaptureInfo{Timestamp: r.ts, CaptureLength: len(r.data), Length: len(r.data), InterfaceIndex: r.iface}
	if r.orig != 0 {
		ci.Length = r.orig
	}
	if ci.Timestamp.IsZero() {
		ci.Timestamp = ts0
	}
	return ci
}

// recs makes records of frames one millisecond apart.
func recs(frames ...[]byte) []rec {
	rs := make([]rec, len(frames))
	for i, f := range frames {
		rs[i] = rec{data: f, ts: ts0.Add(time.Duration(i) * time.Millisecond)}
	}
	return rs
}

// cut cuts a record to snaplen bytes, as a capture with that snap length would.
func cut(snaplen int, data []byte) rec {
	return rec{data: data[:snaplen], orig: len(data)}
}

func pcapFile(t testing.TB, lt layers.LinkType, nanos bool, rs ...rec) []byte {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	if nanos {
		w = pcapgo.NewWriterNanos(&b)
	}
	if err := w.WriteFileHeader(65535, lt); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if err := w.WritePacket(r.info(), r.data); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// pcapFileBE writes a big-endian pcap file, as a SPARC or PowerPC host
// would; pcapgo.Writer only writes little-endian ones.
func pcapFileBE(t testing.TB, lt layers.LinkType, nanos bool, rs ...rec) []byte {
	magic := uint32(0xa1b2c3d4)
	if nanos {
		magic = 0xa1b23c4d
	}
	be := binary.BigEndian
	b := be.AppendUint32(nil, magic)
	b = be.AppendUint16(b, 2)
	b = be.AppendUint16(b, 4)
	b = be.AppendUint32(b, 0)
	b = be.AppendUint32(b, 0)
	b = be.AppendUint32(b, 65535)
	b = be.AppendUint32(b, uint32(lt))
	for _, r := range rs {
		ci := r.info()
		frac := ci.Timestamp.Nanosecond()
		if !nanos {
			frac /= 1000
		}
		b = be.AppendUint32(b, uint32(ci.Timestamp.Unix()))
		b = be.AppendUint32(b, uint32(frac))
		b = be.AppendUint32(b, uint32(ci.CaptureLength))
		b = be.AppendUint32(b, uint32(ci.Length))
		b = append(b, r.data...)
	}
	return b
}

// ngFile writes a pcapng file with pcapgo.NgWriter, one interface per link
// type (interface i has link type lts[i]).
func ngFile(t testing.TB, lts []layers.LinkType, rs ...rec) []byte {
	t.Helper()
	var b bytes.Buffer
	intf := pcapgo.DefaultNgInterface
	intf.LinkType = lts[0]
	intf.Name = "if0"
	w, err := pcapgo.NewNgWriterInterface(&b, intf, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	for i, lt := range lts[1:] {
		intf.LinkType = lt
		intf.Name = fmt.Sprint("if", i+1)
		if _, err := w.AddInterface(intf); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rs {
		if err := w.WritePacket(r.info(), r.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// ngIface describes an interface for ngFileRaw: tsresol is the if_tsresol
// option value (a power of ten), 0 to leave the option out (microseconds).
type ngIface struct {
	lt      layers.LinkType
	snaplen uint32
	tsresol uint8
}

// ngFileRaw writes a pcapng file by hand, in either byte order and with
// per-interface timestamp resolutions, which pcapgo.NgWriter cannot do.
func ngFileRaw(order binary.AppendByteOrder, ifaces []ngIface, rs ...rec) []byte {
	block := func(b []byte, typ uint32, body []byte) []byte {
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
		n := uint32(12 + len(body))
		b = order.AppendUint32(b, typ)
		b = order.AppendUint32(b, n)
		b = append(b, body...)
		return order.AppendUint32(b, n)
	}
	shb := order.AppendUint32(nil, 0x1a2b3c4d)
	shb = order.AppendUint16(shb, 1)
	shb = order.AppendUint16(shb, 0)
	shb = order.AppendUint64(shb, ^uint64(0))
	b := block(nil, 0x0a0d0d0a, shb)
	for _, f := range ifaces {
		idb := order.AppendUint16(nil, uint16(f.lt))
		idb = order.AppendUint16(idb, 0)
		idb = order.AppendUint32(idb, f.snaplen)
		if f.tsresol != 0 {
			idb = order.AppendUint16(idb, 9) // if_tsresol
			idb = order.AppendUint16(idb, 1)
			idb = append(idb, f.tsresol, 0, 0, 0)
			idb = order.AppendUint32(idb, 0) // opt_endofopt
		}
		b = block(b, 1, idb)
	}
	for _, r := range rs {
		ci := r.info()
		res := ifaces[r.iface].tsresol
		if res == 0 {
			res = 6
		}
		unit := int64(1)
		for range 9 - int(res) {
			unit *= 10
		}
		ts := uint64(ci.Timestamp.UnixNano() / unit)
		epb := order.AppendUint32(nil, uint32(r.iface))
		epb = order.AppendUint32(epb, uint32(ts>>32))
		epb = order.AppendUint32(epb, uint32(ts))
		epb = order.AppendUint32(epb, uint32(ci.CaptureLength))
		epb = order.AppendUint32(epb, uint32(ci.Length))
		epb = append(epb, r.data...)
		b = block(b, 6, epb)
	}
	return b
}

func gz(t testing.TB, b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// openBytes writes content to a file called name in a temporary directory
// and opens it with Open. The reader is closed when the test ends.
func openBytes(t testing.TB, name string, content []byte) (*Reader, string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err == nil {
		t.Cleanup(func() { r.Close() })
	}
	return r, path, err
}

// got is what a test keeps of a Segment: a copy, since the TCP layer and
// its payload are reused by the next call to Next.
type got struct {
	Num       int
	Net       string
	Ports     string
	Payload   string
	Truncated bool
	Missing   int
	LinkType  layers.LinkType
	Iface     int
	TS        time.Time
	CapLen    int
	Len       int
}

func keep(s *Segment) got {
	return got{
		Num:       s.Num,
		Net:       s.Net.String(),
		Ports:     fmt.Sprintf("%d->%d", s.TCP.SrcPort, s.TCP.DstPort),
		Payload:   string(s.TCP.Payload),
		Truncated: s.Truncated,
		Missing:   s.Missing,
		LinkType:  s.LinkType,
		Iface:     s.Info.InterfaceIndex,
		TS:        s.Info.Timestamp,
		CapLen:    s.Info.CaptureLength,
		Len:       s.Info.Length,
	}
}

// readAll reads r to its end. Packet errors are collected; any other error
// than io.EOF is returned with what was read before it.
func readAll(t testing.TB, r *Reader) (segs []got, perrs []*PacketError, err error) {
	t.Helper()
	for i := 0; ; i++ {
		if i > 1e6 {
			t.Fatal("Next does not come to an end")
		}
		s, err := r.Next()
		var pe *PacketError
		switch {
		case err == io.EOF:
			return segs, perrs, nil
		case errors.As(err, &pe):
			perrs = append(perrs, pe)
		case err != nil:
			return segs, perrs, err
		default:
			if s.Num != r.Stats().Packets {
				t.Errorf("segment number %d, but %d packets read", s.Num, r.Stats().Packets)
			}
			segs = append(segs, keep(s))
		}
	}
}

// checkStats checks the invariants that hold for every Stats.
func checkStats(t testing.TB, st Stats) {
	t.Helper()
	if st.TCP+st.Other+st.Malformed != st.Packets {
		t.Errorf("stats %+v: TCP+Other+Malformed != Packets", st)
	}
	if st.Truncated > st.TCP+st.Malformed {
		t.Errorf("stats %+v: more truncated than TCP and malformed packets", st)
	}
}
