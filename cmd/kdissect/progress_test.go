package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFormatProgress(t *testing.T) {
	for _, tc := range []struct {
		read, total int64
		packets     int
		want        string
	}{
		{120_500_000, 354_000_000, 1_234_567, "  34% 120 MB  1.2M packets"},
		{0, 1000, 0, "   0% 0.0 MB  0 packets"},
		{999, 1000, 999, "  99% 0.0 MB  999 packets"},
		{5_250_000, 5_250_000, 9_999, " 100% 5.2 MB  9.9k packets"},
		{2_000_000, 1_000_000, 10_000, " 100% 2.0 MB  10k packets"}, // read past a size that grew
		{9_999_999, 0, 999_999, "  9.9 MB  999k packets"},
		{10_000_000, 0, 10_000_000, "  10 MB  10M packets"},
		{1_234_000_000, 2_468_000_000, 25_000_000, "  50% 1.2 GB  25M packets"},
		{12_345_000_000, 0, 123_456_789, "  12 GB  123M packets"},
	} {
		if got := formatProgress(tc.read, tc.total, tc.packets); got != tc.want {
			t.Errorf("formatProgress(%d, %d, %d) = %q, want %q", tc.read, tc.total, tc.packets, got, tc.want)
		}
	}
}

// TestProgressLine drives the progress line with a fake clock: nothing in the first second, then
// at most one update per quarter second, other messages on lines of their own, and nothing left
// at the end.
func TestProgressLine(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := newProgress(&out, func() time.Time { return now })
	packets := 0
	feed := func(n int, read int64) {
		for range n {
			packets++
			p.update(read, 1_000_000_000, packets)
		}
	}
	feed(10*progressCheck, 1e6)
	if out.Len() != 0 {
		t.Fatalf("progress shown before a second: %q", out.String())
	}
	now = now.Add(1100 * time.Millisecond)
	feed(progressCheck-1, 5e6)
	if out.Len() != 0 {
		t.Fatalf("the clock was looked at before %d packets: %q", progressCheck, out.String())
	}
	feed(1, 340e6)
	if want := "\r  34% 340 MB  2.8k packets"; out.String() != want {
		t.Fatalf("first update %q, want %q", out.String(), want)
	}
	out.Reset()
	now = now.Add(200 * time.Millisecond)
	feed(10*progressCheck, 350e6)
	if out.Len() != 0 {
		t.Fatalf("updated again within a quarter second: %q", out.String())
	}
	now = now.Add(100 * time.Millisecond)
	feed(progressCheck, 10e6) // a shorter line covers the longer one
	if want := "\r   1% 10 MB  5.6k packets "; out.String() != want {
		t.Fatalf("second update %q, want %q", out.String(), want)
	}
	out.Reset()
	if _, err := p.Write([]byte("kdissect: a warning\n")); err != nil {
		t.Fatal(err)
	}
	blank := "\r" + strings.Repeat(" ", len("  34% 340 MB  2.8k packets")) + "\r"
	if want := blank + "kdissect: a warning\n"; out.String() != want {
		t.Fatalf("message written as %q, want %q", out.String(), want)
	}
	out.Reset()
	p.clear()
	if out.Len() != 0 {
		t.Fatalf("clear with no line shown wrote %q", out.String())
	}
	now = now.Add(time.Second)
	feed(progressCheck, 1e9)
	p.clear()
	last := " 100% 1.0 GB  5.8k packets"
	if want := "\r" + last + "\r" + strings.Repeat(" ", len(last)) + "\r"; out.String() != want {
		t.Fatalf("last update and erasure %q, want %q", out.String(), want)
	}
}

// TestProgressNotWanted: no progress line when stderr is not a terminal (tests, pipes, files).
func TestProgressNotWanted(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	for _, stderr := range []any{&buf, f} {
		for _, silent := range []bool{true, false} {
			if progressWanted(&buf, stderr.(interface{ Write([]byte) (int, error) }), silent) {
				t.Errorf("progress wanted on %T with a format silent %v", stderr, silent)
			}
		}
	}
	// A real run with stderr on a file shows no progress and says nothing.
	_, errOut, code := kdissect(t, "-p", capturePorts, "--format", "none", pcap("kgo-codecs.pcap"))
	if code != 0 || errOut != "" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
