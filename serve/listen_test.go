package serve

import (
	"net/netip"
	"slices"
	"testing"
)

// TestLoopback: only loopback hosts count; the empty host and 0.0.0.0 are every address.
func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true,
		"": false, "0.0.0.0": false, "::": false, "10.0.0.1": false, "example.com": false} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestHosts: a server on every address is reached at each interface address of the family
// listened on, loopback last, never at a link-local one; one on an address or a name, there.
func TestHosts(t *testing.T) {
	var ifaces []netip.Addr
	for _, a := range []string{"127.0.0.1", "::1", "192.0.2.2", "fd00::2", "fe80::fc:ff:fe00:1", "169.254.1.1", "::ffff:198.51.100.7"} {
		ifaces = append(ifaces, netip.MustParseAddr(a))
	}
	for _, tt := range []struct {
		host string
		want []string
	}{
		{"0.0.0.0", []string{"192.0.2.2", "198.51.100.7", "127.0.0.1"}},
		{"::", []string{"192.0.2.2", "fd00::2", "198.51.100.7", "127.0.0.1", "::1"}},
		{"", []string{"192.0.2.2", "fd00::2", "198.51.100.7", "127.0.0.1", "::1"}},
		{"192.0.2.2", []string{"192.0.2.2"}},
		{"localhost", []string{"localhost"}},
		{"kafka-lab.example", []string{"kafka-lab.example"}},
	} {
		if got := Hosts(tt.host, ifaces); !slices.Equal(got, tt.want) {
			t.Errorf("Hosts(%q) = %q, want %q", tt.host, got, tt.want)
		}
	}
	if got := Hosts("0.0.0.0", nil); len(got) != 0 {
		t.Errorf("no interfaces: %q", got)
	}
}
