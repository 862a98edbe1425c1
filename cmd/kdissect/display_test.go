package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/cli"
)

// TestDisplayFilterErrors: a bad expression is refused before any capture is read, with the
// library's message and the position, as a usage error.
func TestDisplayFilterErrors(t *testing.T) {
	for _, tc := range []struct {
		expr, want string
		marked     bool // the library marks the position under the expression
	}{
		{`api ==`, "unexpected token EOF (1:6)", true},
		{`latecy_ms > 1`, "unknown name latecy_ms (1:1)", true},
		{`api == 3`, "mismatched types string and int) (1:5)", true},
		{`frame`, "expected bool, but got int", false},
	} {
		_, errOut, code := kdissect(t, "-Y", tc.expr, "no-such-file.pcap")
		if code != cli.ExitUsage || !strings.HasPrefix(errOut, "kdissect: -Y: ") || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "no-such-file") {
			t.Errorf("-Y %q: exit %d, stderr %q: want exit 2, the error %q, and no word of the file", tc.expr, code, errOut, tc.want)
		}
		lines := strings.Split(errOut, "\n")
		if tc.marked && !slices.Contains(lines, " | "+tc.expr) {
			t.Errorf("-Y %q: the expression is not shown with the position marked: %s", tc.expr, errOut)
		}
	}
}

// TestDisplayFilterBodies: an expression that reads a body works in summaries, whose messages
// are otherwise decoded only as deep as their facts need (JoinGroup's SessionTimeoutMs is no
// fact): the flag asks the codec for whole trees. pcaps/README.md says which JoinGroups the
// capture holds: two of a member with a 6 s session timeout, two of one with 45 s.
func TestDisplayFilterBodies(t *testing.T) {
	out, errOut, code := kdissect(t, "--format", "summary", "-p", "9092", "-Y", `api == "JoinGroup" && req.SessionTimeoutMs < 10000`, pcap("kgo-filters.pcap"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var shown []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(l, "JoinGroup") {
			t.Errorf("not a JoinGroup: %s", l)
		}
		shown = append(shown, l)
	}
	if len(shown) != 4 || strings.Count(out, `client "kdissect-short-session"`) != 2 {
		t.Errorf("want the short-session member's two JoinGroup pairs, got:\n%s", out)
	}
}
