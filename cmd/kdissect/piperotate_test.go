package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/parquet-go/parquet-go"

	"github.com/kdissect/kdissect/internal/rotate"
	"github.com/kdissect/kdissect/pcaps"
)

// Files of periods from a pipe (--rotate, --rotate-size with -o DIR/), as live writes them.

// periodFiles are the complete files of periods in dir, oldest first; it fails the test if a
// file is named otherwise (a temporary one left, say).
func periodFiles(t *testing.T, dir, ext string) []string {
	t.Helper()
	host, _ := os.Hostname()
	prefix := rotate.Prefix(host)
	named := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `\d{8}T\d{6}Z(_\d{3,})?` + regexp.QuoteMeta(ext) + `$`)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !named.MatchString(e.Name()) {
			t.Errorf("%s: not the name of a period's file (%s)", e.Name(), named)
		}
	}
	files, err := (&rotate.Dir{Path: dir, Prefix: prefix, Ext: ext}).Files()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(dir, f.Name))
	}
	if !slices.IsSorted(paths) {
		t.Errorf("the names do not sort in the periods' order: %q", paths)
	}
	return paths
}

// TestPipeRotate: JSON lines from a pipe with --rotate-size go to several files whose lines,
// in order, are the capture's; --keep 2 leaves the newest two.
func TestPipeRotate(t *testing.T) {
	const name = "kgo-produce-fetch.pcap"
	want, errOut, code := kdissect(t, "--format", "json", "-p", pcaps.Ports, pcap(name))
	if code != 0 {
		t.Fatalf("the file: exit %d: %s", code, errOut)
	}
	data := readCapture(t, name)
	tests := []struct {
		name  string
		keep  []string
		files int // 0: several, their lines all the capture's
	}{
		{name: "all"},
		{name: "keep", keep: []string{"--keep", "2"}, files: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out") + "/"
			args := append([]string{"--format", "json", "-p", pcaps.Ports, "--rotate-size", "2KB", "-o", dir}, tt.keep...)
			_, errOut, code := pipeRun(t, data, true, append(args, "-")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			files := periodFiles(t, dir, ".jsonl")
			var got strings.Builder
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				got.Write(b)
			}
			switch {
			case tt.files > 0 && len(files) != tt.files:
				t.Errorf("%d files, want %d", len(files), tt.files)
			case tt.files > 0 && !strings.HasSuffix(want, got.String()):
				t.Errorf("the files kept are not the end of the capture's lines:\n%s", got.String())
			case tt.files == 0 && len(files) < 3:
				t.Errorf("%d files: 2KB should make several", len(files))
			case tt.files == 0 && got.String() != want:
				t.Errorf("the files' lines:\n%s\nthe file's:\n%s", got.String(), want)
			}
			if !strings.Contains(errOut, "to "+dir) {
				t.Errorf("stderr does not say where the files went:\n%s", errOut)
			}
		})
	}
}

// TestPipeRotateParquet: Parquet from a pipe, refused without files of periods, is written to
// them. A Parquet file grows only by row groups (megabytes), so its period here ends by SIGHUP,
// sent once the first half of the capture is written: the files' rows together are the
// capture's messages, in order.
func TestPipeRotateParquet(t *testing.T) {
	const name = "kgo-produce-fetch.pcap"
	type row struct {
		Frame int64  `parquet:"frame"`
		Kind  string `parquet:"kind"`
	}
	one := filepath.Join(t.TempDir(), "one.parquet")
	if _, errOut, code := kdissect(t, "--format", "parquet", "-p", pcaps.Ports, "-o", one, pcap(name)); code != 0 {
		t.Fatalf("the file: exit %d: %s", code, errOut)
	}
	want := readRows[row](t, one)

	// SIGHUP is caught here too, so that one sent before the run catches it cannot end the test.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	dir := filepath.Join(t.TempDir(), "out") + "/"
	data := readCapture(t, name)
	half := halfOfPcap(t, data)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"--format", "parquet", "-p", pcaps.Ports, "--rotate-size", "1KB", "-o", dir, "-"}, pr, &out, &errOut)
	}()
	pw.Write(data[:half])
	waitEntries(t, dir, 1, done, &errOut)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitEntries(t, dir, 2, done, &errOut)
	pw.Write(data[half:])
	pw.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("still running a minute after the pipe was closed")
	}
	files := periodFiles(t, dir, ".parquet")
	if len(files) != 2 {
		t.Errorf("%d files, want 2 (one SIGHUP)", len(files))
	}
	var got []row
	for _, f := range files {
		got = append(got, readRows[row](t, f)...)
	}
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%d rows in the files of periods, %d in the capture's file", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// halfOfPcap returns where the record in the middle of a classic little-endian pcap begins.
func halfOfPcap(t *testing.T, data []byte) int {
	t.Helper()
	var starts []int
	for at := 24; at+16 <= len(data); at += 16 + int(binary.LittleEndian.Uint32(data[at+8:])) {
		starts = append(starts, at)
	}
	if len(starts) < 2 {
		t.Fatal("not a classic pcap of several packets")
	}
	return starts[len(starts)/2]
}

// waitEntries waits for dir to hold n entries (a period's file, temporary or complete), while
// the run, which ends on done, goes on.
func waitEntries(t *testing.T, dir string, n int, done chan int, stderr *bytes.Buffer) {
	t.Helper()
	// The minute guards against a hang; it is no bound: the files come in milliseconds.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if entries, _ := os.ReadDir(dir); len(entries) >= n {
			return
		}
		select {
		case code := <-done:
			t.Fatalf("exit %d before the pipe was closed: %s", code, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %d files after a minute", dir, n)
		}
	}
}

func readRows[T any](t *testing.T, name string) []T {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[T](strings.NewReader(string(data)), int64(len(data)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rows
}

// TestRotateBadUse: the rotation flags are usage errors where there is nothing to rotate: a
// capture file, no directory, -w, a format that writes no file.
// TestPipeRotatePackets: -w DIR/ with --rotate-size writes the packets read from a pipe to
// pcapng files of periods, as live does: every packet, in order, each file whole, while the
// messages go to stdout as without it.
func TestPipeRotatePackets(t *testing.T) {
	const name = "kgo-produce-fetch.pcap"
	data := readCapture(t, name)
	want, errOut, code := pipeRun(t, data, true, "--format", "json", "-p", pcaps.Ports, "-")
	if code != 0 {
		t.Fatalf("without -w: exit %d: %s", code, errOut)
	}
	dir := filepath.Join(t.TempDir(), "packets") + "/"
	got, errOut, code := pipeRun(t, data, true, "--format", "json", "-p", pcaps.Ports, "--rotate-size", "2KB", "-w", dir, "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got != want {
		t.Errorf("stdout with -w DIR/ is not as without it: %d bytes, %d without", len(got), len(want))
	}
	files := periodFiles(t, dir, ".pcapng")
	if len(files) < 3 {
		t.Fatalf("%d files: 2KB should make several", len(files))
	}
	var written []packetRecord
	for _, f := range files {
		written = append(written, packetRecords(t, f)...)
	}
	read := packetRecords(t, pcap(name))
	if len(written) != len(read) {
		t.Fatalf("%d packets in the files, %d in the capture", len(written), len(read))
	}
	for i := range read {
		if !read[i].equal(written[i]) {
			t.Fatalf("packet %d: written %v, read %v", i+1, written[i].ci, read[i].ci)
		}
	}
	if !strings.Contains(errOut, "of packets to "+dir) {
		t.Errorf("stderr does not say where the packets went:\n%s", errOut)
	}
}

// packetRecord is one packet of a capture file, as pcapgo reads it.
type packetRecord struct {
	ci   gopacket.CaptureInfo
	data []byte
}

func (p packetRecord) equal(q packetRecord) bool {
	return p.ci.Timestamp.Equal(q.ci.Timestamp) && p.ci.Length == q.ci.Length && bytes.Equal(p.data, q.data)
}

// packetRecords reads every packet of a pcap or pcapng file.
func packetRecords(t *testing.T, path string) []packetRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var src gopacket.PacketDataSource
	if strings.HasSuffix(path, ".pcapng") {
		src, err = pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	} else {
		src, err = pcapgo.NewReader(f)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []packetRecord
	for {
		data, ci, err := src.ReadPacketData()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: packet %d: %v", path, len(out)+1, err)
		}
		out = append(out, packetRecord{ci, slices.Clone(data)})
	}
}

func TestRotateBadUse(t *testing.T) {
	data := readCapture(t, "kgo-produce-fetch.pcap")
	dir := t.TempDir() + "/"
	tests := []struct {
		name  string
		pipe  bool
		args  []string
		words string
	}{
		{"file", false, []string{"--rotate", "1h", "-o", dir, pcap("kgo-produce-fetch.pcap")}, "are for captures that arrive as they are made"},
		{"stdin file", false, []string{"--rotate-size", "1MB", "-o", dir, "-"}, "stdin (-) is a file"},
		{"no dir", true, []string{"--rotate", "1h", "-"}, "give -o DIR/"},
		{"keep alone", true, []string{"--keep", "2", "-o", dir, "-"}, "go with --rotate"},
		{"write a file", true, []string{"--rotate", "1h", "-o", dir, "-w", dir + "x.pcapng", "-"}, "-w: no directory"},
		{"none", true, []string{"--rotate", "1h", "--format", "none", "--stats", "-o", dir, "-"}, "writes no file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errOut string
			var code int
			if tt.pipe {
				_, errOut, code = pipeRun(t, data, true, tt.args...)
			} else {
				_, errOut, code = kdissectStdin(t, data, tt.args...)
			}
			if code != 2 || !strings.Contains(errOut, tt.words) {
				t.Errorf("exit %d, want 2 saying %q:\n%s", code, tt.words, errOut)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("a refused run left %d files in -o's directory", len(entries))
	}
}
