package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testutil"
	"github.com/kdissect/kdissect/pcaps"
)

var update = flag.Bool("update", false, "rewrite the golden files from the code's output")

// golden compares got with testdata/golden/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", "golden", name), got, *update)
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
