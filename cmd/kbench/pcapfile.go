package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// packetSource is a pcap or pcapng reader.
type packetSource interface {
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	LinkType() layers.LinkType
}

// openCapture opens a pcap or pcapng file (not gzipped: kbench makes its own captures).
func openCapture(name string) (packetSource, *os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	magic, err := br.Peek(4)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: not a capture: %w", name, err)
	}
	var src packetSource
	if magic[0] == 0x0a && magic[1] == 0x0d && magic[2] == 0x0d && magic[3] == 0x0a {
		src, err = pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
	} else {
		src, err = pcapgo.NewReader(br)
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return src, f, nil
}

// captureInfo is what inspectCapture learns of a file.
type captureInfo struct {
	size        int64
	packets     int64
	truncated   int64 // packets cut by the snap length
	maxLen      int   // largest packet on the wire
	first, last time.Time
}

func (c captureInfo) duration() time.Duration { return c.last.Sub(c.first) }

// inspectCapture reads every packet of a capture once.
func inspectCapture(name string) (captureInfo, error) {
	var c captureInfo
	st, err := os.Stat(name)
	if err != nil {
		return c, err
	}
	c.size = st.Size()
	src, f, err := openCapture(name)
	if err != nil {
		return c, err
	}
	defer f.Close()
	for {
		_, ci, err := src.ZeroCopyReadPacketData()
		if errors.Is(err, io.EOF) {
			return c, nil
		}
		if err != nil {
			return c, fmt.Errorf("after packet %d: %w", c.packets, err)
		}
		if c.packets == 0 {
			c.first = ci.Timestamp
		}
		c.last = ci.Timestamp
		c.packets++
		if ci.CaptureLength < ci.Length {
			c.truncated++
		}
		c.maxLen = max(c.maxLen, ci.Length)
	}
}

// doubleCapture writes to out the capture in, followed by in again with every timestamp moved
// past the end of the first copy (by its duration plus one second), as mergecap -a would
// after editcap -t, and with the last byte of every IP address (source and destination) of
// the second copy raised by one, checksums adjusted. Without that, each connection of the
// second copy would reuse the 4-tuple and the sequence numbers of the first, and the TCP
// reassembly of any dissector would take much of it for retransmissions of data it has already
// seen, or attach it to the first copy's connections. The result is a classic pcap. It returns
// the number of packets of the second copy whose addresses could not be moved (link types other
// than Ethernet and raw IP, non-IP packets).
func doubleCapture(in, out string) (unmoved int64, err error) {
	info, err := inspectCapture(in)
	if err != nil {
		return 0, err
	}
	shift := info.duration() + time.Second
	f, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	var w *pcapgo.Writer
	var buf []byte
	for copyNum := range 2 {
		src, rf, err := openCapture(in)
		if err != nil {
			return 0, err
		}
		lt := src.LinkType()
		if w == nil {
			w = pcapgo.NewWriterNanos(bw)
			if err := w.WriteFileHeader(262144, lt); err != nil {
				rf.Close()
				return 0, err
			}
		}
		for {
			data, ci, err := src.ZeroCopyReadPacketData()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rf.Close()
				return 0, fmt.Errorf("%s: %w", in, err)
			}
			if copyNum == 1 {
				ci.Timestamp = ci.Timestamp.Add(shift)
				buf = append(buf[:0], data...)
				data = buf
				if !moveAddresses(data, lt) {
					unmoved++
				}
			}
			ci.AncillaryData = nil
			if err := w.WritePacket(ci, data); err != nil {
				rf.Close()
				return 0, fmt.Errorf("%s: %w", out, err)
			}
		}
		rf.Close()
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return unmoved, f.Close()
}

// moveAddresses raises the last byte of the source and destination addresses of an IPv4 or
// IPv6 packet by one, updating the IPv4 header checksum and the TCP or UDP checksum
// incrementally (RFC 1624). It reports whether it could.
func moveAddresses(pkt []byte, lt layers.LinkType) bool {
	ip := pkt
	switch lt {
	case layers.LinkTypeEthernet:
		if len(pkt) < 14 {
			return false
		}
		off, etype := 14, binary.BigEndian.Uint16(pkt[12:14])
		for (etype == 0x8100 || etype == 0x88a8) && len(pkt) >= off+4 {
			etype = binary.BigEndian.Uint16(pkt[off+2 : off+4])
			off += 4
		}
		if etype != 0x0800 && etype != 0x86dd {
			return false
		}
		ip = pkt[off:]
	case layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6:
	default:
		return false
	}
	if len(ip) < 1 {
		return false
	}
	var addrEnds []int // offsets of the last byte of each address
	var proto byte
	var l4 []byte
	switch ip[0] >> 4 {
	case 4:
		ihl := int(ip[0]&0x0f) * 4
		if ihl < 20 || len(ip) < ihl {
			return false
		}
		addrEnds = []int{15, 19}
		proto = ip[9]
		// The transport checksum is only in the first fragment.
		if binary.BigEndian.Uint16(ip[6:8])&0x1fff == 0 {
			l4 = ip[ihl:]
		}
	case 6:
		if len(ip) < 40 {
			return false
		}
		addrEnds = []int{23, 39}
		proto = ip[6] // extension headers: the transport checksum is left alone
		l4 = ip[40:]
	default:
		return false
	}
	var sumOff = -1
	switch {
	case proto == 6 && len(l4) >= 18:
		sumOff = 16
	case proto == 17 && len(l4) >= 8 && binary.BigEndian.Uint16(l4[6:8]) != 0:
		sumOff = 6
	}
	for _, end := range addrEnds {
		word := end - 1 // the 16-bit word holding the last byte
		old := binary.BigEndian.Uint16(ip[word : word+2])
		ip[end]++
		now := binary.BigEndian.Uint16(ip[word : word+2])
		if ip[0]>>4 == 4 {
			adjustChecksum(ip[10:12], old, now)
		}
		if sumOff >= 0 {
			adjustChecksum(l4[sumOff:sumOff+2], old, now)
		}
	}
	return true
}

// adjustChecksum updates an Internet checksum for one 16-bit word changed from old to now
// (RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m')).
func adjustChecksum(sum []byte, old, now uint16) {
	s := uint32(^binary.BigEndian.Uint16(sum)) + uint32(^old) + uint32(now)
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	binary.BigEndian.PutUint16(sum, ^uint16(s))
}
