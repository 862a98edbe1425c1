package main

import (
	"testing"

	"github.com/kdissect/kdissect/pcaps"
)

// TestProgressNotWanted: a real run with stderr on a file shows no progress and says nothing
// (when progress is wanted is internal/cli's TestProgressNotWanted).
func TestProgressNotWanted(t *testing.T) {
	_, errOut, code := kdissect(t, "-p", pcaps.Ports, "--format", "none", "--stats", pcap("kgo-codecs.pcap"))
	if code != 0 || errOut != "" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
