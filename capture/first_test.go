package capture

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// TestFirstTime: the time of a capture file's first TCP packet, past the packets that are not
// TCP, gzipped or not; none for a file with no TCP packet, one that is no capture, or none.
func TestFirstTime(t *testing.T) {
	rs := recs(eth(t, layers.EthernetTypeIPv4, udp4(t)), eth(t, layers.EthernetTypeIPv4, tcp4(t, 50000, 9092, "x")),
		eth(t, layers.EthernetTypeIPv4, tcp4(t, 50000, 9092, "y")))
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o666); err != nil {
			t.Fatal(err)
		}
		return path
	}
	second := rs[1].ts
	for _, tc := range []struct {
		name string
		data []byte
		want time.Time
	}{
		{"tcp.pcap", pcapFile(t, layers.LinkTypeEthernet, false, rs...), second.Truncate(time.Microsecond)},
		{"tcp.pcap.gz", gz(t, pcapFile(t, layers.LinkTypeEthernet, true, rs...)), second},
		{"udp.pcap", pcapFile(t, layers.LinkTypeEthernet, false, rs[0]), time.Time{}},
		{"text.pcap", []byte("not a capture\n"), time.Time{}},
	} {
		got, ok := FirstTime(write(tc.name, tc.data))
		if !got.Equal(tc.want) || ok == tc.want.IsZero() {
			t.Errorf("%s: %v %v, want %v", tc.name, got, ok, tc.want)
		}
	}
	if _, ok := FirstTime(filepath.Join(dir, "missing.pcap")); ok {
		t.Error("a missing file has a first time")
	}
}
