package dissect

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kdissect/kdissect/pcaps"
)

// The tests of captures that come through a pipe: a real capture is written into an os.Pipe
// piece by piece, as tcpdump -U writes one, with pauses, and what the pipeline prints, and
// when, is compared with what it prints for the file.

// piece is a part of a capture file as a capture tool writes it: the file header, a pcapng
// block, a packet record. packet is the packet's number (from 1), or 0 for a piece that is
// not a packet.
type piece struct {
	b      []byte
	packet int
}

// cutCapture cuts a pcap or pcapng file into its pieces.
func cutCapture(t testing.TB, data []byte) []piece {
	t.Helper()
	var pieces []piece
	packets := 0
	if len(data) < 24 {
		t.Fatalf("capture of %d bytes", len(data))
	}
	switch binary.BigEndian.Uint32(data) {
	case 0xa1b2c3d4, 0xa1b23c4d, 0xd4c3b2a1, 0x4d3cb2a1: // pcap
		var order binary.ByteOrder = binary.BigEndian
		if data[0] != 0xa1 {
			order = binary.LittleEndian
		}
		pieces = append(pieces, piece{b: data[:24]})
		for rest := data[24:]; len(rest) > 0; {
			if len(rest) < 16 {
				t.Fatalf("pcap record header cut at %d bytes", len(rest))
			}
			n := 16 + int(order.Uint32(rest[8:]))
			packets++
			pieces = append(pieces, piece{b: rest[:n], packet: packets})
			rest = rest[n:]
		}
	case 0x0a0d0d0a: // pcapng
		var order binary.ByteOrder
		for rest := data; len(rest) > 0; {
			typ := binary.BigEndian.Uint32(rest)
			if typ == 0x0a0d0d0a {
				order = binary.BigEndian
				if binary.LittleEndian.Uint32(rest[8:]) == 0x1a2b3c4d {
					order = binary.LittleEndian
				}
			}
			typ = order.Uint32(rest)
			n := int(order.Uint32(rest[4:]))
			pc := piece{b: rest[:n]}
			if typ == 6 || typ == 3 || typ == 2 { // enhanced, simple, obsolete packet blocks
				packets++
				pc.packet = packets
			}
			pieces = append(pieces, pc)
			rest = rest[n:]
		}
	default:
		t.Fatalf("not a capture: % x", data[:4])
	}
	return pieces
}

// newPipe returns an os.Pipe, closed at the end of the test.
func newPipe(t testing.TB) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// readPieces reads a capture from pcaps/ and cuts it into pieces.
func readPieces(t testing.TB, name string) []piece {
	t.Helper()
	data, err := os.ReadFile(pcapPath(name))
	if err != nil {
		t.Fatal(err)
	}
	return cutCapture(t, data)
}

// fromPipe reads the capture in r through p on a goroutine; the function returned waits for
// the end of it, and fails the test if it does not come within 10 s.
func fromPipe(t testing.TB, p *Pipeline, r *os.File) (wait func() error) {
	done := make(chan error, 1)
	go func() {
		_, err := fileFrom(p, r, "stdin")
		done <- err
	}()
	return func() error {
		t.Helper()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("the pipe's capture: not ended 10 s after it was stopped or closed")
			return nil
		}
	}
}

// stampedWriter keeps what is written to it and when.
type stampedWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes []stampedWrite
}

type stampedWrite struct {
	at  time.Time
	end int // where the write ends in buf
}

func (w *stampedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	w.writes = append(w.writes, stampedWrite{at: time.Now(), end: w.buf.Len()})
	return len(b), nil
}

func (w *stampedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// showsFrame reports whether the output shows a message or notice of the packet.
func (w *stampedWriter) showsFrame(t testing.TB, format string, packet int) bool {
	for _, s := range w.shownAt(t, format) {
		if s.frame == packet {
			return true
		}
	}
	return false
}

// shown is one message or notice as it was printed: the packet it names (its last packet) and
// when its first line was written.
type shown struct {
	frame int
	at    time.Time
	line  string
}

// Lines that start a message or notice: a diagram's header (#13 ...) and a summary's line
// (    13    0.024 ...); JSON lines carry "frame".
var (
	diagramHead = regexp.MustCompile(`^#(\d+) `)
	summaryHead = regexp.MustCompile(`^ *(\d+) +\d+\.\d+ `)
)

// shownAt finds what was shown in the output of a format, and when.
func (w *stampedWriter) shownAt(t testing.TB, format string) []shown {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []shown
	off, wi := 0, 0
	for _, line := range strings.SplitAfter(w.buf.String(), "\n") {
		for wi < len(w.writes) && w.writes[wi].end <= off {
			wi++
		}
		start := off
		off += len(line)
		line = strings.TrimSuffix(line, "\n")
		frame := -1
		switch format {
		case "json":
			var v struct {
				Frame *int `json:"frame"`
			}
			if json.Unmarshal([]byte(line), &v) == nil && v.Frame != nil {
				frame = *v.Frame
			}
		case "summary":
			if m := summaryHead.FindStringSubmatch(line); m != nil {
				frame, _ = strconv.Atoi(m[1])
			}
		case "diagram":
			if m := diagramHead.FindStringSubmatch(line); m != nil {
				frame, _ = strconv.Atoi(m[1])
			}
		}
		if frame < 0 || line == "" {
			continue
		}
		if wi >= len(w.writes) {
			t.Fatalf("line at %d after the last write", start)
		}
		out = append(out, shown{frame: frame, at: w.writes[wi].at, line: line})
	}
	return out
}

// feed writes pieces into w, as a capture tool does: each piece whole (through gzip when z is
// set, flushed), calling pause (when set) after each packet. It returns when each packet was written.
// With open, it leaves w open, and the reader may stop before everything is written; else it
// closes w at the end.
func feed(t testing.TB, w io.WriteCloser, pieces []piece, z bool, pause func(packet int), open bool) map[int]time.Time {
	var zw *gzip.Writer
	if z {
		zw = gzip.NewWriter(w)
	}
	written := map[int]time.Time{}
	for _, pc := range pieces {
		var err error
		if pc.packet > 0 {
			written[pc.packet] = time.Now() // before it is written: it may be shown before Write returns
		}
		if zw != nil {
			if _, err = zw.Write(pc.b); err == nil {
				err = zw.Flush()
			}
		} else {
			_, err = w.Write(pc.b)
		}
		if err != nil {
			if !open { // else the reader may stop first
				t.Errorf("writing the pipe: %v", err)
			}
			return written
		}
		if pc.packet > 0 && pause != nil {
			pause(pc.packet)
		}
	}
	if !open {
		if zw != nil {
			zw.Close()
		}
		w.Close()
	}
	return written
}

const (
	// followWait is how long TestFollowPipe's writer waits for a message before it writes more:
	// far longer than any machine takes, as only a message that is never shown should use it.
	followWait = 10 * time.Second
	// pauses is how many of a capture's packets that complete messages are paused after.
	pauses = 5
)

// pausesFor picks packets that complete messages in a file's output, spread over the
// capture, to pause after.
func pausesFor(shownInFile []shown) map[int]bool {
	var frames []int
	seen := map[int]bool{}
	for _, s := range shownInFile {
		if !seen[s.frame] {
			seen[s.frame] = true
			frames = append(frames, s.frame)
		}
	}
	pause := map[int]bool{}
	step := max(1, len(frames)/pauses)
	for i := step / 2; i < len(frames); i += step {
		pause[frames[i]] = true
	}
	return pause
}

// followRun is one capture through a pipe.
type followRun struct {
	file   string
	format string
	gzip   bool
}

func (fr followRun) String() string {
	s := fr.file + "/" + fr.format
	if fr.gzip {
		s += "/gzip"
	}
	return s
}

// TestFollowPipe: a capture written into a pipe packet by packet is shown as it arrives, and
// the output is the file's, in every format, for pcap, pcapng and a gzipped stream. After each
// of a few packets that complete a message, the writer writes nothing more until that message
// is shown (or followWait has passed): so a message shown in time was shown by its own packet,
// with no more input. The wall-clock flush, which would show messages without input too, is
// put off for the test, so that only the packet can have shown them. What is asserted is that
// order, not a time: how soon each was shown is logged, never compared with a bound.
func TestFollowPipe(t *testing.T) {
	runs := []followRun{
		{"kgo-produce-fetch.pcap", "json", false},
		{"kgo-produce-fetch.pcap", "summary", false},
		{"kgo-produce-fetch.pcap", "diagram", false},
		{"kgo-admin.pcapng", "json", false},
		{"kgo-admin.pcapng", "summary", false},
		{"kgo-produce-fetch.pcap", "json", true},
		{"kgo-admin.pcapng", "summary", true},
	}
	for _, fr := range runs {
		t.Run(fr.String(), func(t *testing.T) {
			t.Parallel()
			r := testRun{format: fr.format, ports: pcaps.Ports}
			path := pcapPath(fr.file)
			want, _ := r.mustDissect(t, path)
			var fromFile stampedWriter
			fromFile.Write([]byte(want))
			wantShown := fromFile.shownAt(t, fr.format)
			if len(wantShown) < 10 {
				t.Fatalf("%s: only %d messages shown from the file", fr.file, len(wantShown))
			}
			pieces := readPieces(t, fr.file)
			pause := pausesFor(wantShown)
			pr, pw := newPipe(t)
			var out stampedWriter
			var errOut bytes.Buffer
			p, _ := r.pipeline(t, &out, &errOut, Config{})
			p.clock.idle = time.Hour
			fed := make(chan map[int]time.Time, 1)
			shownAlone := map[int]bool{} // written by the feeding goroutine, read after fed
			wait := func(packet int) {
				if !pause[packet] {
					return
				}
				for start := time.Now(); time.Since(start) < followWait; time.Sleep(2 * time.Millisecond) {
					if out.showsFrame(t, fr.format, packet) {
						shownAlone[packet] = true
						return
					}
				}
			}
			go func() { fed <- feed(t, pw, pieces, fr.gzip, wait, false) }()
			if _, err := fileFrom(p, pr, "stdin"); err != nil {
				t.Fatalf("Read: %v", err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			written := <-fed
			if got := out.String(); got != want {
				g, w := clip(got, want)
				t.Fatalf("from the pipe:\n%s\nfrom the file:\n%s", g, w)
			}
			checked := 0
			for _, s := range out.shownAt(t, fr.format) {
				if !pause[s.frame] {
					continue
				}
				checked++
				if !shownAlone[s.frame] {
					t.Errorf("%q (packet %d) was not shown until more was written after its packet", s.line, s.frame)
					continue
				}
				t.Logf("packet %d shown %v after it was written", s.frame, s.at.Sub(written[s.frame]))
			}
			if checked < pauses-1 {
				t.Errorf("%d messages checked, want at least %d", checked, pauses-1)
			}
			if p.Seen().Streamed == nil {
				t.Errorf("Seen.Streamed is empty after a pipe")
			}
		})
	}
}

// TestFollowPipeCut: a pipe that closes inside a packet is shown up to the last whole packet,
// as a file cut there is, with the same error.
func TestFollowPipeCut(t *testing.T) {
	for _, fr := range []followRun{{"kgo-produce-fetch.pcap", "summary", false}, {"kgo-admin.pcapng", "summary", true}} {
		t.Run(fr.String(), func(t *testing.T) {
			t.Parallel()
			pieces := readPieces(t, fr.file)
			cut := len(pieces) / 2
			pieces[cut].b = pieces[cut].b[:len(pieces[cut].b)/2]
			pieces = pieces[:cut+1]
			var cutFile []byte
			for _, pc := range pieces {
				cutFile = append(cutFile, pc.b...)
			}
			path := writeTemp(t, "cut"+fr.file, cutFile)
			r := testRun{format: fr.format, ports: pcaps.Ports}
			want, wantErr, code := r.dissect(t, path)
			if code != 1 || !strings.Contains(wantErr, "truncated after packet") {
				t.Fatalf("the cut file: exit %d, %s", code, wantErr)
			}

			pr, pw := newPipe(t)
			var out, errOut bytes.Buffer
			p, _ := r.pipeline(t, &out, &errOut, Config{})
			go feed(t, pw, pieces, fr.gzip, nil, false)
			_, err := fileFrom(p, pr, "stdin")
			if err == nil {
				t.Fatal("Read: no error for a pipe closed inside a packet")
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if got, want := "kdissect: "+strings.ReplaceAll(err.Error(), "stdin", path)+"\n", wantErr; !strings.HasSuffix(want, got) {
				t.Errorf("error from the pipe: %sfrom the file: %s", got, want)
			}
			if out.String() != want {
				g, w := clip(out.String(), want)
				t.Errorf("from the pipe:\n%s\nfrom the file:\n%s", g, w)
			}
		})
	}
}

// TestFollowPipeLimit: with Limit 3, a pipe that never ends stops after three messages, as a
// file does.
func TestFollowPipeLimit(t *testing.T) {
	t.Parallel()
	r := testRun{format: "summary", ports: pcaps.Ports}
	path := pcapPath("kgo-produce-fetch.pcap")
	var want, wantErr bytes.Buffer
	pf, _ := r.pipeline(t, &want, &wantErr, Config{Limit: 3})
	if _, err := pf.File(path); err != nil {
		t.Fatal(err)
	}
	pf.Close()
	if n, _ := pf.Shown(); n != 3 || !pf.Stopped() {
		t.Fatalf("file with Limit 3: %d messages shown, stopped %v", n, pf.Stopped())
	}
	pr, pw := newPipe(t)
	var out, errOut bytes.Buffer
	p, _ := r.pipeline(t, &out, &errOut, Config{Limit: 3})
	wait := fromPipe(t, p, pr)
	go feed(t, pw, readPieces(t, "kgo-produce-fetch.pcap"), false, nil, true) // the pipe stays open
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if out.String() != want.String() {
		t.Errorf("from the pipe:\n%s\nfrom the file:\n%s", out.String(), want.String())
	}
	if n, _ := p.Shown(); n != 3 {
		t.Errorf("%d messages shown, want 3", n)
	}
}

// TestFollowPipeStop: Stop (Ctrl-C) ends a pipe that is quiet, and what arrived is shown.
func TestFollowPipeStop(t *testing.T) {
	t.Parallel()
	pieces := readPieces(t, "kgo-produce-fetch.pcap")
	pr, pw := newPipe(t)
	var out, errOut bytes.Buffer
	var stopped atomic.Bool
	p, _ := testRun{format: "summary", ports: pcaps.Ports}.pipeline(t, &out, &errOut, Config{Stop: func() { stopped.Store(true) }})
	feed(t, pw, pieces[:20], false, nil, true)
	time.AfterFunc(300*time.Millisecond, p.Stop)
	if err := fromPipe(t, p, pr)(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if !stopped.Load() || !p.Stopped() {
		t.Errorf("Config.Stop called: %v; Stopped: %v", stopped.Load(), p.Stopped())
	}
	if n, _ := p.Shown(); n == 0 {
		t.Errorf("nothing shown of 19 packets:\n%s", errOut.String())
	}
	if got := p.Seen().Packets; got != 19 {
		t.Errorf("%d packets read, want 19", got)
	}
}

// TestFollowPipeIdle: when no packet comes, the capture's clock goes on with the wall clock:
// a connection whose segment was lost is flushed a few seconds later, its messages after the
// loss shown, while the pipe stays open.
//
// The capture is made now, as tcpdump -U makes one: its times are moved so that its last packet
// was taken as the test starts (the wall clock moves the clock of no other capture).
func TestFollowPipeIdle(t *testing.T) {
	t.Parallel()
	pieces := takenNow(t, readPieces(t, "kgo-produce-fetch.pcap"))
	// Drop the packet of a request whose connection goes on after it: reassembly then holds
	// the rest of the connection until the loss is judged (FlushAfter on the capture's clock).
	r := testRun{format: "summary", ports: pcaps.Ports}
	var fromFile stampedWriter
	want, _ := r.mustDissect(t, pcapPath("kgo-produce-fetch.pcap"))
	fromFile.Write([]byte(want))
	all := fromFile.shownAt(t, "summary")
	drop := all[len(all)/2].frame
	var kept []piece
	var keptFile []byte
	for _, pc := range pieces {
		if pc.packet != drop {
			kept = append(kept, pc)
			keptFile = append(keptFile, pc.b...)
		}
	}
	want, _ = r.mustDissect(t, writeTemp(t, "lost.pcap", keptFile))
	if !strings.Contains(want, "lost") {
		t.Fatalf("dropping packet %d loses nothing:\n%s", drop, want)
	}

	pr, pw := newPipe(t)
	var out stampedWriter
	var errOut bytes.Buffer
	p, _ := r.pipeline(t, &out, &errOut, Config{})
	wait := fromPipe(t, p, pr)
	go feed(t, pw, kept, false, nil, true)
	deadline := time.Now().Add(15 * time.Second)
	for out.String() != want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := out.String()
	pw.Close()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if got != want {
		g, w := clip(got, want)
		t.Errorf("with the pipe open for 15 s:\n%s\nfrom the file:\n%s", g, w)
	}
}

// TestFollowPipeBatch: an output written only at the end (Config.Batch) refuses a pipe, and
// reads a file.
func TestFollowPipeBatch(t *testing.T) {
	path := pcapPath("kgo-produce-fetch.pcap")
	var out, errOut bytes.Buffer
	p, _ := testRun{format: "summary", ports: pcaps.Ports}.pipeline(t, &out, &errOut, Config{Batch: true})
	if _, err := p.File(path); err != nil {
		t.Fatalf("a file with Batch: %v", err)
	}
	pr, pw := newPipe(t)
	go feed(t, pw, readPieces(t, "kgo-produce-fetch.pcap"), false, nil, true)
	_, err := fileFrom(p, pr, "stdin")
	if !errors.Is(err, ErrNeedsFile) || !strings.HasPrefix(err.Error(), "stdin: ") {
		t.Errorf("a pipe with Batch: %v, want stdin: %v", err, ErrNeedsFile)
	}
}

// takenNow returns the pieces of a little-endian pcap with microsecond times, its packets'
// times moved so that the last was taken now: a capture that is being made.
func takenNow(t testing.TB, pieces []piece) []piece {
	t.Helper()
	if len(pieces) < 2 || binary.LittleEndian.Uint32(pieces[0].b) != 0xa1b2c3d4 {
		t.Fatal("takenNow takes a little-endian pcap with microsecond times")
	}
	stamp := func(b []byte) time.Time {
		return time.Unix(int64(binary.LittleEndian.Uint32(b)), int64(binary.LittleEndian.Uint32(b[4:]))*1000)
	}
	shift := time.Since(stamp(pieces[len(pieces)-1].b)).Truncate(time.Second)
	out := make([]piece, len(pieces))
	for i, pc := range pieces {
		out[i] = piece{b: bytes.Clone(pc.b), packet: pc.packet}
		if pc.packet > 0 {
			at := stamp(pc.b).Add(shift)
			binary.LittleEndian.PutUint32(out[i].b, uint32(at.Unix()))
		}
	}
	return out
}

// TestFollowPipeStalled: a capture file replayed through a pipe whose writer stalls (a loaded
// machine) is shown as the file is, in every run: its packets' times are of another day, so
// the wall clock, which the test moves hours on during the stall, does not move its clock.
// (Moved, the clock would close every connection open at the stall, idle for an hour.)
func TestFollowPipeStalled(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"json", "summary"} {
		t.Run(format, func(t *testing.T) {
			r := testRun{format: format, ports: pcaps.Ports}
			want, _ := r.mustDissect(t, pcapPath("kgo-produce-fetch.pcap"))
			pieces := readPieces(t, "kgo-produce-fetch.pcap")
			stallAt := pieces[len(pieces)/2].packet
			pr, pw := newPipe(t)
			var out bytes.Buffer
			var errOut bytes.Buffer
			p, _ := r.pipeline(t, &out, &errOut, Config{})
			// While the writer stalls, each look at the wall clock finds it an hour further on.
			var stalled atomic.Bool
			var hours atomic.Int64
			p.clock.idle = time.Millisecond
			p.clock.wall = func() time.Time {
				if stalled.Load() {
					return time.Now().Add(time.Duration(hours.Add(1)) * time.Hour)
				}
				return time.Now().Add(time.Duration(hours.Load()) * time.Hour)
			}
			stall := func(packet int) {
				if packet == stallAt {
					// Long enough for many idle ticks; what is asserted does not depend on how many.
					stalled.Store(true)
					time.Sleep(50 * time.Millisecond)
					stalled.Store(false)
				}
			}
			go feed(t, pw, pieces, false, stall, false)
			if _, err := fileFrom(p, pr, "stdin"); err != nil {
				t.Fatalf("Read: %v", err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != want {
				g, w := clip(got, want)
				t.Errorf("from the stalled pipe:\n%s\nfrom the file:\n%s", g, w)
			}
		})
	}
}
