// Package connsgen writes synthetic captures of many Kafka connections that each send one
// request and get its response, left open or closed: the shape of a day of health checks, a
// port scan, or a capture cut while clients are connected. kbench conns writes them for
// measurements, and tests write small ones.
package connsgen

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// DefaultEvery is the capture time between connections' starts: a thousand a second.
const DefaultEvery = time.Millisecond

// ServerPort is the broker's port every connection goes to.
const ServerPort = 9092

// Spec says what capture to write.
type Spec struct {
	Conns int           // how many connections
	Close bool          // end each connection with FINs both ways after its response
	Every time.Duration // capture time between connections' starts
	// Pause, when positive, is capture time added once after connection PauseAfter has
	// started: what idle connections look like.
	Pause      time.Duration
	PauseAfter int
}

// start is the capture time of the first packet.
var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Write writes spec's capture to w, as pcap with Ethernet links. Connection i goes from its own
// client address (10.x.y.z) to 10.0.0.1:9092: its handshake, one ApiVersions v0 request with
// correlation id i, the response, ACKs, and with Close the FINs.
func Write(w io.Writer, spec Spec) error {
	pw := pcapgo.NewWriter(w)
	if err := pw.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		return err
	}
	g := gen{w: pw, buf: gopacket.NewSerializeBuffer(), now: start}
	for i := 0; i < spec.Conns; i++ {
		if err := g.conn(i, spec.Close); err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		g.now = g.now.Add(spec.Every)
		if spec.Pause > 0 && i == spec.PauseAfter {
			g.now = g.now.Add(spec.Pause)
		}
	}
	return nil
}

type gen struct {
	w   *pcapgo.Writer
	buf gopacket.SerializeBuffer
	now time.Time
}

// side is one end of a connection: its address, port and next sequence number.
type side struct {
	ip   net.IP
	port uint16
	seq  uint32
}

// step is one packet of a connection: flags as letters (S, A, P, F) and its payload.
type step struct {
	from, to *side
	flags    string
	data     []byte
}

// conn writes connection i's packets, 10 µs apart.
func (g *gen) conn(i int, close bool) error {
	c := &side{ip: net.IPv4(10, byte(1+i>>16), byte(i>>8), byte(i)).To4(), port: uint16(40000 + i%20000), seq: 1000}
	s := &side{ip: net.IPv4(10, 0, 0, 1).To4(), port: ServerPort, seq: 5000}
	req, resp := Request(int32(i)), Response(int32(i))
	steps := []step{
		{c, s, "S", nil}, {s, c, "SA", nil}, {c, s, "A", nil},
		{c, s, "PA", req}, {s, c, "A", nil}, {s, c, "PA", resp}, {c, s, "A", nil},
	}
	if close {
		steps = append(steps, step{c, s, "FA", nil}, step{s, c, "FA", nil}, step{c, s, "A", nil})
	}
	t := g.now
	for _, st := range steps {
		if err := g.packet(t, st.from, st.to, st.flags, st.data); err != nil {
			return err
		}
		t = t.Add(10 * time.Microsecond)
	}
	return nil
}

// packet writes one segment from one side to the other and advances the sender's sequence.
func (g *gen) packet(t time.Time, from, to *side, flags string, data []byte) error {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: from.ip, DstIP: to.ip}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(from.port), DstPort: layers.TCPPort(to.port), Seq: from.seq, Window: 65535}
	for _, f := range flags {
		switch f {
		case 'S':
			tcp.SYN = true
		case 'A':
			tcp.ACK, tcp.Ack = true, to.seq
		case 'P':
			tcp.PSH = true
		case 'F':
			tcp.FIN = true
		}
	}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		return err
	}
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(g.buf, opts, eth, ip, tcp, gopacket.Payload(data)); err != nil {
		return err
	}
	from.seq += uint32(len(data))
	if tcp.SYN || tcp.FIN {
		from.seq++
	}
	b := g.buf.Bytes()
	return g.w.WritePacket(gopacket.CaptureInfo{Timestamp: t, CaptureLength: len(b), Length: len(b)}, b)
}

// ClientID is the client id of every request.
const ClientID = "health-check"

// Request is an ApiVersions v0 request with the given correlation id, size prefix included.
func Request(corr int32) []byte {
	b := make([]byte, 4, 32)
	b = binary.BigEndian.AppendUint16(b, 18) // ApiVersions
	b = binary.BigEndian.AppendUint16(b, 0)  // version 0
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len(ClientID)))
	b = append(b, ClientID...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// Response is the ApiVersions v0 response to Request(corr): no error, three APIs.
func Response(corr int32) []byte {
	b := make([]byte, 4, 40)
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 0) // no error
	apis := [][3]uint16{{0, 0, 9}, {1, 0, 13}, {18, 0, 3}}
	b = binary.BigEndian.AppendUint32(b, uint32(len(apis)))
	for _, a := range apis {
		for _, v := range a {
			b = binary.BigEndian.AppendUint16(b, v)
		}
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}
