package capture

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestStem: capture extensions go, other dots stay.
func TestStem(t *testing.T) {
	for in, want := range map[string]string{"a/b/kgo.pcap": "kgo", "x.pcapng.gz": "x", "y.cap": "y", "-": "stdin",
		"noext": "noext", ".pcap": ".pcap", "dump.pcap.1": "dump.pcap.1"} {
		if got := Stem(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// TestOverwrites: the same file is found under another name; a file that does not exist, or
// another one, is not.
func TestOverwrites(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pcap"), filepath.Join(dir, "b.pcap")
	for _, n := range []string{a, b} {
		if err := os.WriteFile(n, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if in, ok := Overwrites(filepath.Join(dir, ".", "b.pcap"), []string{a, b}); !ok || in != b {
		t.Errorf("b under another name: %q, %v", in, ok)
	}
	if in, ok := Overwrites(filepath.Join(dir, "c.pcap"), []string{a, b}); ok {
		t.Errorf("a new file overwrites %q", in)
	}
	if in, ok := Overwrites(a, []string{b}); ok {
		t.Errorf("a overwrites %q", in)
	}
}

// TestOutputs: a file per capture, named by its stem; two captures of one stem are refused.
func TestOutputs(t *testing.T) {
	outs, err := Outputs("d", ".jsonl", []string{"a/x.pcap", "y.pcapng.gz", "-"})
	if want := []string{"d/x.jsonl", "d/y.jsonl", "d/stdin.jsonl"}; err != nil || !slices.Equal(outs, want) {
		t.Errorf("%q, %v; want %q", outs, err, want)
	}
	if _, err := Outputs("d", ".jsonl", []string{"a/x.pcap", "b/x.pcapng"}); err == nil || err.Error() != "a/x.pcap and b/x.pcapng would both be written to d/x.jsonl" {
		t.Errorf("same stem: %v", err)
	}
}

// TestIsCaptureFile: captures are known by their first bytes (pcap either way round and in
// nanoseconds, pcapng, gzip), whatever their names; text, Parquet, short and missing files are not.
func TestIsCaptureFile(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		data []byte
		want bool
	}{
		{"a.txt", []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0}, true},  // pcap, little-endian
		{"b", []byte{0xa1, 0xb2, 0x3c, 0x4d, 0, 2}, true},      // pcap, nanoseconds
		{"c.json", []byte{0x0a, 0x0d, 0x0d, 0x0a, 0, 0}, true}, // pcapng
		{"d.pcap", []byte{0x1f, 0x8b, 8, 0}, true},             // gzip
		{"e.pcap", []byte("#1 summary\n"), false},
		{"f.parquet", []byte("PAR1...."), false},
		{"g.pcap", []byte{0xd4, 0xc3}, false},
	} {
		path := filepath.Join(dir, tt.name)
		if err := os.WriteFile(path, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := IsCaptureFile(path); got != tt.want {
			t.Errorf("%s (% x): %v, want %v", tt.name, tt.data, got, tt.want)
		}
	}
	if IsCaptureFile(filepath.Join(dir, "missing.pcap")) {
		t.Error("a missing file is a capture")
	}
}
