package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// progress shows on stderr how far a capture file has been read, on one line that it rewrites:
//
//	34% 120 MB  1.2M packets
//
// It shows nothing during the first second (small files never see it), then updates the line
// at most four times a second, and erases it at the end.
type progress struct {
	w     io.Writer
	now   func() time.Time
	next  time.Time // the earliest time of the next update
	calls int
	shown int // the width of the line on the screen; 0 when none is shown
}

const (
	progressDelay = time.Second
	progressEvery = 250 * time.Millisecond
	// progressCheck is how many packets go by between two looks at the clock.
	progressCheck = 256
)

func newProgress(w io.Writer, now func() time.Time) *progress {
	return &progress{w: w, now: now, next: now().Add(progressDelay)}
}

// progressWanted says whether to show progress: stderr is a terminal, and the messages do not
// go to that terminal too (the progress line would cut their lines), unless the format is
// silent.
func progressWanted(stdout, stderr io.Writer, silent bool) bool {
	return isTerminal(stderr) && (silent || !isTerminal(stdout))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// update is called after each packet with the bytes read so far, the file's size (0 if
// unknown) and the packets read; it looks at the clock every progressCheck calls.
func (p *progress) update(read, total int64, packets int) {
	p.calls++
	if p.calls%progressCheck != 0 {
		return
	}
	t := p.now()
	if t.Before(p.next) {
		return
	}
	p.next = t.Add(progressEvery)
	s := formatProgress(read, total, packets)
	fmt.Fprintf(p.w, "\r%s%s", s, strings.Repeat(" ", max(0, p.shown-len(s))))
	p.shown = max(p.shown, len(s))
}

// clear erases the line, if one is shown.
func (p *progress) clear() {
	if p.shown > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.shown))
		p.shown = 0
	}
}

// Write passes other messages to stderr on lines of their own: it erases the progress line
// first; the next update draws it again.
func (p *progress) Write(b []byte) (int, error) {
	p.clear()
	return p.w.Write(b)
}

// formatProgress is the text of the progress line: the percentage when the size is known, the
// bytes read, the packets read.
func formatProgress(read, total int64, packets int) string {
	s := fmt.Sprintf("  %s  %s packets", formatMB(read), formatCount(int64(packets)))
	if total > 0 {
		pct := min(100, max(0, read*100/total))
		s = fmt.Sprintf("%5s %s  %s packets", fmt.Sprintf("%d%%", pct), formatMB(read), formatCount(int64(packets)))
	}
	return s
}

// formatMB shows a number of bytes in decimal megabytes or gigabytes, with one decimal below
// ten, cut rather than rounded (so that it never shows more than has been read).
func formatMB(b int64) string {
	switch {
	case b < 10e6:
		return fmt.Sprintf("%d.%d MB", b/1e6, b%1e6/1e5)
	case b < 1e9:
		return fmt.Sprintf("%d MB", b/1e6)
	case b < 10e9:
		return fmt.Sprintf("%d.%d GB", b/1e9, b%1e9/1e8)
	}
	return fmt.Sprintf("%d GB", b/1e9)
}

// formatCount shows a count with k and M, as formatMB does.
func formatCount(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 10e3:
		return fmt.Sprintf("%d.%dk", n/1e3, n%1e3/1e2)
	case n < 1e6:
		return fmt.Sprintf("%dk", n/1e3)
	case n < 10e6:
		return fmt.Sprintf("%d.%dM", n/1e6, n%1e6/1e5)
	}
	return fmt.Sprintf("%dM", n/1e6)
}
