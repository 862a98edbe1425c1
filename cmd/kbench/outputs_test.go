package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestOutputs: kbench outputs writes one file per run, with the exit status, and two runs of
// the same build into different directories are the same, byte for byte; a file differs when
// the output does.
func TestOutputs(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "kdissect")
	if out, err := exec.Command(gobin, "build", "-o", bin, "../kdissect").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	capture := filepath.Join("..", "..", "pcaps", "kgo-produce-fetch.pcap")
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	for _, dir := range dirs {
		var out, errOut bytes.Buffer
		if err := outputsMain([]string{"-kdissect", bin, "-o", dir, capture}, &out, &errOut); err != nil {
			t.Fatalf("%v: %s", err, errOut.String())
		}
	}
	for _, r := range outputRuns {
		for _, w := range []string{".w1", ".w3"} {
			name := "kgo-produce-fetch.pcap." + r.key + w
			a, errA := os.ReadFile(filepath.Join(dirs[0], name))
			b, errB := os.ReadFile(filepath.Join(dirs[1], name))
			if errA != nil || errB != nil {
				t.Fatalf("%s: %v %v", name, errA, errB)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%s differs between two runs of the same build", name)
			}
			if !strings.HasSuffix(string(a), "--- exit status 0\n") {
				t.Errorf("%s ends %q, want exit status 0", name, a[max(0, len(a)-40):])
			}
		}
	}
	summary, _ := os.ReadFile(filepath.Join(dirs[0], "kgo-produce-fetch.pcap.summary.w1"))
	if !strings.Contains(string(summary), "Produce v13") {
		t.Errorf("the summary file holds no Produce line:\n%s", summary)
	}
}
