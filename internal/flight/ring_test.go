package flight

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// packetN is the nth packet of a test: its bytes say n, its time is n seconds after the epoch.
func packetN(n, size int) (gopacket.CaptureInfo, []byte) {
	data := bytes.Repeat([]byte{byte(n)}, size)
	return gopacket.CaptureInfo{Timestamp: time.Unix(int64(n), 0), CaptureLength: size, Length: size + 1}, data
}

// TestRingBound adds packets of random sizes to rings of several sizes: the ring never takes
// more than its size, holds the newest packets, intact and in order, and holds as many as fit.
func TestRingBound(t *testing.T) {
	for _, tt := range []struct{ size, maxPacket int }{
		{size: 64, maxPacket: 40},
		{size: 1000, maxPacket: 300},
		{size: 4096, maxPacket: 100},
		{size: 1 << 16, maxPacket: 1500},
	} {
		rng := rand.New(rand.NewPCG(1, uint64(tt.size)))
		r := NewRing(tt.size)
		var sizes []int
		for n := 1; n <= 5000; n++ {
			size := rng.IntN(tt.maxPacket + 1)
			ci, data := packetN(n, size)
			r.Packet(ci, layers.LinkTypeEthernet, data)
			sizes = append(sizes, size)
			if r.Used() > r.Cap() {
				t.Fatalf("ring of %d: %d bytes used after packet %d", tt.size, r.Used(), n)
			}
			var got []int
			err := r.Each(time.Unix(0, 0), time.Unix(1<<32, 0), func(ci gopacket.CaptureInfo, lt layers.LinkType, data []byte) error {
				k := int(ci.Timestamp.Unix())
				if lt != layers.LinkTypeEthernet || len(data) != sizes[k-1] || ci.Length != len(data)+1 ||
					!bytes.Equal(data, bytes.Repeat([]byte{byte(k)}, len(data))) {
					t.Fatalf("ring of %d, after packet %d: packet %d damaged: %d bytes, length %d", tt.size, n, k, len(data), ci.Length)
				}
				got = append(got, k)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != r.Len() || len(got) == 0 || got[len(got)-1] != n {
				t.Fatalf("ring of %d, after packet %d: holds %v (Len %d)", tt.size, n, got, r.Len())
			}
			used := 0
			for i, k := range got {
				if i > 0 && k != got[i-1]+1 {
					t.Fatalf("ring of %d, after packet %d: holds %v, not the newest in order", tt.size, n, got)
				}
				used += headerSize + sizes[k-1]
			}
			if used != r.Used() {
				t.Fatalf("ring of %d: Used %d, packets take %d", tt.size, r.Used(), used)
			}
			// The next older packet would not have fitted beside them, wherever it went: the
			// ring wastes at most one packet's room at its end.
			if first := got[0]; first > 1 && used+2*(headerSize+sizes[first-2]) <= tt.size-tt.maxPacket-headerSize {
				t.Fatalf("ring of %d, after packet %d: only %d bytes used, packet %d (%d bytes) pushed out", tt.size, n, used, first-1, sizes[first-2])
			}
		}
	}
}

func TestRingWindowAndTooBig(t *testing.T) {
	r := NewRing(1000)
	for n := 1; n <= 10; n++ {
		ci, data := packetN(n, 10)
		r.Packet(ci, layers.LinkTypeRaw, data)
	}
	ci, data := packetN(11, 2000)
	r.Packet(ci, layers.LinkTypeRaw, data)
	var got []int
	r.Each(time.Unix(4, 0), time.Unix(6, 0), func(ci gopacket.CaptureInfo, _ layers.LinkType, _ []byte) error {
		got = append(got, int(ci.Timestamp.Unix()))
		return nil
	})
	if len(got) != 3 || got[0] != 4 || got[2] != 6 {
		t.Errorf("window [4s, 6s] gives packets %v", got)
	}
	if r.TooBig() != 1 || r.Len() != 10 {
		t.Errorf("TooBig %d, Len %d: want 1 and 10", r.TooBig(), r.Len())
	}
}
