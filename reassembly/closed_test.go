package reassembly

import (
	"net"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// TestFinished: a finished connection is found from its packets in both directions, until it
// is removed or forgotten; other connections are not, whether their ports share its bit or not.
func TestFinished(t *testing.T) {
	type pkt struct {
		src, dst         string
		srcPort, dstPort layers.TCPPort
	}
	flow := func(p pkt) (gopacket.Flow, *layers.TCP) {
		return gopacket.NewFlow(layers.EndpointIPv4, net.ParseIP(p.src).To4(), net.ParseIP(p.dst).To4()),
			&layers.TCP{SrcPort: p.srcPort, DstPort: p.dstPort}
	}
	keyFor := func(p pkt) flowKey { n, tcp := flow(p); return keyOf(n, tcp) }
	a := pkt{"10.0.0.1", "10.0.0.2", 50000, 9092}
	aBack := pkt{"10.0.0.2", "10.0.0.1", 9092, 50000}
	b := pkt{"10.0.0.3", "10.0.0.2", 50001, 9092}
	sameBit := pkt{"10.0.0.3", "10.0.0.2", 50000, 9092} // a's ports from another host
	swapped := pkt{"10.0.0.1", "10.0.0.2", 9092, 50000} // a's ports, the other way round
	t0 := time.Unix(1000, 0)

	var f finished
	find := func(p pkt) bool { n, tcp := flow(p); _, ok := f.find(n, tcp); return ok }
	check := func(when string, want map[string]bool) {
		t.Helper()
		for name, p := range map[string]pkt{"a": a, "a back": aBack, "b": b, "same bit": sameBit, "swapped": swapped} {
			if got := find(p); got != want[name] {
				t.Errorf("%s: %s found %v, want %v", when, name, got, want[name])
			}
		}
	}
	check("empty", nil)
	f.add(keyFor(a), t0)
	check("a finished", map[string]bool{"a": true, "a back": true})
	f.add(keyFor(b), t0.Add(time.Second))
	check("a and b finished", map[string]bool{"a": true, "a back": true, "b": true})
	f.forget(t0.Add(time.Second)) // a, finished before then
	check("a forgotten", map[string]bool{"b": true})
	if w, bit := portsBit(a.srcPort, a.dstPort); f.ports[w]&bit != 0 {
		t.Error("a forgotten: its bit is still set")
	}
	f.forget(t0.Add(time.Second)) // b finished then, not before
	check("b kept", map[string]bool{"b": true})
	f.remove(keyFor(aBack))
	f.remove(keyFor(b))
	check("b removed", nil)
}
