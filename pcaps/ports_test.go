package pcaps_test

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/pcaps"
)

// TestPorts: every TCP segment of the Kafka captures here has an end on one of Ports, and
// every port of Ports is a broker port of some capture, so that the list is neither short nor
// wide.
func TestPorts(t *testing.T) {
	ports, err := capture.ParsePorts([]string{pcaps.Ports})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, pat := range []string{"*.pcap", "*.pcapng"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	used := map[uint16]bool{}
	for _, file := range files {
		if strings.HasPrefix(file, "other-") {
			continue
		}
		for p := range brokerPorts(t, file, ports) {
			used[p] = true
		}
	}
	for _, r := range ports.Ranges() {
		for p := int(r.Lo); p <= int(r.Hi); p++ {
			if !used[uint16(p)] {
				t.Errorf("port %d of pcaps.Ports is no capture's broker port", p)
			}
		}
	}
}

// brokerPorts returns the ports of ports that file's segments use, and fails the test for a
// segment with neither end on one of them.
func brokerPorts(t *testing.T, file string, ports *capture.Ports) map[uint16]bool {
	t.Helper()
	r, err := capture.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	used := map[uint16]bool{}
	for {
		seg, err := r.Next()
		if err == io.EOF {
			return used
		}
		var perr *capture.PacketError
		if errors.As(err, &perr) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		src, dst := uint16(seg.TCP.SrcPort), uint16(seg.TCP.DstPort)
		switch {
		case ports.Has(src):
			used[src] = true
		case ports.Has(dst):
			used[dst] = true
		default:
			t.Fatalf("%s: packet %d, ports %d->%d: neither is in pcaps.Ports", file, seg.Num, src, dst)
		}
	}
}
