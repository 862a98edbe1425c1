package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestNoticesLeftOut: with a filter, the notices of connections that show no message are left
// out, and one line on stderr says how many; without a filter, every notice is shown and no
// such line is said.
func TestNoticesLeftOut(t *testing.T) {
	file := pcap("kgo-tls12.pcap") // TLS without its keys: a notice per connection, no message
	all, errAll, code := kdissect(t, "--format", "summary", file)
	notices := strings.Count(all, " ! ")
	if code != 0 || notices == 0 || strings.Contains(errAll, "left out") {
		t.Fatalf("exit %d, %d notices, stderr %q", code, notices, errAll)
	}
	out, errOut, code := kdissect(t, "--format", "summary", "--api", "Produce", file)
	want := fmt.Sprintf("kdissect: %d notices about connections with no message shown were left out\n", notices)
	if code != 0 || out != "" || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stdout %q, stderr %q lacks %q", code, out, errOut, want)
	}
}
