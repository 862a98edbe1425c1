package main

import (
	"bytes"
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

// TestOutputErrors: what -o, --no-fields and --parquet-compression refuse, as usage errors that leave no file.
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
		{[]string{"--format", "json", "--parquet-compression", "zstd", a}, "--parquet-compression goes with --format parquet"},
		{[]string{"--format", "parquet", "--parquet-compression", "lzo", "-o", filepath.Join(dir, "x.parquet"), a},
			`--parquet-compression "lzo": snappy, zstd, none`},
		{[]string{"--format", "json", "-o", a, a}, "it would be overwritten"},
		// A capture that is not being read is not overwritten by text either (-o meant as -w).
		{[]string{"--format", "summary", "-o", copyA, a}, "-o " + copyA + " is a capture: it would be overwritten"},
		{[]string{"--format", "parquet", "-o", dir + "/", a, copyA}, "would both be written to"},
		{[]string{"--format", "none", "-o", dir + "/", a}, "--format none writes no file"},
		// A run that would say nothing at all is refused, in every command that reads messages.
		{[]string{"--format", "none", a}, "--format none writes nothing: give --stats (the tables) or -w FILE (the packets), or choose another format"},
		{[]string{"live", "-i", "lo", "--format", "none"}, "--format none writes nothing: give --stats (the tables), --findings, -w FILE (the packets) or --ring SIZE, or choose another format"},
		{[]string{"decode", "--format", "none", a}, "--format none writes nothing: choose another format"},
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
	for _, c := range []string{a, copyA} {
		if got, _ := os.ReadFile(c); len(got) != len(data) {
			t.Errorf("the capture %s was overwritten", c)
		}
	}
	// A file that is not a capture is an output like any other: -o replaces it.
	old := filepath.Join(dir, "old.txt")
	os.WriteFile(old, []byte("yesterday's summary\n"), 0o644)
	if _, errOut, code := kdissect(t, "--format", "summary", "-p", "9092", "-o", old, a); code != 0 {
		t.Errorf("-o over a text file: exit %d, %s", code, errOut)
	}
	if got, _ := os.ReadFile(old); bytes.Contains(got, []byte("yesterday")) {
		t.Error("-o did not replace a text file")
	}
}

// TestOutputOfNoCapture: an input that is not a capture leaves no output file behind its
// error (exit 1), with -o FILE and with -o DIR/; a capture read beside it keeps its file, and
// one that is cut short keeps what it gave.
func TestOutputOfNoCapture(t *testing.T) {
	a := pcap("kgo-produce-fetch.pcap")
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("these are notes, not packets\n"), 0o644)
	data, _ := os.ReadFile(a)
	cut := filepath.Join(dir, "cut.pcap")
	os.WriteFile(cut, data[:3000], 0o644)
	for _, tt := range []struct {
		args []string
		gone []string // output files that must not exist
		kept []string // output files that must, not empty
	}{
		{[]string{"--format", "json", "-o", filepath.Join(dir, "one.jsonl"), text}, []string{"one.jsonl"}, nil},
		{[]string{"--format", "parquet", "-o", filepath.Join(dir, "one.parquet"), text}, []string{"one.parquet"}, nil},
		{[]string{"--format", "summary", "-o", filepath.Join(dir, "each") + "/", text, a, cut},
			[]string{"each/notes.txt"}, []string{"each/kgo-produce-fetch.txt", "each/cut.txt"}},
	} {
		_, errOut, code := kdissectStdin(t, nil, tt.args...)
		if code != cli.ExitFailure || !strings.Contains(errOut, text+": not a pcap or pcapng file") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and the file named", tt.args, code, errOut)
		}
		for _, g := range tt.gone {
			if _, err := os.Stat(filepath.Join(dir, g)); err == nil {
				t.Errorf("%v: %s left behind", tt.args, g)
			}
		}
		for _, k := range tt.kept {
			if st, err := os.Stat(filepath.Join(dir, k)); err != nil || st.Size() == 0 {
				t.Errorf("%v: %s: %v", tt.args, k, err)
			}
		}
	}
}
