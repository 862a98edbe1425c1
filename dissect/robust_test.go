package dissect

// Robustness tests: real captures from pcaps/ are rewritten in code (reordered, retransmitted,
// re-encapsulated, cut, damaged), written to a temporary file, run through the pipeline, and the
// messages found are compared with those of the original capture. Expectations are computed
// from the original file, never written down by packet number, so that the captures can be
// regenerated.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// robustCaptures are the real captures the rewrites start from.
var robustCaptures = []string{"kgo-produce-fetch.pcap", "kgo-group-3brokers.pcap"}

// robustPorts are the broker ports of robustCaptures and of the few other captures
// dissectPath reads: narrower than pcaps.Ports, since isBrokerPort tells the rewrites'
// directions by them.
const robustPorts = "9092-9094"

func isBrokerPort(p layers.TCPPort) bool { return p >= 9092 && p <= 9094 }

// rpkt is one TCP/IPv4 packet of an original capture, kept as fields so that it can be written
// again in another form.
type rpkt struct {
	orig    int // number of the original packet this one comes from (1-based)
	ci      gopacket.CaptureInfo
	eth     layers.Ethernet
	ip      layers.IPv4
	tcp     layers.TCP
	payload []byte
	iface   int // pcapng interface
	raw     []byte
}

// toServer reports whether the packet goes from a client to a broker.
func (p *rpkt) toServer() bool { return isBrokerPort(p.tcp.DstPort) }

// connKey names the packet's connection the same way for both directions.
func (p *rpkt) connKey() string {
	if p.toServer() {
		return fmt.Sprintf("%s:%d-%s:%d", p.ip.SrcIP, p.tcp.SrcPort, p.ip.DstIP, p.tcp.DstPort)
	}
	return fmt.Sprintf("%s:%d-%s:%d", p.ip.DstIP, p.tcp.DstPort, p.ip.SrcIP, p.tcp.SrcPort)
}

// halfKey names one direction of a connection.
func (p *rpkt) halfKey() string { return fmt.Sprintf("%s/%v", p.connKey(), p.toServer()) }

// clone copies a packet, payload included.
func (p rpkt) clone() rpkt {
	p.payload = bytes.Clone(p.payload)
	p.tcp.Options = slices.Clone(p.tcp.Options)
	return p
}

// openPcap opens a pcap file for reading, closed when the test ends.
func openPcap(t testing.TB, path string) *pcapgo.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// loadPackets reads an Ethernet/IPv4 pcap file.
func loadPackets(t testing.TB, path string) []rpkt {
	t.Helper()
	r := openPcap(t, path)
	if r.LinkType() != layers.LinkTypeEthernet {
		t.Fatalf("%s: link type %v; the rewrites expect Ethernet", path, r.LinkType())
	}
	var pkts []rpkt
	for n := 1; ; n++ {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		pk := gopacket.NewPacket(data, layers.LinkTypeEthernet, gopacket.Default)
		eth, _ := pk.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
		ip, _ := pk.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := pk.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if eth == nil || ip == nil || tcp == nil {
			t.Fatalf("%s: packet %d is not Ethernet/IPv4/TCP", path, n)
		}
		p := rpkt{orig: n, ci: ci, eth: *eth, ip: *ip, tcp: *tcp, payload: bytes.Clone(tcp.Payload), raw: data}
		p.tcp.Options = slices.Clone(tcp.Options)
		pkts = append(pkts, p)
	}
	if len(pkts) < 20 {
		t.Fatalf("%s: only %d packets", path, len(pkts))
	}
	return pkts
}

// link is the encapsulation a rewritten packet is written with.
type link int

const (
	linkEthernet link = iota
	linkSLL
	linkSLL2
	linkNull
	linkRaw
	linkVLAN
	linkQinQ
)

func (l link) linkType() layers.LinkType {
	switch l {
	case linkSLL:
		return layers.LinkTypeLinuxSLL
	case linkSLL2:
		return layers.LinkTypeLinuxSLL2
	case linkNull:
		return layers.LinkTypeNull
	case linkRaw:
		return layers.LinkTypeRaw // 101
	}
	return layers.LinkTypeEthernet
}

// v6addr maps an IPv4 address into fd00::/96, keeping the four bytes at the end (not the
// IPv4-mapped form, which would read as IPv4 again).
func v6addr(ip net.IP) net.IP {
	out := net.ParseIP("fd00::")
	copy(out[12:], ip.To4())
	return out
}

// ipBytes serializes the IP and TCP layers and the payload, with lengths and checksums
// recomputed.
func ipBytes(t testing.TB, p *rpkt, v6 bool) []byte {
	t.Helper()
	tcp := p.tcp
	tcp.Options = slices.Clone(p.tcp.Options)
	var ipl gopacket.SerializableLayer
	if v6 {
		ip := &layers.IPv6{Version: 6, HopLimit: p.ip.TTL, NextHeader: layers.IPProtocolTCP,
			SrcIP: v6addr(p.ip.SrcIP), DstIP: v6addr(p.ip.DstIP)}
		tcp.SetNetworkLayerForChecksum(ip)
		ipl = ip
	} else {
		ip := p.ip
		ip.Options = slices.Clone(p.ip.Options)
		tcp.SetNetworkLayerForChecksum(&ip)
		ipl = &ip
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, ipl, &tcp, gopacket.Payload(p.payload)); err != nil {
		t.Fatalf("serialize packet from %d: %v", p.orig, err)
	}
	return bytes.Clone(buf.Bytes())
}

// encode writes the packet with the given encapsulation.
func encode(t testing.TB, p *rpkt, l link, v6 bool) []byte {
	t.Helper()
	ipb := ipBytes(t, p, v6)
	et := layers.EthernetTypeIPv4
	if v6 {
		et = layers.EthernetTypeIPv6
	}
	be := binary.BigEndian
	switch l {
	case linkSLL:
		h := be.AppendUint16(nil, 4) // sent by us
		h = be.AppendUint16(h, 772)  // ARPHRD_LOOPBACK
		h = be.AppendUint16(h, 6)
		h = append(h, p.eth.SrcMAC...)
		h = append(h, 0, 0)
		h = be.AppendUint16(h, uint16(et))
		return append(h, ipb...)
	case linkSLL2:
		h := be.AppendUint16(nil, uint16(et))
		h = be.AppendUint16(h, 0)   // reserved
		h = be.AppendUint32(h, 1)   // interface index
		h = be.AppendUint16(h, 772) // ARPHRD_LOOPBACK
		h = append(h, 4, 6)         // outgoing, address length
		h = append(h, p.eth.SrcMAC...)
		h = append(h, 0, 0)
		return append(h, ipb...)
	case linkNull:
		family := uint32(2) // AF_INET
		if v6 {
			family = 30 // AF_INET6 on macOS; the reader accepts the BSD values
		}
		return append(binary.LittleEndian.AppendUint32(nil, family), ipb...)
	case linkRaw:
		return ipb
	}
	ls := []gopacket.SerializableLayer{}
	eth := &layers.Ethernet{SrcMAC: p.eth.SrcMAC, DstMAC: p.eth.DstMAC, EthernetType: et}
	ls = append(ls, eth)
	switch l {
	case linkVLAN:
		eth.EthernetType = layers.EthernetTypeDot1Q
		ls = append(ls, &layers.Dot1Q{VLANIdentifier: 42, Type: et})
	case linkQinQ:
		eth.EthernetType = layers.EthernetTypeQinQ
		ls = append(ls, &layers.Dot1Q{VLANIdentifier: 100, Type: layers.EthernetTypeDot1Q},
			&layers.Dot1Q{VLANIdentifier: 42, Type: et})
	}
	ls = append(ls, gopacket.Payload(ipb))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf.Bytes())
}

func fixCI(ci gopacket.CaptureInfo, n int) gopacket.CaptureInfo {
	ci.CaptureLength, ci.Length, ci.AncillaryData = n, n, nil
	return ci
}

// writePcap writes the packets as a pcap file with one encapsulation.
func writePcap(t testing.TB, pkts []rpkt, l link, v6 bool) string {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriterNanos(&b)
	if err := w.WriteFileHeader(262144, l.linkType()); err != nil {
		t.Fatal(err)
	}
	for i := range pkts {
		data := encode(t, &pkts[i], l, v6)
		if err := w.WritePacket(fixCI(pkts[i].ci, len(data)), data); err != nil {
			t.Fatal(err)
		}
	}
	return writeTemp(t, "rewritten.pcap", b.Bytes())
}

// writePcapng writes a pcapng file whose interface i has link type lts[i]; each packet goes to
// its iface.
func writePcapng(t testing.TB, pkts []rpkt, lts []link) string {
	t.Helper()
	var b bytes.Buffer
	intf := pcapgo.DefaultNgInterface
	intf.LinkType, intf.Name = lts[0].linkType(), "if0"
	w, err := pcapgo.NewNgWriterInterface(&b, intf, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lts[1:] {
		intf.LinkType, intf.Name = l.linkType(), fmt.Sprint("if", i+1)
		if _, err := w.AddInterface(intf); err != nil {
			t.Fatal(err)
		}
	}
	for i := range pkts {
		data := encode(t, &pkts[i], lts[pkts[i].iface], false)
		ci := fixCI(pkts[i].ci, len(data))
		ci.InterfaceIndex = pkts[i].iface
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, "rewritten.pcapng", b.Bytes())
}

func writeTemp(t testing.TB, name string, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// line is one JSON line of kdissect's output: a message or a notice.
type line = jsonMsg

func (l line) isMessage() bool {
	return l.Kind == "request" || l.Kind == "response" || l.Kind == "sasl_token"
}

// isSASLToken reports whether the line is a raw SASL token (after SaslHandshake v0), however
// the renderer names its kind.
func (l line) isSASLToken() bool { return l.Kind == "sasl_token" || l.APIName == "SASL token" }

func show[T int | int16](p *T) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func (l line) corr() int32 {
	if l.CorrelationID == nil {
		return -1
	}
	return *l.CorrelationID
}

// key identifies a message independently of stream numbers.
func (l line) id() string {
	return fmt.Sprintf("%s %s->%s key=%s v=%s corr=%d frames=%d-%d request=%s",
		l.Kind, l.Src, l.Dst, show(l.APIKey), show(l.APIVersion), l.corr(), l.FirstFrame, l.Frame, show(l.RequestFrame))
}

// exchange identifies a message by what does not depend on its pairing: direction, endpoints
// and correlation id.
func (l line) exchange() string {
	return fmt.Sprintf("%s %s->%s corr=%d", l.Kind, l.Src, l.Dst, l.corr())
}

// dissection is kdissect's output for one file.
type dissection struct {
	msgs, notices []line
	stderr        string
	code          int
}

func dissectPath(t *testing.T, path string) dissection {
	t.Helper()
	out, errOut, code := testRun{format: "json", ports: robustPorts}.dissect(t, path)
	d := dissection{stderr: errOut, code: code}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: bad JSON line %q: %v", path, sc.Text(), err)
		}
		switch {
		case l.isMessage():
			d.msgs = append(d.msgs, l)
		case l.Kind == "notice":
			d.notices = append(d.notices, l)
		default:
			t.Fatalf("%s: unexpected line kind %q", path, l.Kind)
		}
	}
	return d
}

// translate maps the packet numbers of a rewritten file back to the original's, and IPv6
// endpoints back to IPv4, so that its messages compare with the original's.
func translate(t *testing.T, d dissection, pkts []rpkt) dissection {
	t.Helper()
	num := func(n int) int {
		if n < 1 || n > len(pkts) {
			t.Fatalf("packet number %d out of range 1..%d", n, len(pkts))
		}
		return pkts[n-1].orig
	}
	addr := func(s string) string {
		ap, err := netipParse(s)
		if err != nil {
			t.Fatalf("endpoint %q: %v", s, err)
		}
		return ap
	}
	fix := func(ls []line) []line {
		out := make([]line, len(ls))
		for i, l := range ls {
			l.Frame = num(l.Frame)
			if l.FirstFrame != 0 {
				l.FirstFrame = num(l.FirstFrame)
			}
			if l.RequestFrame != nil {
				rf := num(*l.RequestFrame)
				l.RequestFrame = &rf
			}
			l.Src, l.Dst = addr(l.Src), addr(l.Dst)
			out[i] = l
		}
		return out
	}
	d.msgs, d.notices = fix(d.msgs), fix(d.notices)
	return d
}

// netipParse turns "[fd00::7f00:1]:9092" back into "127.0.0.1:9092".
func netipParse(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", err
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "", fmt.Errorf("bad address %q", host)
	}
	if ip.To4() == nil && bytes.Equal(ip[:12], net.ParseIP("fd00::")[:12]) {
		ip = net.IP(ip[12:16])
	}
	return net.JoinHostPort(ip.String(), port), nil
}

func keys(ls []line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.id()
	}
	sort.Strings(out)
	return out
}

// sameMessages requires the same messages, as multisets of keys.
func sameMessages(t *testing.T, got, want []line) {
	t.Helper()
	g, w := keys(got), keys(want)
	if slices.Equal(g, w) {
		return
	}
	wantSet := map[string]int{}
	for _, k := range w {
		wantSet[k]++
	}
	for _, k := range g {
		wantSet[k]--
	}
	n := 0
	for k, c := range wantSet {
		switch {
		case n >= 20:
		case c > 0:
			t.Errorf("missing:    %s", k)
			n++
		case c < 0:
			t.Errorf("unexpected: %s", k)
			n++
		}
	}
	t.Errorf("%d messages, want %d", len(g), len(w))
}

// original dissects the original file and checks what the rewrites rely on.
func original(t *testing.T, path string) dissection {
	t.Helper()
	d := dissectPath(t, path)
	if d.code != 0 || d.stderr != "" {
		t.Fatalf("original %s: exit %d, stderr %q", path, d.code, d.stderr)
	}
	if len(d.msgs) < 20 {
		t.Fatalf("original %s: only %d messages", path, len(d.msgs))
	}
	paired := 0
	for _, m := range d.msgs {
		if m.Kind == "response" && m.RequestFrame != nil {
			paired++
		}
	}
	if paired < 10 {
		t.Fatalf("original %s: only %d paired responses", path, paired)
	}
	return d
}

// ---- rewrites ----

// dataIdx lists the indexes of packets with payload that match pred.
func dataIdx(pkts []rpkt, pred func(i int, p *rpkt) bool) []int {
	var out []int
	for i := range pkts {
		if len(pkts[i].payload) > 0 && (pred == nil || pred(i, &pkts[i])) {
			out = append(out, i)
		}
	}
	return out
}

// splitAt cuts a packet's payload at the given offsets into several packets.
func splitAt(p rpkt, at ...int) []rpkt {
	var out []rpkt
	prev := 0
	for _, a := range append(at, len(p.payload)) {
		q := p.clone()
		q.payload = bytes.Clone(p.payload[prev:a])
		q.tcp.Seq = p.tcp.Seq + uint32(prev)
		if a != len(p.payload) {
			q.tcp.FIN = false
		}
		out = append(out, q)
		prev = a
	}
	return out
}

// wholeFrame reports whether a payload is exactly one length-prefixed frame.
func wholeFrame(b []byte) bool {
	return len(b) >= 12 && int(binary.BigEndian.Uint32(b))+4 == len(b)
}

// laterData reports whether the same direction of the same connection carries data after
// packet i.
func laterData(pkts []rpkt, i int) bool {
	for j := i + 1; j < len(pkts); j++ {
		if len(pkts[j].payload) > 0 && pkts[j].halfKey() == pkts[i].halfKey() {
			return true
		}
	}
	return false
}

// splitSwap splits every whole request frame of at least 64 bytes in two and sends the second
// half first: two adjacent data segments of one direction, out of order.
func splitSwap(t *testing.T, pkts []rpkt) []rpkt {
	var out []rpkt
	n := 0
	for _, p := range pkts {
		if p.toServer() && wholeFrame(p.payload) && len(p.payload) >= 64 {
			h := splitAt(p, len(p.payload)/2)
			out = append(out, h[1], h[0])
			n++
			continue
		}
		out = append(out, p)
	}
	if n == 0 {
		t.Fatal("no request of 64 bytes or more to reorder")
	}
	return out
}

// swapAdjacent swaps every pair of consecutive data segments of one direction that have no
// data of the other direction between them (pipelined requests, or a response after the end
// of another).
func swapAdjacent(t *testing.T, pkts []rpkt) []rpkt {
	out := slices.Clone(pkts)
	n := 0
	last := map[string]int{} // connection -> index of its last data segment, -1 after a swap
	for i := range out {
		if len(out[i].payload) == 0 {
			continue
		}
		k := out[i].connKey()
		if j, ok := last[k]; ok && j >= 0 && out[j].halfKey() == out[i].halfKey() {
			out[i], out[j] = out[j], out[i]
			last[k] = -1
			n++
			continue
		}
		last[k] = i
	}
	if n == 0 {
		t.Skip("no two consecutive data segments of one direction")
	}
	return out
}

// swapRequests swaps, on every connection, the capture positions of the client's second and
// third data segments, which are adjacent in sequence space but have the response to the
// first of them between them: the second request is captured after its own response, as in
// a capture merged from two interfaces whose clocks disagree.
func swapRequests(t *testing.T, pkts []rpkt) []rpkt {
	out := slices.Clone(pkts)
	seen := map[string][]int{}
	for _, i := range dataIdx(out, func(i int, p *rpkt) bool { return p.toServer() }) {
		seen[out[i].halfKey()] = append(seen[out[i].halfKey()], i)
	}
	n := 0
	for _, idx := range seen {
		if len(idx) >= 3 {
			out[idx[1]], out[idx[2]] = out[idx[2]], out[idx[1]]
			n++
		}
	}
	if n == 0 {
		t.Fatal("no connection with three requests")
	}
	return out
}

// retransmit sends every 5th data segment again two packets later.
func retransmit(t *testing.T, pkts []rpkt) []rpkt {
	var out []rpkt
	var pending []rpkt
	var at []int
	k := 0
	for _, p := range pkts {
		out = append(out, p)
		if len(p.payload) > 0 {
			k++
			if k%5 == 0 {
				pending = append(pending, p.clone())
				at = append(at, len(out)+1)
			}
		}
		for len(pending) > 0 && len(out) >= at[0] {
			out = append(out, pending[0])
			pending, at = pending[1:], at[1:]
		}
	}
	return append(out, pending...)
}

// overlap sends every data segment of 16 bytes or more as two halves that overlap by 8 bytes,
// and every 3rd one once more whole after its halves.
func overlap(t *testing.T, pkts []rpkt) []rpkt {
	var out []rpkt
	k := 0
	for _, p := range pkts {
		n := len(p.payload)
		if n < 16 {
			out = append(out, p)
			continue
		}
		k++
		m := n / 2
		a, b := p.clone(), p.clone()
		a.payload, a.tcp.FIN = a.payload[:m+4], false
		b.payload, b.tcp.Seq = b.payload[m-4:], p.tcp.Seq+uint32(m-4)
		out = append(out, a, b)
		if k%3 == 0 {
			out = append(out, p.clone())
		}
	}
	return out
}

// wrapSeq shifts the sequence numbers of every direction of every connection so that they wrap
// past 2^32 halfway through the direction's data (at the first byte for directions without
// data); acknowledgements of the other direction move with them.
func wrapSeq(t *testing.T, pkts []rpkt) []rpkt {
	isn := map[string]uint32{}
	bytesOf := map[string]int{}
	for _, p := range pkts {
		h := p.halfKey()
		if _, ok := isn[h]; !ok {
			if !p.tcp.SYN {
				t.Fatalf("packet %d: first of its direction without SYN", p.orig)
			}
			isn[h] = p.tcp.Seq
		}
		bytesOf[h] += len(p.payload)
	}
	delta := map[string]uint32{}
	for h, s := range isn {
		// The first data byte has sequence isn+1; byte number bytesOf/2 gets sequence 0.
		delta[h] = uint32(-int64(s) - 1 - int64(bytesOf[h]/2))
	}
	out := make([]rpkt, len(pkts))
	for i, p := range pkts {
		p = p.clone()
		p.tcp.Seq += delta[p.halfKey()]
		if p.tcp.ACK {
			other := fmt.Sprintf("%s/%v", p.connKey(), !p.toServer())
			p.tcp.Ack += delta[other]
		}
		out[i] = p
	}
	return out
}

// twoInterfaces puts half of the connections on interface 1.
func twoInterfaces(t *testing.T, pkts []rpkt) []rpkt {
	ids := map[string]int{}
	out := slices.Clone(pkts)
	for i := range out {
		k := out[i].connKey()
		if _, ok := ids[k]; !ok {
			ids[k] = len(ids)
		}
		out[i].iface = ids[k] % 2
	}
	if len(ids) < 2 {
		t.Fatal("fewer than two connections")
	}
	return out
}

func identity(t *testing.T, pkts []rpkt) []rpkt { return pkts }

// TestRobustLossless rewrites each capture in ways that lose nothing: every message must come
// out the same, paired with the same request, and no notice may appear that the original
// did not have.
func TestRobustLossless(t *testing.T) {
	type rewrite struct {
		name  string
		edit  func(*testing.T, []rpkt) []rpkt
		link  link
		v6    bool
		ng    []link // pcapng with these interfaces
		check func(*testing.T, []rpkt)
	}
	rewrites := []rewrite{
		{name: "ethernet", edit: identity},
		{name: "reorder split request", edit: splitSwap},
		{name: "reorder adjacent segments", edit: swapAdjacent},
		{name: "reorder requests around a response", edit: swapRequests},
		{name: "retransmit every 5th", edit: retransmit},
		{name: "overlapping retransmission", edit: overlap},
		{name: "sll", edit: identity, link: linkSLL},
		{name: "sll2", edit: identity, link: linkSLL2},
		{name: "null loopback", edit: identity, link: linkNull},
		{name: "raw ipv4", edit: identity, link: linkRaw},
		{name: "vlan", edit: identity, link: linkVLAN},
		{name: "qinq", edit: identity, link: linkQinQ},
		{name: "ipv6", edit: identity, v6: true},
		{name: "ipv6 sll2", edit: identity, link: linkSLL2, v6: true},
		{name: "ipv6 raw", edit: identity, link: linkRaw, v6: true},
		{name: "ipv6 null", edit: identity, link: linkNull, v6: true},
		{name: "pcapng two interfaces", edit: twoInterfaces, ng: []link{linkEthernet, linkSLL}},
		{name: "sequence wrap", edit: wrapSeq, check: checkWrapped},
		{name: "sequence wrap ipv6 qinq", edit: wrapSeq, link: linkQinQ, v6: true},
		{name: "all at once", link: linkVLAN, v6: true, edit: func(t *testing.T, p []rpkt) []rpkt {
			return overlap(t, retransmit(t, splitSwap(t, wrapSeq(t, p))))
		}},
	}
	for _, file := range robustCaptures {
		path := pcapPath(file)
		t.Run(file, func(t *testing.T) {
			pkts := loadPackets(t, path)
			orig := original(t, path)
			for _, rw := range rewrites {
				t.Run(rw.name, func(t *testing.T) {
					out := rw.edit(t, slices.Clone(pkts))
					if rw.check != nil {
						rw.check(t, out)
					}
					var f string
					if rw.ng != nil {
						f = writePcapng(t, out, rw.ng)
					} else {
						f = writePcap(t, out, rw.link, rw.v6)
					}
					if rw.name == "ethernet" {
						checkIdentity(t, f, pkts)
					}
					d := dissectPath(t, f)
					if d.code != 0 || d.stderr != "" {
						t.Fatalf("exit %d, stderr %q", d.code, d.stderr)
					}
					if rw.v6 && !strings.HasPrefix(d.msgs[0].Src, "[fd00::") {
						t.Errorf("IPv6 rewrite shows %s", d.msgs[0].Src)
					}
					d = translate(t, d, out)
					sameMessages(t, d.msgs, orig.msgs)
					if g, w := keys(d.notices), keys(orig.notices); !slices.Equal(g, w) {
						t.Errorf("notices %q, want %q", noticeTexts(d.notices), noticeTexts(orig.notices))
					}
				})
			}
		})
	}
}

// checkIdentity makes sure that the rewriter itself is faithful: an Ethernet rewrite without
// edits gives back the original bytes, except the TCP checksum: on loopback the kernel leaves
// it to the (absent) hardware, and the captures hold a partial sum.
func checkIdentity(t *testing.T, path string, pkts []rpkt) {
	t.Helper()
	r := openPcap(t, path)
	for i := range pkts {
		data, _, err := r.ReadPacketData()
		if err != nil {
			t.Fatalf("packet %d: %v", i+1, err)
		}
		want := bytes.Clone(pkts[i].raw)
		sum := 14 + int(pkts[i].ip.IHL)*4 + 16
		if len(data) != len(want) || len(want) < sum+2 {
			t.Fatalf("packet %d rewritten with %d bytes, want %d", i+1, len(data), len(want))
		}
		copy(want[sum:sum+2], data[sum:sum+2])
		if !bytes.Equal(data, want) {
			t.Fatalf("packet %d rewritten as\n% x\nwant\n% x", i+1, data, want)
		}
	}
}

// checkWrapped makes sure that the rewrite really wraps: some direction with data has
// sequence numbers on both sides of 2^32.
func checkWrapped(t *testing.T, pkts []rpkt) {
	t.Helper()
	high, low := map[string]bool{}, map[string]bool{}
	for _, p := range pkts {
		if len(p.payload) == 0 {
			continue
		}
		if p.tcp.Seq > 1<<31 {
			high[p.halfKey()] = true
		} else {
			low[p.halfKey()] = true
		}
	}
	n := 0
	for h := range high {
		if low[h] {
			n++
		}
	}
	if n < 2 {
		t.Fatalf("only %d directions wrap", n)
	}
}

func noticeTexts(ls []line) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("#%d %s", l.Frame, l.Text))
	}
	return out
}

// ---- lossy rewrites ----

// target describes the request a lossy rewrite damages, as the original dissection shows it.
type target struct {
	req  line // the request message of the original
	resp *line
}

// findRequest finds the original's request message that the packet with the given original
// number holds.
func findRequest(t *testing.T, orig dissection, num int) target {
	t.Helper()
	for _, m := range orig.msgs {
		if m.Kind == "request" && m.FirstFrame == num && m.Frame == num {
			tg := target{req: m}
			for _, r := range orig.msgs {
				if r.Kind == "response" && r.RequestFrame != nil && *r.RequestFrame == num && r.corr() == m.corr() {
					r := r
					tg.resp = &r
				}
			}
			return tg
		}
	}
	t.Fatalf("no request in packet %d of the original", num)
	return target{}
}

// checkUnpaired checks the response to a request that is not in the rewritten capture: it is
// shown, not paired, with a warning that says why, and if its API was inferred it is the
// right one.
func checkUnpaired(t *testing.T, got []line, want line) {
	t.Helper()
	for _, m := range got {
		if m.exchange() != want.exchange() || m.Frame != want.Frame {
			continue
		}
		if m.RequestFrame != nil {
			t.Errorf("response %s is paired with packet %d, whose request is not in the capture", m.id(), *m.RequestFrame)
		}
		w := strings.Join(m.Warnings, "; ")
		t.Logf("unpaired: %s: %s", m.id(), w)
		if !strings.Contains(w, "not captured") && !strings.Contains(w, "no captured request") {
			t.Errorf("response %s: warnings %q do not say its request was not captured", m.id(), m.Warnings)
		}
		if m.APIKey != nil && (*m.APIKey != *want.APIKey || *m.APIVersion != *want.APIVersion) {
			t.Errorf("response %s inferred as API %s v%s, want %d v%d", m.id(), show(m.APIKey), show(m.APIVersion), *want.APIKey, *want.APIVersion)
		}
		return
	}
	t.Errorf("the response %s is missing", want.id())
}

// checkNoGarbage requires every message to be one of the original's, except the responses in
// unpaired (checked by checkUnpaired).
func checkNoGarbage(t *testing.T, got, orig []line, unpaired []line) {
	t.Helper()
	known := map[string]bool{}
	for _, m := range orig {
		known[m.id()] = true
	}
	excused := map[string]bool{}
	for _, m := range unpaired {
		excused[fmt.Sprint(m.exchange(), m.Frame)] = true
	}
	for _, m := range got {
		if !known[m.id()] && !excused[fmt.Sprint(m.exchange(), m.Frame)] {
			t.Errorf("message not in the original: %s %q", m.id(), m.Warnings)
		}
	}
}

// checkPresent requires each of want among got.
func checkPresent(t *testing.T, got, want []line) {
	t.Helper()
	have := map[string]bool{}
	for _, m := range got {
		have[m.id()] = true
	}
	missing := 0
	for _, m := range want {
		if !have[m.id()] {
			missing++
			if missing <= 10 {
				t.Errorf("missing: %s", m.id())
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d expected messages missing", missing, len(want))
	}
}

func hasNotice(ns []line, text, src string) bool {
	for _, n := range ns {
		if strings.Contains(n.Text, text) && (src == "" || n.Src == src) {
			return true
		}
	}
	return false
}

// TestRobustLossy damages captures: lost segments, a start in the middle of a frame. The
// losses must be reported, the framer must find its step again, nothing may be decoded from
// garbage, and what is not damaged must come out as in the original.
func TestRobustLossy(t *testing.T) {
	for _, file := range robustCaptures {
		path := pcapPath(file)
		t.Run(file, func(t *testing.T) {
			pkts := loadPackets(t, path)
			orig := original(t, path)

			t.Run("lost segment inside a request", func(t *testing.T) {
				// The largest request that has more requests after it on its connection, sent
				// as three segments; the middle one is lost.
				best := -1
				for _, i := range dataIdx(pkts, func(i int, p *rpkt) bool {
					return p.toServer() && wholeFrame(p.payload) && len(p.payload) >= 48 && laterData(pkts, i)
				}) {
					if best < 0 || len(pkts[i].payload) > len(pkts[best].payload) {
						best = i
					}
				}
				if best < 0 {
					t.Fatal("no request to damage")
				}
				tg := findRequest(t, orig, pkts[best].orig)
				n := len(pkts[best].payload)
				parts := splitAt(pkts[best], n/3, 2*n/3)
				out := slices.Concat(pkts[:best], parts[:1], parts[2:], pkts[best+1:])
				lossyCheck(t, out, orig, tg)
			})

			t.Run("lost request", func(t *testing.T) {
				cands := dataIdx(pkts, func(i int, p *rpkt) bool {
					return p.toServer() && wholeFrame(p.payload) && laterData(pkts, i) && i > 0 &&
						slices.ContainsFunc(pkts[:i], func(q rpkt) bool { return len(q.payload) > 0 && q.halfKey() == p.halfKey() })
				})
				if len(cands) == 0 {
					t.Fatal("no request to drop")
				}
				for _, best := range []int{cands[0], cands[len(cands)/2], cands[len(cands)-1]} {
					t.Run(fmt.Sprint("packet ", pkts[best].orig), func(t *testing.T) {
						tg := findRequest(t, orig, pkts[best].orig)
						out := slices.Concat(pkts[:best], pkts[best+1:])
						lossyCheck(t, out, orig, tg)
					})
				}
			})

			// The connection's SYN was captured, its first data segment was not: the framer
			// must not think it is in step with the stream.
			t.Run("first request lost after the handshake", func(t *testing.T) {
				i := firstData(t, pkts, true)
				tg := findRequest(t, orig, pkts[i].orig)
				lossyCheck(t, slices.Concat(pkts[:i], pkts[i+1:]), orig, tg)
			})
			t.Run("first request half lost after the handshake", func(t *testing.T) {
				i := firstData(t, pkts, true)
				tg := findRequest(t, orig, pkts[i].orig)
				h := splitAt(pkts[i], len(pkts[i].payload)/2)
				lossyCheck(t, slices.Concat(pkts[:i], h[1:], pkts[i+1:]), orig, tg)
			})
			t.Run("first response half lost after the handshake", func(t *testing.T) {
				i := firstData(t, pkts, false)
				resp := messageAt(t, orig, "response", pkts[i].orig)
				h := splitAt(pkts[i], 10)
				lossCheck(t, slices.Concat(pkts[:i], h[1:], pkts[i+1:]), orig, []line{resp}, nil, resp.Src)
			})

			t.Run("start mid-frame", func(t *testing.T) {
				// The capture starts with the second half of a connection's second request:
				// every SYN and everything before it is gone.
				seen := map[string]int{}
				best := -1
				for _, i := range dataIdx(pkts, nil) {
					p := &pkts[i]
					if !p.toServer() {
						continue
					}
					seen[p.halfKey()]++
					if seen[p.halfKey()] == 2 && wholeFrame(p.payload) && len(p.payload) >= 24 && laterData(pkts, i) && i > len(pkts)/4 {
						best = i
						break
					}
				}
				if best < 0 {
					t.Fatal("no request to start in")
				}
				cut := pkts[best].orig
				tg := findRequest(t, orig, cut)
				h := splitAt(pkts[best], len(pkts[best].payload)/2)
				out := slices.Concat(h[1:], pkts[best+1:])
				d := dissectPath(t, writePcap(t, out, linkEthernet, false))
				if d.code != 0 || d.stderr != "" {
					t.Fatalf("exit %d, stderr %q", d.code, d.stderr)
				}
				d = translate(t, d, out)
				t.Logf("notices: %q", noticeTexts(d.notices))
				if !hasNotice(d.notices, "skipped", tg.req.Src) {
					t.Errorf("no notice of skipped bytes from %s: %q", tg.req.Src, noticeTexts(d.notices))
				}
				// Every message that starts after the cut is found, the same, except that the
				// responses to requests before the cut are not paired.
				var want, unpaired []line
				for _, m := range orig.msgs {
					switch {
					case m.FirstFrame <= cut:
					case m.Kind == "response" && m.RequestFrame != nil && *m.RequestFrame <= cut:
						unpaired = append(unpaired, m)
					default:
						want = append(want, m)
					}
				}
				if len(want) < 10 {
					t.Fatalf("only %d messages after the cut", len(want))
				}
				checkPresent(t, d.msgs, want)
				for _, u := range unpaired {
					checkUnpaired(t, d.msgs, u)
				}
				checkNoGarbage(t, d.msgs, orig.msgs, unpaired)
				for _, m := range d.msgs {
					if m.FirstFrame <= cut && m.Frame <= cut {
						t.Errorf("message from before the cut: %s", m.id())
					}
				}
			})
		})
	}
}

// lossyCheck dissects a capture from which (part of) the request tg lost bytes.
func lossyCheck(t *testing.T, out []rpkt, orig dissection, tg target) {
	t.Helper()
	gone := []line{tg.req}
	var unpaired []line
	if tg.resp != nil {
		unpaired = append(unpaired, *tg.resp)
	}
	lossCheck(t, out, orig, gone, unpaired, tg.req.Src)
}

// lossCheck dissects a capture that lost bytes sent by from: the messages in gone must not be
// shown, those in unpaired must be shown without their requests, and all others as in the
// original.
func lossCheck(t *testing.T, out []rpkt, orig dissection, gone, unpaired []line, from string) {
	t.Helper()
	d := dissectPath(t, writePcap(t, out, linkEthernet, false))
	if d.code != 0 || d.stderr != "" {
		t.Fatalf("exit %d, stderr %q", d.code, d.stderr)
	}
	d = translate(t, d, out)
	t.Logf("notices: %q", noticeTexts(d.notices))
	if !hasNotice(d.notices, "bytes lost", from) {
		t.Errorf("no notice of lost bytes from %s: %q", from, noticeTexts(d.notices))
	}
	skip := map[string]bool{}
	for _, g := range gone {
		skip[g.id()] = true
		for _, m := range d.msgs {
			if m.Kind == g.Kind && m.exchange() == g.exchange() {
				t.Errorf("the damaged message is shown: %s %q", m.id(), m.Warnings)
			}
		}
	}
	for _, u := range unpaired {
		skip[u.id()] = true
	}
	var want []line
	for _, m := range orig.msgs {
		if !skip[m.id()] {
			want = append(want, m)
		}
	}
	checkPresent(t, d.msgs, want)
	for _, u := range unpaired {
		checkUnpaired(t, d.msgs, u)
	}
	checkNoGarbage(t, d.msgs, orig.msgs, unpaired)
	if len(d.msgs) != len(want)+len(unpaired) {
		t.Errorf("%d messages, want %d", len(d.msgs), len(want)+len(unpaired))
	}
}

// firstData finds the index of the first data segment of some connection's direction (the
// toServer one, or the other), on a connection whose handshake was captured and which carries
// more data in that direction after it. It picks the second such connection, to be away from
// the capture's start.
func firstData(t *testing.T, pkts []rpkt, toServer bool) int {
	t.Helper()
	seen := map[string]bool{}
	found := 0
	for i := range pkts {
		p := &pkts[i]
		if len(p.payload) == 0 || p.toServer() != toServer || seen[p.halfKey()] {
			continue
		}
		seen[p.halfKey()] = true
		if wholeFrame(p.payload) && laterData(pkts, i) {
			if found++; found == 2 {
				return i
			}
		}
	}
	t.Fatal("no connection with a first data segment to lose")
	return -1
}

// messageAt finds the original's message of the given kind held by one packet.
func messageAt(t *testing.T, orig dissection, kind string, num int) line {
	t.Helper()
	for _, m := range orig.msgs {
		if m.Kind == kind && m.FirstFrame == num && m.Frame == num {
			return m
		}
	}
	t.Fatalf("no %s in packet %d of the original", kind, num)
	return line{}
}

// ---- files that are not (whole) captures ----

// TestRobustBadFiles: files that are no capture at all give a clear error naming the file and
// a non-zero exit; a capture cut in the middle of a record gives what it holds, the error,
// and exit status 0. Nothing panics.
func TestRobustBadFiles(t *testing.T) {
	good := pcapPath(robustCaptures[0])
	content, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	orig := original(t, good)
	random := make([]byte, 100)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}

	// Record boundaries of the pcap file (little-endian header, as pcapgo and tcpdump write
	// on this machine).
	if binary.LittleEndian.Uint32(content) != 0xa1b2c3d4 && binary.LittleEndian.Uint32(content) != 0xa1b23c4d {
		t.Fatalf("%s is not a little-endian pcap file", good)
	}
	var ends []int // ends[i]: file offset after record i+1
	for off := 24; off+16 <= len(content); {
		off += 16 + int(binary.LittleEndian.Uint32(content[off+8:]))
		ends = append(ends, off)
	}
	if ends[len(ends)-1] != len(content) {
		t.Fatalf("records end at %d, the file at %d", ends[len(ends)-1], len(content))
	}
	half := len(ends) / 2

	tests := []struct {
		name    string
		content []byte
		code    int      // expected exit status
		errs    []string // expected in stderr, beside the file name
		upTo    int      // packets whose messages are expected (truncated files)
	}{
		{"empty", nil, 1, []string{"empty"}, 0},
		{"random bytes", random, 1, []string{"not a pcap or pcapng file"}, 0},
		{"text", []byte("This is a README, not a capture.\nSecond line.\n"), 1, []string{"text"}, 0},
		{"pcap header only, cut", content[:20], 1, nil, 0},
		// One rule wherever the damage is: what can be read is shown, the error names the file
		// and the packet, and the exit status is 1.
		{"cut inside a record's data", content[:ends[half-1]+16+10], 1, []string{"truncated after packet " + strconv.Itoa(half)}, half},
		{"cut inside a record header", content[:ends[half-1]+9], 1, []string{"truncated after packet " + strconv.Itoa(half)}, half},
		{"cut inside the first record", content[:24+16+5], 1, []string{"truncated after packet 0"}, 0},
		{"damaged record length", slices.Concat(content[:ends[half-1]+8], []byte{0xff, 0xff, 0xff, 0x7f}, content[ends[half-1]+12:]), 1, []string{"damaged", "after packet " + strconv.Itoa(half)}, half},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := writeTemp(t, "capture.pcap", tc.content)
			d := dissectPath(t, f)
			if d.code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", d.code, tc.code, d.stderr)
			}
			if !strings.Contains(d.stderr, f) {
				t.Errorf("stderr %q does not name the file %s", d.stderr, f)
			}
			for _, e := range tc.errs {
				if !strings.Contains(d.stderr, e) {
					t.Errorf("stderr %q does not say %q", d.stderr, e)
				}
			}
			if strings.Count(d.stderr, "\n") > 3 {
				t.Errorf("stderr has more than 3 lines: %q", d.stderr)
			}
			var want []line
			for _, m := range orig.msgs {
				if m.Frame <= tc.upTo {
					want = append(want, m)
				}
			}
			if tc.upTo > 0 && len(want) == 0 {
				t.Fatal("no messages expected: the cut is too early")
			}
			sameMessages(t, d.msgs, want)
		})
	}
}

// TestRobustStreamNumbers: stream numbers are tshark's tcp.stream, also after connections
// close (the packets after the FINs belong to the closed connection, and do not open one that
// takes a number), in captures whose connections close before others open, and in one that
// starts mid-stream. (tshark takes a second per file: not every capture.)
func TestRobustStreamNumbers(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tshark is not installed; .ci/run should have installed it")
		}
		t.Skip("tshark not installed (apt-get install tshark)")
	}
	for _, name := range []string{"kafkago-produce-consume.pcap", "sarama-produce-consume.pcap", "kgo-group-3brokers.pcap", "kgo-midstream.pcap"} {
		file := pcapPath(name)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(file); err != nil {
				t.Skip(err)
			}
			out, err := exec.Command("tshark", "-r", file, "-n", "-T", "fields", "-e", "frame.number", "-e", "tcp.stream").Output()
			if err != nil {
				t.Fatalf("tshark: %v", err)
			}
			streams := map[int]int{}
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				var frame, stream int
				if _, err := fmt.Sscan(l, &frame, &stream); err == nil {
					streams[frame] = stream
				}
			}
			d := dissectPath(t, file)
			if len(d.msgs) == 0 && len(d.notices) == 0 {
				t.Skip("nothing on ports " + robustPorts)
			}
			for _, m := range append(d.msgs, d.notices...) {
				want, ok := streams[m.Frame]
				if !ok {
					t.Fatalf("tshark has no TCP stream for packet %d", m.Frame)
				}
				if m.Stream != want {
					t.Errorf("%s in packet %d: stream %d, tshark's tcp.stream %d", m.Kind, m.Frame, m.Stream, want)
				}
			}
		})
	}
}

// TestRobustRandomLoss cuts data segments into smaller ones, so that losses fall inside frames,
// headers included, and loses one to three of them, at random, many times over. Each loss must
// be reported, nothing may be decoded from garbage without a warning, and connections that
// lost nothing must come out untouched.
//
// With segments of 100 to 400 bytes (frames start segments, as senders write them), every
// message of the original must be found, except those whose packet lost bytes and the responses
// to those requests, which are shown unpaired. With pieces of 20 to 200 bytes, packet
// boundaries no longer tell where frames start, and the bodies of these captures are full of
// small numbers that pass for frame headers: frames after a loss may then be missed, or
// decoded from garbage, but never silently.
func TestRobustRandomLoss(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 5
	}
	for _, mode := range []struct {
		name     string
		min, max int
		strict   bool
	}{
		{"segments of 100-400 bytes", 100, 400, true},
		{"pieces of 20-200 bytes", 20, 200, false},
	} {
		for _, file := range robustCaptures {
			path := pcapPath(file)
			t.Run(mode.name+"/"+file, func(t *testing.T) {
				pkts := loadPackets(t, path)
				orig := original(t, path)
				for seed := range seeds {
					t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
						randomLoss(t, pkts, orig, uint64(seed), mode.min, mode.max, mode.strict)
					})
				}
			})
		}
	}
}

func randomLoss(t *testing.T, pkts []rpkt, orig dissection, seed uint64, minPiece, maxPiece int, strict bool) {
	rng := rand.New(rand.NewPCG(seed, 99))
	var pieces []rpkt
	for _, p := range pkts {
		if len(p.payload) <= minPiece {
			pieces = append(pieces, p)
			continue
		}
		var at []int
		step := func() int { return minPiece + rng.IntN(maxPiece-minPiece+1) }
		for off := step(); off < len(p.payload); off += step() {
			at = append(at, off)
		}
		pieces = append(pieces, splitAt(p, at...)...)
	}
	data := dataIdx(pieces, nil)
	lostIdx := map[int]bool{}
	for range 1 + seed%3 {
		lostIdx[data[rng.IntN(len(data))]] = true
	}
	var out, lost []rpkt
	for i, p := range pieces {
		if lostIdx[i] {
			lost = append(lost, p)
		} else {
			out = append(out, p)
		}
	}
	src := func(p rpkt) string { return fmt.Sprintf("%s:%d", p.ip.SrcIP, p.tcp.SrcPort) }
	firstLoss := map[string]int{} // connection -> first original packet that lost bytes
	for _, l := range lost {
		t.Logf("lost %d bytes of packet %d, from %s", len(l.payload), l.orig, src(l))
		if n, ok := firstLoss[l.connKey()]; !ok || l.orig < n {
			firstLoss[l.connKey()] = l.orig
		}
	}

	d := dissectPath(t, writePcap(t, out, linkEthernet, false))
	if d.code != 0 || d.stderr != "" {
		t.Fatalf("exit %d, stderr %q", d.code, d.stderr)
	}
	d = translate(t, d, out)
	t.Logf("notices: %q", noticeTexts(d.notices))
	for _, l := range lost {
		if !hasNotice(d.notices, "bytes lost", src(l)) {
			t.Errorf("no notice of lost bytes from %s: %q", src(l), noticeTexts(d.notices))
		}
	}
	connOf := func(m line) string {
		if m.Kind == "request" {
			return m.Src + "-" + m.Dst
		}
		return m.Dst + "-" + m.Src
	}
	if !strict {
		// Connections that lost nothing, and what came before the first loss on the others,
		// come out as in the original; anything not in the original carries a warning.
		var want []line
		for _, m := range orig.msgs {
			if n, ok := firstLoss[connOf(m)]; !ok || m.Frame < n {
				want = append(want, m)
			}
		}
		checkPresent(t, d.msgs, want)
		known := map[string]bool{}
		for _, m := range orig.msgs {
			known[m.id()] = true
		}
		for _, m := range d.msgs {
			if !known[m.id()] && len(m.Warnings) == 0 {
				t.Errorf("message not in the original, without a warning: %s", m.id())
			}
		}
		return
	}

	// What the losses touched: the messages with bytes in a packet that lost bytes, and the
	// responses to those requests.
	damaged := map[string]bool{}
	var unpaired []line
	for _, m := range orig.msgs {
		for _, l := range lost {
			if m.FirstFrame <= l.orig && l.orig <= m.Frame && m.Src == src(l) {
				damaged[m.id()] = true
			}
		}
	}
	for _, m := range orig.msgs {
		if m.Kind == "response" && m.RequestFrame != nil && !damaged[m.id()] {
			for _, r := range orig.msgs {
				if damaged[r.id()] && r.Kind == "request" && r.Frame == *m.RequestFrame && r.corr() == m.corr() {
					unpaired = append(unpaired, m)
				}
			}
		}
	}
	var want []line
	for _, m := range orig.msgs {
		if !damaged[m.id()] && !slices.ContainsFunc(unpaired, func(u line) bool { return u.id() == m.id() }) {
			want = append(want, m)
		}
	}
	checkPresent(t, d.msgs, want)
	checkNoGarbage(t, d.msgs, orig.msgs, unpaired)
	for _, u := range unpaired {
		for _, m := range d.msgs {
			if m.exchange() == u.exchange() && m.Frame == u.Frame && m.RequestFrame != nil {
				t.Errorf("response %s paired with packet %d, whose request lost bytes", m.id(), *m.RequestFrame)
			}
		}
	}
}

// TestRobustSASLv0 rewrites a capture of SASL/PLAIN with SaslHandshake v1 and SaslAuthenticate
// into the older form: SaslHandshake v0, then the tokens as bare size-prefixed frames, in both
// directions (the broker's answer to PLAIN is an empty token), then Kafka requests again.
// Sequence numbers after each rewritten frame move with the new lengths.
func TestRobustSASLv0(t *testing.T) {
	path := pcapPath("kgo-sasl-plain.pcap")
	if _, err := os.Stat(path); err != nil {
		t.Skip("no SASL capture in pcaps/")
	}
	pkts := loadPackets(t, path)
	orig := original(t, path)

	// Rewrite the payloads; remember how each direction's length changed at each point.
	type shift struct {
		end   uint32 // old sequence number after the rewritten segment
		delta int64  // total change of length up to there
	}
	shifts := map[string][]shift{}
	total := map[string]int64{}
	pendingAuth := map[string]bool{} // connection -> a SaslAuthenticate request awaits its response
	tokens := 0
	out := make([]rpkt, len(pkts))
	for i, p := range pkts {
		p = p.clone()
		b := p.payload
		var nb []byte
		switch {
		case !wholeFrame(b):
		case p.toServer() && binary.BigEndian.Uint16(b[4:]) == 17: // SaslHandshake: v1 -> v0
			nb = bytes.Clone(b)
			binary.BigEndian.PutUint16(nb[6:], 0)
		case p.toServer() && binary.BigEndian.Uint16(b[4:]) == 36: // SaslAuthenticate -> token
			body := skipRequestHeader(t, b)
			r := kmsg.NewPtrSASLAuthenticateRequest()
			r.SetVersion(int16(binary.BigEndian.Uint16(b[6:])))
			if err := r.ReadFrom(body); err != nil {
				t.Fatalf("packet %d: %v", p.orig, err)
			}
			nb = sizedFrame(r.SASLAuthBytes)
			pendingAuth[p.connKey()] = true
			tokens++
		case !p.toServer() && pendingAuth[p.connKey()]:
			r := kmsg.NewPtrSASLAuthenticateResponse()
			r.SetVersion(2)
			if err := r.ReadFrom(b[9:]); err != nil { // size, correlation id, no header tags
				t.Fatalf("packet %d: %v", p.orig, err)
			}
			nb = sizedFrame(r.SASLAuthBytes)
			delete(pendingAuth, p.connKey())
			tokens++
		}
		h := p.halfKey()
		if nb != nil {
			total[h] += int64(len(nb) - len(b))
			shifts[h] = append(shifts[h], shift{end: p.tcp.Seq + uint32(len(b)), delta: total[h]})
			p.payload = nb
		}
		out[i] = p
	}
	if tokens < 4 {
		t.Fatalf("only %d SASL tokens made", tokens)
	}
	// deltaAt is the change of length of half h before old sequence number seq.
	deltaAt := func(h string, seq uint32) int64 {
		var d int64
		for _, s := range shifts[h] {
			if int32(seq-s.end) >= 0 {
				d = s.delta
			}
		}
		return d
	}
	for i := range out {
		p := &out[i]
		h := p.halfKey()
		p.tcp.Seq = uint32(int64(p.tcp.Seq) + deltaAt(h, p.tcp.Seq))
		if p.tcp.ACK {
			other := fmt.Sprintf("%s/%v", p.connKey(), !p.toServer())
			p.tcp.Ack = uint32(int64(p.tcp.Ack) + deltaAt(other, p.tcp.Ack))
		}
	}

	d := dissectPath(t, writePcap(t, out, linkEthernet, false))
	if d.code != 0 || d.stderr != "" {
		t.Fatalf("exit %d, stderr %q", d.code, d.stderr)
	}
	if len(d.notices) > 0 {
		t.Errorf("notices %q", noticeTexts(d.notices))
	}
	// The messages are the original's, with SaslHandshake at v0 and SASL tokens in place of
	// SaslAuthenticate.
	var want []line
	for _, m := range orig.msgs {
		switch {
		case m.APIKey != nil && *m.APIKey == 36:
		case m.APIKey != nil && *m.APIKey == 17:
			zero := int16(0)
			m.APIVersion = &zero
			want = append(want, m)
		default:
			want = append(want, m)
		}
	}
	var got []line
	sasl := 0
	for _, m := range d.msgs {
		if m.isSASLToken() {
			sasl++
			continue
		}
		got = append(got, m)
	}
	sameMessages(t, got, want)
	if sasl != tokens {
		t.Errorf("%d SASL tokens shown, want %d", sasl, tokens)
	}
}

// skipRequestHeader returns the body of a request frame with a v2 (flexible) header.
func skipRequestHeader(t *testing.T, b []byte) []byte {
	t.Helper()
	n := int(int16(binary.BigEndian.Uint16(b[12:])))
	off := 14 + max(n, 0)
	if b[off] != 0 {
		t.Fatalf("request header with tagged fields")
	}
	return b[off+1:]
}

func sizedFrame(token []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(token))), token...)
}
