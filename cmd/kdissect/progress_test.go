package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProgressNotWanted: no progress line when stderr is not a terminal (tests, pipes, files).
func TestProgressNotWanted(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	for _, stderr := range []any{&buf, f} {
		for _, silent := range []bool{true, false} {
			if progressWanted(&buf, stderr.(interface{ Write([]byte) (int, error) }), silent) {
				t.Errorf("progress wanted on %T with a format silent %v", stderr, silent)
			}
		}
	}
	// A real run with stderr on a file shows no progress and says nothing.
	_, errOut, code := kdissect(t, "-p", capturePorts, "--format", "none", pcap("kgo-codecs.pcap"))
	if code != 0 || errOut != "" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
