package flight_test

import (
	"fmt"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/kdissect/kdissect/internal/flight"
)

// A Ring keeps the newest packets that fit in its size, headers included: here, 120 bytes hold
// four packets of 10 bytes (28 with their header), so the first six are pushed out.
func ExampleRing() {
	r := flight.NewRing(120)
	defer r.Close()
	for i := range 10 {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(int64(i), 0), Length: 10}
		r.Packet(ci, layers.LinkTypeEthernet, make([]byte, 10))
	}
	fmt.Println(r.Len(), "packets,", r.Used(), "of", r.Cap(), "bytes")
	r.Each(time.Unix(0, 0), time.Unix(100, 0), func(ci gopacket.CaptureInfo, _ layers.LinkType, _ []byte) error {
		fmt.Print(ci.Timestamp.Unix(), " ")
		return nil
	})
	fmt.Println()
	// Output:
	// 4 packets, 112 of 120 bytes
	// 6 7 8 9
}
