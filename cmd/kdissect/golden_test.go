package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/pcaps"
)

var update = flag.Bool("update", false, "rewrite the golden files from the code's output")

// golden compares got with testdata/golden/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
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
		t.Fatalf("%v (run go test ./cmd/kdissect -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		line, g, w := firstDiff(string(got), string(want))
		g, w = clip(g, w)
		t.Fatalf("%s differs from the golden file at line %d:\n got: %s\nwant: %s\n(run with -update if the change is intended)", name, line, g, w)
	}
}

// firstDiff returns the number (from 1) of the first line where a and b differ, and that line
// of each.
func firstDiff(a, b string) (int, string, string) {
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

// clip keeps the part of two differing lines around their first difference, so that a
// failure on a long JSON line stays readable.
func clip(a, b string) (string, string) {
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

// kdissect runs the command in-process and returns stdout, stderr and the exit status.
func kdissect(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// kafkaCaptures lists the captures in pcaps/ that hold Kafka in the clear: not the other
// protocols' captures, not the TLS ones (which have a key log beside them).
func kafkaCaptures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range captures(t) {
		base := filepath.Base(f)
		if strings.HasPrefix(base, "other-") {
			continue
		}
		if _, err := os.Stat(strings.TrimSuffix(f, filepath.Ext(f)) + ".keylog"); err == nil {
			continue
		}
		out = append(out, f)
	}
	return out
}

// captures lists the capture files shipped in pcaps/.
func captures(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*.pcap", "*.pcapng", "*.pcap.gz"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "pcaps", pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no captures in pcaps/")
	}
	return files
}

// TestGoldenCaptures pins the summary and JSON output of every capture in pcaps/.
func TestGoldenCaptures(t *testing.T) {
	for _, file := range captures(t) {
		for _, format := range []string{"summary", "json"} {
			name := filepath.Base(file) + "." + format
			t.Run(name, func(t *testing.T) {
				out, errOut, code := kdissect(t, "--format", format, "-p", pcaps.Ports, file)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				golden(t, name, []byte(out+stderrSection(errOut)))
			})
		}
	}
}

// stderrSection appends what went to stderr, so that warnings are pinned too.
func stderrSection(s string) string {
	if s == "" {
		return ""
	}
	return "--- stderr\n" + s
}
