package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testutil"
)

// TestDemo: the built-in capture dissects as the file it comes from does.
func TestDemo(t *testing.T) {
	demo, _, code := kdissect(t, "demo", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	file, _, _ := kdissect(t, "--format", "json", filepath.Join("..", "..", "pcaps", "kgo-produce-fetch.pcap"))
	if !strings.Contains(file, `"kind":"request"`) || demo != file {
		a, b := testutil.Clip(demo, file)
		t.Fatalf("demo gives other messages than the file:\n demo %s\n file %s", a, b)
	}
}
