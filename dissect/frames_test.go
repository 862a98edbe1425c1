package dissect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsHexText(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"0000002a 0003", true},
		{"00 00\n00\t2A", true},
		{"", false},
		{" \n", false},
		{"zz", false},
		{"\x00\x00\x00\x10", false},
		{"0x2a", false},
	}
	for _, tt := range tests {
		if got := isHexText([]byte(tt.in)); got != tt.want {
			t.Errorf("isHexText(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestReadFrames: "" and "-" are stdin, shown as "stdin"; an empty input and a missing file
// are errors naming the input.
func TestReadFrames(t *testing.T) {
	file := filepath.Join(t.TempDir(), "frames")
	if err := os.WriteFile(file, []byte{0, 0, 0, 1, 7}, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, stdin, shown, data, err string
	}{
		{"", "ab", "stdin", "ab", ""},
		{"-", "ab", "stdin", "ab", ""},
		{"-", "", "stdin", "", "stdin: no input"},
		{file, "ab", file, "\x00\x00\x00\x01\x07", ""},
		{file + ".gone", "", file + ".gone", "", "no such file"},
	} {
		shown, data, err := ReadFrames(tt.name, strings.NewReader(tt.stdin))
		if shown != tt.shown || string(data) != tt.data || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%q: %q, %q, %v; want %q, %q and an error with %q", tt.name, shown, data, err, tt.shown, tt.data, tt.err)
		}
	}
}
