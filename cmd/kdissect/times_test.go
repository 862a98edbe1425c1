package main

import (
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
)

// TestTimesAcrossFiles: with several files given out of time order, relative times count from
// the earliest first packet of all of them (read here with pcapgo), so none is negative; the
// diagram's headings say the same times, and -t d starts again at each file.
func TestTimesAcrossFiles(t *testing.T) {
	later, earlier := pcap("kgo-admin.pcapng"), pcap("kgo-produce-fetch.pcap")
	start := firstPacketTime(t, earlier)
	if !start.Before(firstPacketTime(t, later)) {
		t.Fatalf("%s does not start before %s: the captures do not fit the test", earlier, later)
	}
	rel, errOut, code := kdissect(t, "--format", "summary", "-t", "r", later, earlier)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	epoch, _, _ := kdissect(t, "--format", "summary", "-t", "e", later, earlier)
	relLines, epochLines := summaryTimes(t, rel), summaryTimes(t, epoch)
	if len(relLines) == 0 || len(relLines) != len(epochLines) {
		t.Fatalf("%d lines with -t r, %d with -t e", len(relLines), len(epochLines))
	}
	for i, r := range relLines {
		got, want := r.secs(t), epochLines[i].epoch(t).Sub(start).Seconds()
		if got < 0 || math.Abs(got-want) > 1.5e-6 {
			t.Errorf("packet %d: %s s, want %.6f s after the earliest first packet", r.frame, r.time, want)
		}
	}
	diagram, _, _ := kdissect(t, "-t", "r", later, earlier)
	heading := regexp.MustCompile(`(?m)^#([0-9]+)  (-?[0-9.]+) s since the first packet`)
	hs := heading.FindAllStringSubmatch(diagram, -1)
	if len(hs) != len(relLines) {
		t.Fatalf("%d diagram headings, %d summary lines", len(hs), len(relLines))
	}
	for i, h := range hs {
		if want := strconv.Itoa(relLines[i].frame) + " " + relLines[i].time; h[1]+" "+h[2] != want {
			t.Errorf("diagram heading %q, the summary says %s", h[0], want)
		}
	}
	delta, _, _ := kdissect(t, "--format", "summary", "-t", "d", later, earlier)
	for _, part := range strings.Split(delta, "==> ")[1:] {
		_, lines, _ := strings.Cut(part, "\n")
		if d := summaryTimes(t, lines); len(d) == 0 || d[0].secs(t) != 0 {
			t.Errorf("-t d: a file's first line counts from another file's: %.30q", lines)
		}
	}
}

// summaryTime is a summary line's packet number and time column.
type summaryTime struct {
	frame int
	time  string
}

// secs reads the time column as seconds.
func (s summaryTime) secs(t *testing.T) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s.time, 64)
	if err != nil {
		t.Fatalf("packet %d: time %q: %v", s.frame, s.time, err)
	}
	return v
}

// epoch reads the time column of -t e, to the microsecond.
func (s summaryTime) epoch(t *testing.T) time.Time {
	t.Helper()
	sec, frac, _ := strings.Cut(s.time, ".")
	secs, err1 := strconv.ParseInt(sec, 10, 64)
	us, err2 := strconv.Atoi(frac)
	if err1 != nil || err2 != nil || len(frac) != 6 {
		t.Fatalf("packet %d: %q is no -t e time", s.frame, s.time)
	}
	return time.Unix(secs, int64(us)*1000)
}

// summaryTimes reads the packet number and the time of each line of a summary that has them
// (not the file headers, nor the warnings under a message).
func summaryTimes(t *testing.T, out string) []summaryTime {
	t.Helper()
	var ts []summaryTime
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		frame, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		ts = append(ts, summaryTime{frame, f[1]})
	}
	return ts
}

// firstPacketTime is the time of a capture's first packet, pcap or pcapng, as pcapgo reads it.
func firstPacketTime(t *testing.T, name string) time.Time {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	}
	if r, err = pcapgo.NewReader(f); err != nil {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		if r, err = pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions); err != nil {
			t.Fatalf("%s: neither pcap nor pcapng: %v", name, err)
		}
	}
	_, ci, err := r.ReadPacketData()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ci.Timestamp
}
