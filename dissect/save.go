package dissect

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/model"
)

// Save writes the packets that carry the messages a pipeline shows to a pcapng file (-w), so
// that kdissect, tshark and Wireshark read back the same messages from a file cut down to them:
// every packet of each message's direction of its connection from the packet of its first byte
// to that of its last (its segments, and retransmissions among them), and the connection's
// handshake (SYN, SYN/ACK and the ACK after them) when the capture has it. For a message that
// came through TLS, every packet of the connection up to its last: decryption needs the
// handshake and every record before. Packets keep their link type and their timestamps, to the
// nanosecond.
//
// A capture file is read twice: the pipeline shows its messages, and Save learns which packets
// carry them (Note, as Config.OnShow); then Save reads the file again and writes those packets
// (Write).
type Save struct {
	out io.Writer
	w   *pcapgo.NgWriter
	// ifaces gives the pcapng interface of each link type written.
	ifaces map[layers.LinkType]int
	conns  map[connKey]*savedConn
	// written counts the packets written.
	written int
	// file, for a Save that CreateSave made, is closed by Close.
	file io.Closer
}

// connKey names a connection whichever way a packet goes: its two endpoints, in order.
type connKey struct{ a, b netip.AddrPort }

func keyOfEndpoints(x, y netip.AddrPort) connKey {
	if x.Compare(y) > 0 {
		x, y = y, x
	}
	return connKey{x, y}
}

// pktRange is the packets from first to last that went from src.
type pktRange struct {
	src         netip.AddrPort
	first, last int
}

// savedConn is what Save keeps for one connection: the ranges of packets to write, sorted by
// their first packet when the file is read again, and how far that reading is.
type savedConn struct {
	ranges []pktRange
	// upTo: every packet up to this one is written (TLS).
	upTo int
	// next is the first range that may still hold a packet; syn and acked follow the
	// handshake: a SYN was written, and the ACK after it too.
	next       int
	syn, acked bool
}

// ErrSavingInput is CreateSave's refusal of a file that is one of the captures being read,
// which it would overwrite as they are read.
var ErrSavingInput = errors.New("that is a capture being read")

// CreateSave creates the named file and returns a Save that writes to it, which Close closes;
// it refuses one of the captures (ErrSavingInput).
func CreateSave(name string, captures []string) (*Save, error) {
	if _, ok := capture.Overwrites(name, captures); ok {
		return nil, ErrSavingInput
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	s := NewSave(f)
	s.file = f
	return s, nil
}

// NewSave returns a Save that writes to w; nothing is written until the first packet.
func NewSave(w io.Writer) *Save {
	return &Save{out: w, ifaces: map[layers.LinkType]int{}, conns: map[connKey]*savedConn{}}
}

// Written returns how many packets have been written.
func (s *Save) Written() int { return s.written }

// Note notes a message the pipeline shows (Config.OnShow): its packets are written by the
// next Write.
func (s *Save) Note(e *model.Entry) {
	src, err1 := netip.ParseAddrPort(e.Src)
	dst, err2 := netip.ParseAddrPort(e.Dst)
	if err1 != nil || err2 != nil {
		return // not from a capture's connection (raw frames)
	}
	k := keyOfEndpoints(src, dst)
	c := s.conns[k]
	if c == nil {
		c = &savedConn{}
		s.conns[k] = c
	}
	if e.TLS != "" {
		c.upTo = max(c.upTo, e.Frame)
		return
	}
	c.ranges = append(c.ranges, pktRange{src: src, first: e.FirstFrame, last: e.Frame})
}

// Write reads the capture again and writes the packets of the messages noted since the last
// call. It returns only errors writing: the reading was the first one's, which reported its
// problems.
func (s *Save) Write(r *capture.Reader) error {
	defer clear(s.conns)
	if len(s.conns) == 0 {
		return nil
	}
	for _, c := range s.conns {
		slices.SortFunc(c.ranges, func(a, b pktRange) int { return cmp.Compare(a.first, b.first) })
	}
	last := 0
	for _, c := range s.conns {
		last = max(last, c.upTo)
		if n := len(c.ranges); n > 0 {
			last = max(last, slices.MaxFunc(c.ranges, func(a, b pktRange) int { return cmp.Compare(a.last, b.last) }).last)
		}
	}
	for {
		seg, err := r.Next()
		var pe *capture.PacketError
		switch {
		case errors.As(err, &pe):
			continue
		case err != nil:
			return nil // the end, or the damage the first reading reported
		}
		if seg.Num > last {
			return nil // nothing after the last packet of a message shown
		}
		if s.keep(seg) {
			if err := s.writePacket(seg); err != nil {
				return err
			}
		}
	}
}

// keep decides on one packet of the second reading.
func (s *Save) keep(seg *capture.Segment) bool {
	srcIP, _ := netip.AddrFromSlice(seg.Net.Src().Raw())
	dstIP, _ := netip.AddrFromSlice(seg.Net.Dst().Raw())
	src := netip.AddrPortFrom(srcIP.Unmap(), uint16(seg.TCP.SrcPort))
	dst := netip.AddrPortFrom(dstIP.Unmap(), uint16(seg.TCP.DstPort))
	c := s.conns[keyOfEndpoints(src, dst)]
	if c == nil {
		return false
	}
	tcp := seg.TCP
	switch {
	case seg.Num <= c.upTo:
		return true
	case tcp.SYN:
		c.syn = true
		return true
	case c.syn && !c.acked && len(tcp.Payload) == 0 && !tcp.FIN && !tcp.RST:
		c.acked = true // the handshake's last packet
		return true
	}
	c.acked = true
	for c.next < len(c.ranges) && c.ranges[c.next].last < seg.Num {
		c.next++
	}
	for _, r := range c.ranges[c.next:] {
		if r.first > seg.Num {
			break
		}
		if r.src == src && seg.Num <= r.last {
			return true
		}
	}
	return false
}

// writePacket writes one packet, on the pcapng interface of its link type.
func (s *Save) writePacket(seg *capture.Segment) error {
	id, ok := s.ifaces[seg.LinkType]
	if !ok {
		intf := pcapgo.NgInterface{LinkType: seg.LinkType, SnapLength: capture.MaxCaptureLength, TimestampResolution: 9,
			Name: fmt.Sprintf("kdissect-%d", len(s.ifaces))}
		var err error
		if s.w == nil {
			s.w, err = pcapgo.NewNgWriterInterface(s.out, intf, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "kdissect"}})
		} else {
			id, err = s.w.AddInterface(intf)
		}
		if err != nil {
			return err
		}
		s.ifaces[seg.LinkType] = id
	}
	ci := seg.Info
	ci.InterfaceIndex = id
	ci.CaptureLength = len(seg.Raw)
	if err := s.w.WritePacket(ci, seg.Raw); err != nil {
		return err
	}
	s.written++
	return nil
}

// Close writes what is buffered, and closes the file of a Save that CreateSave made. A Save
// that wrote no packet still writes a valid, empty pcapng file (one Ethernet interface), so
// that readers of the file do not fail on it.
func (s *Save) Close() error {
	err := s.flush()
	if s.file != nil {
		if cerr := s.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

func (s *Save) flush() error {
	if s.w == nil {
		w, err := pcapgo.NewNgWriter(s.out, layers.LinkTypeEthernet)
		if err != nil {
			return err
		}
		s.w = w
	}
	return s.w.Flush()
}
