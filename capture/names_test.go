package capture

import (
	"os"
	"path/filepath"
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
