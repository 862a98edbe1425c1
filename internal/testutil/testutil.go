// Package testutil holds the helpers the tests of several packages share: golden files and
// skipping what needs root. It is imported only by _test.go files.
package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Golden compares got with the file at path, or, when update is true, writes got there
// (creating its folder). Each test package defines its own -update flag (in update_test.go,
// so that "go test ./... -update" is accepted everywhere) and passes its value.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		line, g, w := FirstDiff(string(got), string(want))
		g, w = Clip(g, w)
		t.Fatalf("%s differs from the golden file at line %d:\n got: %s\nwant: %s\n(run with -update if the change is intended)", path, line, g, w)
	}
}

// FirstDiff returns the number (from 1) of the first line where a and b differ, and that line
// of each.
func FirstDiff(a, b string) (int, string, string) {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return i + 1, x, y
		}
	}
	return 0, "", ""
}

// Clip keeps the part of two differing lines around their first difference, so that a
// failure on a long JSON line stays readable.
func Clip(a, b string) (string, string) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-80)
	cut := func(s string) string {
		end := min(len(s), i+120)
		if from > len(s) {
			return ""
		}
		out := s[from:end]
		if from > 0 {
			out = "…" + out
		}
		if end < len(s) {
			out += "…"
		}
		return out
	}
	return cut(a), cut(b)
}

// NeedRoot skips a test that opens a packet socket unless it can: on Linux, as root.
func NeedRoot(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("live capture needs Linux")
	}
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW); CI runs these tests as root")
	}
}
