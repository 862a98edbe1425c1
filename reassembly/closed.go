package reassembly

import (
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// finished holds the connections that finished recently, and when: the packets that trail one
// (its last ACK, a retransmitted FIN) belong to it, not to a new connection. Every packet is
// looked for among them while any are held; a bit per exclusive or of a connection's ports
// (the same both ways) answers most without hashing their addresses for a map, which took 4%
// of a summary's time on two cores on a capture of many short connections.
type finished struct {
	at    map[flowKey]time.Time
	ports [1 << 16 / 64]uint64
}

// portsBit is where the bit of a connection between ports a and b lies in finished.ports.
func portsBit(a, b layers.TCPPort) (word int, bit uint64) {
	x := uint16(a ^ b)
	return int(x / 64), 1 << (x % 64)
}

// mark sets connection k's bit.
func (f *finished) mark(k flowKey) {
	w, bit := portsBit(k.pa, k.pb)
	f.ports[w] |= bit
}

// add holds connection k, finished at t.
func (f *finished) add(k flowKey, t time.Time) {
	if f.at == nil {
		f.at = map[flowKey]time.Time{}
	}
	f.at[k] = t
	f.mark(k)
}

// find reports whether the segment's connection is held, and its key.
func (f *finished) find(net gopacket.Flow, tcp *layers.TCP) (flowKey, bool) {
	if len(f.at) == 0 {
		return flowKey{}, false
	}
	if w, bit := portsBit(tcp.SrcPort, tcp.DstPort); f.ports[w]&bit == 0 {
		return flowKey{}, false
	}
	k := keyOf(net, tcp)
	_, ok := f.at[k]
	return k, ok
}

// remove forgets connection k; its bit stays set until the next forget.
func (f *finished) remove(k flowKey) { delete(f.at, k) }

// forget forgets the connections finished before t; the bits set are then those of the
// connections left.
func (f *finished) forget(t time.Time) {
	clear(f.ports[:])
	for k, at := range f.at {
		if at.Before(t) {
			delete(f.at, k)
		} else {
			f.mark(k)
		}
	}
}
