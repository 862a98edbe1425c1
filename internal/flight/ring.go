// Package flight is the flight recorder of a live capture: a Ring holds the packets last
// captured, within a fixed number of bytes, and a Recorder watches the messages shown for a
// pair that matches an expression (an error, a latency over a bound), and saves the ring's
// packets around it to a pcapng file.
package flight

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Ring holds the packets last captured in a buffer of a fixed size, allocated once: a packet
// added pushes the oldest out until it fits. It is a capture.Tap, and safe for use by several
// goroutines.
type Ring struct {
	mu  sync.Mutex
	buf []byte
	// Records are stored one after another: [tail, head) when not wrapped, [tail, end) then
	// [0, head) when wrapped.
	head, tail, end int
	wrapped         bool
	n               int
	used            int
	// tooBig counts packets larger than the ring, which it cannot hold.
	tooBig int
}

// A record is a header, then the packet's bytes.
const (
	headerSize = 18
	offTime    = 0  // int64: nanoseconds since the Unix epoch
	offCapLen  = 8  // uint32
	offLen     = 12 // uint32: the packet's length on the wire
	offLink    = 16 // uint16: layers.LinkType
)

// NewRing returns a ring of size bytes, headers included. Its buffer is mapped outside the Go
// heap where the system allows (Linux), so that the garbage collector, which lets the heap
// grow in proportion to what is live, does not let garbage grow by the ring's size too; Close
// gives it back.
func NewRing(size int) *Ring { return &Ring{buf: allocate(size)} }

// Close releases the ring's buffer; the ring holds nothing after it.
func (r *Ring) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	release(r.buf)
	r.buf, r.n, r.used, r.head, r.tail, r.wrapped = nil, 0, 0, 0, 0, false
}

// Cap returns the ring's size, Used the bytes its packets take, headers included.
func (r *Ring) Cap() int { return len(r.buf) }

// Used returns the bytes the packets held take, headers included; never more than Cap.
func (r *Ring) Used() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.used
}

// Len returns how many packets the ring holds.
func (r *Ring) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Packet copies a packet into the ring, pushing the oldest out as needed.
func (r *Ring) Packet(ci gopacket.CaptureInfo, lt layers.LinkType, data []byte) {
	size := headerSize + len(data)
	r.mu.Lock()
	defer r.mu.Unlock()
	if size > len(r.buf) {
		r.tooBig++ // or the ring is closed
		return
	}
	at := r.reserve(size)
	rec := r.buf[at : at+size]
	binary.LittleEndian.PutUint64(rec[offTime:], uint64(ci.Timestamp.UnixNano()))
	binary.LittleEndian.PutUint32(rec[offCapLen:], uint32(len(data)))
	binary.LittleEndian.PutUint32(rec[offLen:], uint32(max(ci.Length, len(data))))
	binary.LittleEndian.PutUint16(rec[offLink:], uint16(lt))
	copy(rec[headerSize:], data)
	r.n++
	r.used += size
}

// reserve makes room for a record of size bytes and returns where it goes.
func (r *Ring) reserve(size int) int {
	for {
		if r.n == 0 {
			r.head, r.tail, r.end, r.wrapped = 0, 0, 0, false
		}
		if !r.wrapped {
			if len(r.buf)-r.head >= size {
				break
			}
			// The rest of the buffer is too short: go on at its start.
			r.end, r.head, r.wrapped = r.head, 0, true
			continue
		}
		if r.tail-r.head >= size {
			break
		}
		r.evict()
	}
	at := r.head
	r.head += size
	return at
}

// evict pushes the oldest packet out.
func (r *Ring) evict() {
	size := headerSize + int(binary.LittleEndian.Uint32(r.buf[r.tail+offCapLen:]))
	r.tail += size
	r.used -= size
	r.n--
	if r.wrapped && r.tail == r.end {
		r.tail, r.wrapped = 0, false
	}
}

// Each calls fn, oldest first, with each packet held whose time is within [from, to]; data is
// the ring's own, valid only during the call. The ring is locked meanwhile: packets captured
// wait.
func (r *Ring) Each(from, to time.Time, fn func(ci gopacket.CaptureInfo, lt layers.LinkType, data []byte) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	lo, hi := from.UnixNano(), to.UnixNano()
	spans := [][2]int{{r.tail, r.head}}
	if r.wrapped {
		spans = [][2]int{{r.tail, r.end}, {0, r.head}}
	}
	if r.n == 0 {
		spans = nil
	}
	for _, s := range spans {
		for at := s[0]; at < s[1]; {
			rec := r.buf[at:]
			ns := int64(binary.LittleEndian.Uint64(rec[offTime:]))
			caplen := int(binary.LittleEndian.Uint32(rec[offCapLen:]))
			at += headerSize + caplen
			if ns < lo || ns > hi {
				continue
			}
			ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, ns), CaptureLength: caplen,
				Length: int(binary.LittleEndian.Uint32(rec[offLen:]))}
			if err := fn(ci, layers.LinkType(binary.LittleEndian.Uint16(rec[offLink:])), rec[headerSize:headerSize+caplen]); err != nil {
				return err
			}
		}
	}
	return nil
}

// TooBig returns how many packets were larger than the whole ring, and left out.
func (r *Ring) TooBig() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tooBig
}
