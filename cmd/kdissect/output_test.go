package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/cli"
)

// TestOutputFile: -o FILE holds what stdout would; -o DIR/ holds a file per capture, named
// after it, each what the capture alone gives, whichever finishes first.
func TestOutputFile(t *testing.T) {
	a, b := pcap("kgo-produce-fetch.pcap"), pcap("kgo-admin.pcapng")
	dir := t.TempDir()
	want, _, code := kdissectStdin(t, nil, "--format", "json", a)
	if code != cli.ExitOK {
		t.Fatal(code)
	}
	file := filepath.Join(dir, "out.jsonl")
	if out, errOut, code := kdissectStdin(t, nil, "--format", "json", "-o", file, a); code != cli.ExitOK || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if got, _ := os.ReadFile(file); string(got) != want {
		t.Errorf("-o %s differs from stdout", file)
	}
	wantB, _, _ := kdissectStdin(t, nil, "--format", "json", b)
	each := filepath.Join(dir, "each") + "/"
	out, errOut, code := kdissectStdin(t, nil, "--format", "json", "--stats", "-o", each, a, b)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for name, w := range map[string]string{"kgo-produce-fetch.jsonl": want, "kgo-admin.jsonl": wantB} {
		got, err := os.ReadFile(each + name)
		if err != nil {
			t.Fatal(err)
		}
		// Statistics go after the messages, in the same file.
		if msgs, _, _ := strings.Cut(string(got), `{"kind":"stats"`); msgs != w {
			t.Errorf("%s differs from the capture's own output", name)
		}
	}
	if out != "" {
		t.Errorf("stdout: %q", out)
	}
	// Parquet: statistics on stdout, one table per capture in the order given.
	out, errOut, code = kdissectStdin(t, nil, "--format", "parquet", "--stats", "-o", each, a, b)
	if code != cli.ExitOK || strings.Index(out, "==> "+a) < 0 || strings.Index(out, "==> "+a) > strings.Index(out, "==> "+b) {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s", code, out, errOut)
	}
	for _, name := range []string{"kgo-produce-fetch.parquet", "kgo-admin.parquet"} {
		if st, err := os.Stat(each + name); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestOutputErrors: what -o and --no-fields refuse, as usage errors that leave no file.
func TestOutputErrors(t *testing.T) {
	a := pcap("kgo-produce-fetch.pcap")
	dir := t.TempDir()
	copyA := filepath.Join(dir, "kgo-produce-fetch.pcapng")
	data, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(copyA, data, 0o644)
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"--format", "parquet", a}, "--format parquet writes a file, not text: give -o FILE.parquet"},
		{[]string{"--format", "json", "--no-fields", a}, "--no-fields goes with --format parquet"},
		{[]string{"--format", "json", "-o", a, a}, "it would be overwritten"},
		{[]string{"--format", "parquet", "-o", dir + "/", a, copyA}, "would both be written to"},
		{[]string{"--format", "none", "-o", dir + "/", a}, "--format none writes no file"},
		{[]string{"--format", "parquet", "--api", "NoSuchAPI", "-o", filepath.Join(dir, "x.parquet"), a}, "NoSuchAPI"},
	} {
		out, errOut, code := kdissectStdin(t, nil, tt.args...)
		if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, tt.says) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errOut, tt.says)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.parquet")); err == nil {
		t.Error("a usage error left its output file")
	}
	if got, _ := os.ReadFile(a); len(got) != len(data) {
		t.Error("the capture was overwritten")
	}
}
