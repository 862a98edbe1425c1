package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// pcapReader reads the records of a pcap file. It is pcapgo.Reader's job, done here for one
// difference: pcapgo refuses a record whose captured length exceeds the packet's original
// length, and stops the file there. Some capture tools write such records (16 bytes more
// captured than the packet had); tshark reads them with the warning "Frame length is less than
// captured length". So does this reader, which counts them (overlong) for the caller to say
// so once: the IP header's length, which the decoder trusts over the capture's, tells where
// the packet ends.
type pcapReader struct {
	r         *bufio.Reader
	order     binary.ByteOrder
	nanoScale int64 // 1 for nanosecond timestamps, 1000 for microseconds
	snaplen   uint32
	linkType  layers.LinkType
	hdr       [16]byte
	buf       []byte
	// overlong counts the records whose captured length exceeds their original length;
	// firstOverlong is the first one's packet number and lengths.
	overlong                          int
	firstOverlong, firstCap, firstLen int
	records                           int
}

// newPcapReader reads the file header.
func newPcapReader(r *bufio.Reader) (*pcapReader, error) {
	var h [24]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, headerErr(err)
	}
	p := &pcapReader{r: r}
	switch binary.BigEndian.Uint32(h[:4]) {
	case magicPcapMicro:
		p.order, p.nanoScale = binary.BigEndian, 1000
	case magicPcapMicroSwapped:
		p.order, p.nanoScale = binary.LittleEndian, 1000
	case magicPcapNano:
		p.order, p.nanoScale = binary.BigEndian, 1
	case magicPcapNanoSwapped:
		p.order, p.nanoScale = binary.LittleEndian, 1
	default:
		return nil, fmt.Errorf("Unknown magic %x", binary.LittleEndian.Uint32(h[:4]))
	}
	if v := p.order.Uint16(h[4:]); v != 2 {
		return nil, fmt.Errorf("Unknown major version %d", v)
	}
	if v := p.order.Uint16(h[6:]); v != 4 {
		return nil, fmt.Errorf("Unknown minor version %d", v)
	}
	p.snaplen = p.order.Uint32(h[16:])
	// The link type is the low 16 bits; the high ones may carry FCS information.
	p.linkType = layers.LinkType(p.order.Uint32(h[20:]))
	return p, nil
}

// errRecordTooLong is the error for a record longer than any capture holds (see readErr).
var errRecordTooLong = errors.New("record too long")

// read returns the next record's bytes, valid until the next call. On error, ci holds the
// lengths of the record that could not be read, when its header was.
func (p *pcapReader) read() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	var ci gopacket.CaptureInfo
	if _, err := io.ReadFull(p.r, p.hdr[:]); err != nil {
		return nil, ci, p.linkType, err
	}
	sec, frac := int64(p.order.Uint32(p.hdr[0:])), int64(p.order.Uint32(p.hdr[4:]))
	ci.Timestamp = time.Unix(sec, frac*p.nanoScale).UTC()
	ci.CaptureLength = int(p.order.Uint32(p.hdr[8:]))
	ci.Length = int(p.order.Uint32(p.hdr[12:]))
	if ci.CaptureLength < 0 || ci.CaptureLength > MaxCaptureLength {
		// Read, but bigger than any capture tool writes: see readErr. The length comes from
		// the file: nothing is allocated for it.
		return nil, ci, p.linkType, errRecordTooLong
	}
	p.records++
	if ci.CaptureLength > ci.Length {
		p.overlong++
		if p.overlong == 1 {
			p.firstOverlong, p.firstCap, p.firstLen = p.records, ci.CaptureLength, ci.Length
		}
	}
	data, err := p.record(ci.CaptureLength)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, ci, p.linkType, err
	}
	return data, ci, p.linkType, nil
}

// record reads the n bytes of a record, valid until the next call: where they lie in the
// read buffer when it can hold them (every record of most captures), which saves copying
// each packet once more; else copied out into p.buf.
func (p *pcapReader) record(n int) ([]byte, error) {
	if n <= p.r.Size() {
		data, err := p.r.Peek(n)
		if err != nil {
			return nil, err
		}
		_, err = p.r.Discard(n)
		return data, err
	}
	if cap(p.buf) < n {
		// Doubling: records that grow one by one do not each make a buffer.
		p.buf = make([]byte, min(max(n, 2*cap(p.buf), 2048), MaxCaptureLength))
	}
	data := p.buf[:n]
	_, err := io.ReadFull(p.r, data)
	return data, err
}
