package main

import (
	"strings"
	"testing"
)

// TestWorkersFlag: fewer than one worker is refused, before any output.
func TestWorkersFlag(t *testing.T) {
	for _, n := range []string{"0", "-3"} {
		out, errOut, code := kdissect(t, "--workers", n, pcap("kgo-produce-fetch.pcap"))
		if code != 2 || out != "" || !strings.Contains(errOut, "--workers "+n) {
			t.Errorf("--workers %s: exit %d, stdout %q, stderr %q; want exit 2 and an error", n, code, out, errOut)
		}
	}
}
