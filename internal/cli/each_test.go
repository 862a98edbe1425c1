package cli

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestEach: stdout in the order of the names, under headings; stderr as each job ends, a usage
// error said alike once; the worst status.
func TestEach(t *testing.T) {
	var stdout, stderr strings.Builder
	names := []string{"a", "b", "c"}
	status := Each(names, 2, &stdout, &stderr, func(i int, stdout, stderr io.Writer) int {
		fmt.Fprintf(stdout, "out %d\n", i)
		if i > 0 {
			fmt.Fprintln(stderr, "usage")
			return ExitUsage
		}
		return ExitOK
	})
	if want := "==> a <==\nout 0\n==> b <==\nout 1\n==> c <==\nout 2\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	if stderr.String() != "usage\n" || status != ExitUsage {
		t.Errorf("stderr %q, status %d", stderr.String(), status)
	}
	stdout.Reset()
	Each(names[:1], 1, &stdout, io.Discard, func(i int, stdout, _ io.Writer) int { return ExitOK })
	if stdout.Len() != 0 {
		t.Errorf("one silent job: %q", stdout.String())
	}
}
