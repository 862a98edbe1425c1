package cli

import (
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kdissect/kdissect/internal/plural"
)

// Interrupts catches Ctrl-C and SIGTERM from the moment it is made, so that a run that reads
// until it is stopped (a live capture, a pipe) ends cleanly: the first signal calls the stop
// function given to Then (one that comes before waits for it), the second ends the process
// with status 130, for a run that winds down too slowly.
type Interrupts struct {
	signals chan os.Signal
	quit    chan struct{}
}

// CatchInterrupts starts catching Ctrl-C and SIGTERM; Release stops.
func CatchInterrupts() *Interrupts {
	in := &Interrupts{signals: make(chan os.Signal, 2), quit: make(chan struct{})}
	signal.Notify(in.signals, os.Interrupt, syscall.SIGTERM)
	return in
}

// Then calls stop at the first signal, and exits at the second. Call it once.
func (in *Interrupts) Then(stop func()) {
	go func() {
		select {
		case <-in.signals:
			stop()
		case <-in.quit:
			return
		}
		select {
		case <-in.signals:
			os.Exit(130)
		case <-in.quit:
		}
	}()
}

// Release lets the signals go: they have their usual effect again. Call it once.
func (in *Interrupts) Release() {
	close(in.quit)
	signal.Stop(in.signals)
}

// StopsAfter says after what a run that reads until it is stopped stops, for its first line:
// "100 messages or 30s or Ctrl-C".
func StopsAfter(count int, duration time.Duration, end string) string {
	var what []string
	if count > 0 {
		what = append(what, plural.Count(count, "message"))
	}
	if duration > 0 {
		what = append(what, duration.String())
	}
	return strings.Join(append(what, end), " or ")
}
