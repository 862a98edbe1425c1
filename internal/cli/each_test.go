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

// TestEachStderrOrder: what jobs say on stderr comes in the order of their names, whatever
// order they end in (here the reverse: each job ends only after the one after it).
func TestEachStderrOrder(t *testing.T) {
	names := []string{"a", "b", "c"}
	ended := make([]chan struct{}, len(names))
	for i := range ended {
		ended[i] = make(chan struct{})
	}
	var stderr strings.Builder
	Each(names, len(names), io.Discard, &stderr, func(i int, _, stderr io.Writer) int {
		if i+1 < len(names) {
			<-ended[i+1]
		}
		fmt.Fprintln(stderr, names[i])
		close(ended[i])
		return ExitOK
	})
	if want := "a\nb\nc\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}
