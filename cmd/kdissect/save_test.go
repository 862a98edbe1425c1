package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWriteAndCount: -w writes the packets of the messages shown, which kdissect reads back as
// the same messages; -c stops after that many. (The files' contents are tested in package
// dissect, TestSave.)
func TestWriteAndCount(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "cut.pcapng")
	messages := func(out string) []string {
		var ls []string
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 10 && (f[6] == "Request" || f[6] == "Response") {
				// Without packet, time, stream and request packet: the file numbers them anew.
				l = strings.Join(f[6:], " ")
				if i := strings.Index(l, "answers #"); i >= 0 {
					j := i + len("answers #")
					l = l[:i] + l[j+strings.IndexByte(l[j:], ' '):]
				}
				ls = append(ls, l)
			}
		}
		// A filter shows a request once its response decides; the file read back shows it
		// where it is, and its connection's segments behind lost ones come late.
		slices.Sort(ls)
		return ls
	}
	out, errOut, code := kdissect(t, "--format", "summary", "-p", "9092", "--api", "JoinGroup,SyncGroup,LeaveGroup", "-c", "5", "-w", saved, pcap("kgo-filters.pcap"))
	if code != 0 || !strings.Contains(errOut, "packets written to "+saved) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := messages(out)
	if len(want) != 5 {
		t.Fatalf("-c 5 showed %d messages:\n%s", len(want), out)
	}
	back, errOut, code := kdissect(t, "--format", "summary", saved)
	if got := messages(back); code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("read back (exit %d, %s):\n%s\nwant:\n%s", code, errOut, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWriteRefused: -w is refused before anything is read when it names a capture being read
// (a usage error) or cannot be created (an I/O error); the capture is left alone.
func TestWriteRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	data, err := os.ReadFile(pcap("kgo-produce-fetch.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		w    string
		exit int // a capture being read is a usage error, as -o's is; a path that cannot be made, an I/O error
	}{{in, 2}, {filepath.Join(dir, "no-such-dir", "out.pcapng"), 1}} {
		out, errOut, code := kdissect(t, "-w", tt.w, in)
		if code != tt.exit || out != "" || !strings.Contains(errOut, "kdissect: ") {
			t.Errorf("-w %s: exit %d, stdout %.80q, stderr %q: want exit %d and an error", tt.w, code, out, errOut, tt.exit)
		}
	}
	if after, _ := os.ReadFile(in); len(after) != len(data) {
		t.Errorf("the capture was changed: %d bytes, was %d", len(after), len(data))
	}
}
