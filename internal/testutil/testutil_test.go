package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps its failures instead of ending the test.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, a ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatal(a ...any) { r.failures = append(r.failures, fmt.Sprint(a...)) }

// TestGolden: -update writes the file (and its folder), an equal output passes, a different
// one fails naming the file and the first differing line.
func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "golden", "out.txt")
	r := &recorder{TB: t}
	Golden(r, path, []byte("one\ntwo\n"), true)
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\ntwo\n" {
		t.Fatalf("-update wrote %q, %v", b, err)
	}
	Golden(r, path, []byte("one\ntwo\n"), false)
	if len(r.failures) != 0 {
		t.Fatalf("equal output failed: %q", r.failures)
	}
	Golden(r, path, []byte("one\nthree\n"), false)
	if len(r.failures) != 1 || !strings.Contains(r.failures[0], path+" differs from the golden file at line 2:\n got: three\nwant: two") {
		t.Errorf("different output: %q", r.failures)
	}
	r.failures = nil
	Golden(r, filepath.Join(t.TempDir(), "missing"), nil, false)
	if len(r.failures) == 0 || !strings.Contains(r.failures[0], "-update to create it") {
		t.Errorf("missing file: %q", r.failures)
	}
}

func TestFirstDiffClip(t *testing.T) {
	tests := []struct {
		a, b         string
		line         int
		ga, gb       string
		clipA, clipB string
	}{
		{"x\ny", "x\ny", 0, "", "", "", ""},
		{"x\ny", "x\nz", 2, "y", "z", "y", "z"},
		{"x", "x\nmore", 2, "", "more", "", "more"},
		{strings.Repeat("a", 100) + "b", strings.Repeat("a", 100) + "c", 1, "", "", "…" + strings.Repeat("a", 80) + "b", "…" + strings.Repeat("a", 80) + "c"},
	}
	for _, tt := range tests {
		line, ga, gb := FirstDiff(tt.a, tt.b)
		if line != tt.line {
			t.Errorf("FirstDiff(%q, %q) line %d, want %d", tt.a, tt.b, line, tt.line)
		}
		if tt.ga != "" || tt.gb != "" {
			if ga != tt.ga || gb != tt.gb {
				t.Errorf("FirstDiff(%q, %q) = %q, %q", tt.a, tt.b, ga, gb)
			}
		}
		ca, cb := Clip(ga, gb)
		if ca != tt.clipA || cb != tt.clipB {
			t.Errorf("Clip(%q, %q) = %q, %q; want %q, %q", ga, gb, ca, cb, tt.clipA, tt.clipB)
		}
	}
}
