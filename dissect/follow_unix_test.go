//go:build unix

package dissect

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kdissect/kdissect/pcaps"
)

// TestFollowFIFO: a capture file that is a FIFO (mkfifo; tcpdump -U -w FIFO) is read once, as
// it arrives: its messages are shown while the writer still holds it open, and the output is
// the file's.
func TestFollowFIFO(t *testing.T) {
	t.Parallel()
	path := pcapPath("kgo-produce-fetch.pcap")
	r := testRun{format: "json", ports: pcaps.Ports} // JSON learns topic names in a first pass over files
	want, _ := r.mustDissect(t, path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "capture.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	var out stampedWriter
	var errOut bytes.Buffer
	p, _ := r.pipeline(t, &out, &errOut, Config{})
	closed := make(chan time.Time, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			closed <- time.Now()
			return
		}
		w.Write(data)
		time.Sleep(500 * time.Millisecond)
		closed <- time.Now()
		w.Close()
	}()
	if _, err := p.File(fifo); err != nil {
		t.Fatal(err)
	}
	p.Close()
	end := <-closed
	if got := out.String(); got != want {
		g, w := clip(got, want)
		t.Fatalf("from the FIFO:\n%s\nfrom the file:\n%s", g, w)
	}
	shown := out.shownAt(t, "json")
	if last := shown[len(shown)-1]; !last.at.Before(end) {
		t.Errorf("the last message was shown %v after the writer closed the FIFO, not as it arrived", last.at.Sub(end))
	}
	if !strings.Contains(strings.Join(p.Seen().Streamed, " "), "capture.fifo") {
		t.Errorf("Seen.Streamed = %v", p.Seen().Streamed)
	}
}
