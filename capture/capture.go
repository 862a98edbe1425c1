// Package capture reads packet captures (files, streams arriving on a pipe, and on Linux a
// live interface through an AF_PACKET socket) and decodes their packets down to TCP segments.
// It knows nothing of Kafka beyond the TCP ports it is told to keep.
//
// A capture is a pcap file (either byte order, microsecond or nanosecond
// timestamps) or a pcapng file (any number of interfaces, each with its own
// link type and timestamp resolution), optionally gzipped. The format is
// chosen by the leading magic bytes, never by the file name. pcapng is read with
// pcapgo; pcap with a reader of this package (pcap.go), which also takes the
// records some tools write with a captured length above the original length.
//
// Packets are decoded with gopacket's DecodingLayerParser and reused layer
// structs, through the link layer (Ethernet with any number of 802.1Q/802.1ad
// VLAN tags, Linux cooked SLL and SLL2, BSD null and OpenBSD loop, raw IP),
// IPv4 or IPv6 (with extension headers) and TCP. Packets that do not carry TCP
// are skipped but counted. The packet nearly every capture is made of, TCP in IPv4
// without options in Ethernet, is decoded into the same structs without the parser.
//
// IP lengths are trusted over capture lengths: bytes after the end of the IP
// packet (Ethernet padding, a frame check sequence) never become TCP payload,
// and a packet whose IP length claims more bytes than were captured is
// reported as truncated, with the number of missing bytes.
package capture

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/kdissect/kdissect/internal/plural"
)

// MaxCaptureLength is the longest packet record a capture may hold: libpcap's
// MAXIMUM_SNAPLEN, which tcpdump and Wireshark also use. A record that claims
// more is taken as a sign of a damaged file.
const MaxCaptureLength = 262144

// ErrUnsupportedLinkType is wrapped by the errors for packets, or pcap files,
// whose link type this package cannot decode.
var ErrUnsupportedLinkType = errors.New("unsupported link type")

// Magic numbers at the start of a capture file, read as big-endian uint32s.
const (
	magicPcapMicro        = 0xa1b2c3d4
	magicPcapMicroSwapped = 0xd4c3b2a1
	magicPcapNano         = 0xa1b23c4d
	magicPcapNanoSwapped  = 0x4d3cb2a1
	magicPcapKuznetzov    = 0xa1b2cd34 // "modified" pcap, written by old patched libpcaps
	magicPcapKuznetzovSw  = 0x34cdb2a1
	magicPcapng           = 0x0a0d0d0a // section header block type, a palindrome
	gzipMagic             = 0x1f8b
)

// Segment is one packet that carries TCP.
type Segment struct {
	// Num is the 1-based number of the packet in the file, counting every
	// packet (TCP or not, decodable or not), as Wireshark numbers them.
	Num int
	// Info holds the timestamp, the captured and original lengths and, for
	// pcapng, the interface index. Its AncillaryData is always nil.
	Info gopacket.CaptureInfo
	// LinkType is the link type of the packet's file or pcapng interface.
	LinkType layers.LinkType
	// Net is the IPv4 or IPv6 flow, source to destination.
	Net gopacket.Flow
	// TCP is the decoded TCP header; its Payload is trimmed to the length
	// the IP header gives. The Segment, TCP and the bytes it points to are
	// reused: they are valid only until the next call to Next.
	TCP *layers.TCP
	// Truncated reports that the packet was cut by the snap length, so that
	// part of the TCP payload is missing (Missing bytes of it).
	Truncated bool
	// Missing is how many bytes the IP length claims beyond what was
	// captured.
	Missing int
	// Raw is the packet as the file holds it, link layer included, for
	// writing it out again; valid only until the next call to Next.
	Raw []byte
}

// Stats counts what a Reader has read so far. Every packet is counted in
// Packets and in exactly one of TCP, Other and Malformed.
type Stats struct {
	Packets int // every packet record read
	TCP     int // returned as a Segment
	// Other counts packets that do not carry a TCP segment: ARP, UDP, ICMP,
	// other EtherTypes, and IP fragments (which are not reassembled).
	Other int
	// Truncated counts packets cut by the snap length inside their TCP
	// header or payload: returned Segments with Truncated set, and
	// PacketErrors for packets cut before the TCP header was complete.
	Truncated int
	// Malformed counts packets that gave a PacketError.
	Malformed int
}

// PacketError reports a packet that could not be decoded. The Reader is still
// usable: Next may be called again.
type PacketError struct {
	File string // file name, as given to Open or NewReader
	Num  int    // 1-based packet number
	Err  error
}

func (e *PacketError) Error() string {
	return fmt.Sprintf("%s: packet %d: %v", e.File, e.Num, e.Err)
}

func (e *PacketError) Unwrap() error { return e.Err }

// Reader reads the TCP segments of a capture file. A Reader is not safe for
// concurrent use.
type Reader struct {
	name   string
	closer io.Closer // the file opened by Open, or nil
	src    source
	stats  Stats
	err    error // sticky fatal error

	dec decoder
	// dsb collects the pcapng Decryption Secrets Blocks (see Secrets).
	dsb *dsbScanner
	// counter counts the bytes read from the file; total is its size (see Progress).
	counter *countingReader
	total   int64
	gzipped bool
	// pcap is the source of a pcap file (nil for pcapng), for Overlong.
	pcap *pcapReader
	// streaming: packets arrive as they are captured (a live capture, a pipe); pipe reads a
	// stream's bytes, and stopped is set by Stop.
	streaming bool
	pipe      *pipeReader
	stopped   atomic.Bool
	// tap is shown every packet read (SetTap).
	tap Tap
}

// Tap sees the packets of a capture as they are read, before they are decoded: every one, TCP
// or not. Data is the capture's own buffer, valid only during the call: a Tap that keeps a
// packet copies it.
type Tap interface {
	Packet(ci gopacket.CaptureInfo, lt layers.LinkType, data []byte)
}

// SetTap makes Next show t every packet it reads from now on, before it decodes it: the
// flight recorder's ring and the rotating pcapng files of a live capture or a pipe.
func (r *Reader) SetTap(t Tap) { r.tap = t }

// Overlong reports the pcap records read so far whose captured length exceeds the packet's
// original length, which some capture tools write (tshark warns "Frame length is less than
// captured length"): how many, and the first one's packet number and two lengths. They are
// read like any other: the decoder trusts the IP header's length, not the capture's.
func (r *Reader) Overlong() (n, packet, capLen, length int) {
	if r.pcap == nil {
		return 0, 0, 0, 0
	}
	p := r.pcap
	return p.overlong, p.firstOverlong, p.firstCap, p.firstLen
}

// source is a pcap or pcapng reader. read returns a buffer that is reused by
// the next call, the packet's capture info and its link type; on error ci
// may hold the lengths of the record that could not be read.
type source interface {
	read() (data []byte, ci gopacket.CaptureInfo, lt layers.LinkType, err error)
}

// Open opens the named capture file: pcap (both byte orders, microsecond and
// nanosecond timestamps) or pcapng, either of them gzipped. The format is
// chosen by the magic bytes, never by the file name. A FIFO is read as its
// packets arrive (see Streaming); opening one waits for its writer.
func Open(name string) (*Reader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	r, err := newReader(f, name, fileBuffer)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && !r.gzipped {
		r.total = fi.Size()
	}
	return r, nil
}

// NewReader is Open for an already open stream; name is used in error
// messages. It reads the file header before returning. Close does not close r.
// An *os.File that is a pipe, FIFO, socket or terminal is read as its packets
// arrive (see Streaming).
func NewReader(r io.Reader, name string) (*Reader, error) {
	return newReader(r, name, streamBuffer)
}

// The read buffers: pcapgo reads each packet in two small reads, so a file is read through a
// large buffer; a stream (often small, as in tests and fuzzing) through a smaller one.
const (
	fileBuffer   = 1 << 20
	streamBuffer = 64 << 10
)

func newReader(r io.Reader, name string, bufSize int) (*Reader, error) {
	rd := &Reader{name: name}
	if IsStream(r) {
		rd.streaming, rd.pipe = true, newPipeReader(r)
		r, bufSize = rd.pipe, streamBuffer
	}
	counter := &countingReader{r: r}
	br := bufio.NewReaderSize(counter, bufSize)
	counter.buf = br
	rd.counter = counter

	magic, err := br.Peek(4)
	if len(magic) >= 2 && binary.BigEndian.Uint16(magic) == gzipMagic {
		zr, zerr := gzip.NewReader(br)
		if zerr != nil {
			return nil, fmt.Errorf("%s: gzip: %w", name, zerr)
		}
		br, rd.gzipped = bufio.NewReaderSize(zr, bufSize), true
		magic, err = br.Peek(4)
		switch {
		case len(magic) == 0 && err == io.EOF:
			return nil, fmt.Errorf("%s: empty file inside gzip: not a capture", name)
		case err != nil && err != io.EOF && err != io.ErrUnexpectedEOF:
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
	}
	switch {
	case len(magic) == 0 && err == io.EOF:
		return nil, fmt.Errorf("%s: empty file: not a capture", name)
	case len(magic) < 4 && (err == io.EOF || err == io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%s: only %s: not a capture", name, plural.Count(len(magic), "byte"))
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	}

	switch m := binary.BigEndian.Uint32(magic); m {
	case magicPcapMicro, magicPcapMicroSwapped, magicPcapNano, magicPcapNanoSwapped:
		pr, err := newPcapReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: pcap header: %w", name, err)
		}
		if !supported(pr.linkType) {
			return nil, fmt.Errorf("%s: link type %s (%d): %w", name, pr.linkType, uint16(pr.linkType), ErrUnsupportedLinkType)
		}
		rd.src, rd.pcap = pr, pr
	case magicPcapng:
		rd.dsb = &dsbScanner{r: br}
		nr, err := pcapgo.NewNgReader(rd.dsb, pcapgo.NgReaderOptions{WantMixedLinkType: true})
		if err != nil {
			return nil, fmt.Errorf("%s: pcapng section header: %w", name, headerErr(err))
		}
		rd.src = ngSource{nr}
	case magicPcapKuznetzov, magicPcapKuznetzovSw:
		return nil, fmt.Errorf("%s: modified (Kuznetzov) pcap format is not supported; convert it with editcap -F pcap", name)
	default:
		return nil, fmt.Errorf("%s: not a pcap or pcapng file (starts with %s)", name, describeMagic(magic))
	}
	return rd, nil
}

// headerErr makes an early end of file in a header read as such.
func headerErr(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// describeMagic shows the first bytes of a file that is not a capture.
func describeMagic(b []byte) string {
	printable := true
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c > 0x7e {
			printable = false
		}
	}
	if printable {
		return fmt.Sprintf("%q, which looks like text", b)
	}
	return fmt.Sprintf("bytes % x", b)
}

// Streaming reports whether the packets arrive as they are captured (a live
// capture, or a pipe, FIFO or socket that a capture tool writes to), rather
// than from a file that holds them all: Next then waits for each packet, for
// as long as the writer is quiet, until Stop is called or the writer closes.
func (r *Reader) Streaming() bool { return r.streaming }

// Close releases the resources of the Reader and, if it was made by Open,
// closes the file.
func (r *Reader) Close() error {
	r.Stop()
	var err error
	if r.closer != nil {
		err = r.closer.Close()
		r.closer = nil
	}
	r.err = fmt.Errorf("%s: %w", r.name, os.ErrClosed)
	return err
}

// Stats returns what has been counted so far.
func (r *Reader) Stats() Stats { return r.stats }

// Next returns the next packet that carries TCP, with or without payload.
// Packets that are not TCP are skipped but counted in the packet numbers.
//
// A packet that cannot be decoded gives a *PacketError, after which Next may
// be called again. At the end of the file Next returns io.EOF. Any other error
// is fatal and is returned again by every later call.
func (r *Reader) Next() (*Segment, error) {
	if r.stopped.Load() && r.err == nil {
		r.err = io.EOF
	}
	if r.err != nil {
		return nil, r.err
	}
	for {
		data, ci, lt, err := r.src.read()
		if err != nil {
			if r.stopped.Load() {
				// Stopped inside a record: the end asked for, not a damaged capture.
				err, ci = io.EOF, gopacket.CaptureInfo{}
			}
			r.err = r.readErr(err, ci)
			return nil, r.err
		}
		r.stats.Packets++
		num := r.stats.Packets
		ci.AncillaryData = nil
		if r.tap != nil {
			r.tap.Packet(ci, lt, data)
		}

		seg, truncated, err := r.dec.decode(data, lt, ci.CaptureLength < ci.Length)
		if err != nil {
			r.stats.Malformed++
			if truncated {
				r.stats.Truncated++
			}
			return nil, &PacketError{File: r.name, Num: num, Err: err}
		}
		if seg == nil {
			r.stats.Other++
			continue
		}
		r.stats.TCP++
		if seg.Truncated {
			r.stats.Truncated++
		}
		seg.Num = num
		seg.Info = ci
		seg.LinkType = lt
		seg.Raw = data
		return seg, nil
	}
}

// readErr turns an error from the pcap or pcapng reader into the Reader's
// fatal error: io.EOF at a clean end, otherwise an error that names the file
// and the last packet read.
func (r *Reader) readErr(err error, ci gopacket.CaptureInfo) error {
	last := r.stats.Packets
	switch {
	case ci.CaptureLength > MaxCaptureLength || ci.CaptureLength < 0:
		// ci.CaptureLength is negative when a uint32 length does not fit in int.
		return fmt.Errorf("%s: after packet %d: the next record claims %d captured bytes, more than the %d a capture holds: the file is damaged (%w)",
			r.name, last, uint32(ci.CaptureLength), MaxCaptureLength, err)
	case err == io.EOF && ci.CaptureLength == 0:
		return io.EOF
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return fmt.Errorf("%s: truncated after packet %d: %w", r.name, last, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("%s: after packet %d: %w", r.name, last, err)
}

type ngSource struct{ r *pcapgo.NgReader }

func (s ngSource) read() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	data, ci, err := s.r.ZeroCopyReadPacketData()
	if err != nil {
		return nil, ci, 0, err
	}
	if ci.CaptureLength > MaxCaptureLength {
		// Read, but bigger than any capture tool writes: see readErr.
		return nil, ci, 0, errors.New("record too long")
	}
	// With WantMixedLinkType the reader puts the interface's link type here.
	if len(ci.AncillaryData) == 0 {
		return nil, ci, 0, errors.New("pcapng reader gave no link type")
	}
	lt, ok := ci.AncillaryData[0].(layers.LinkType)
	if !ok {
		return nil, ci, 0, errors.New("pcapng reader gave no link type")
	}
	return data, ci, lt, nil
}
