package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/kdissect/kdissect/dissect"
)

// The capture command on a pipe (tcpdump -U -w - | kdissect -): the pipeline shows each
// message as it arrives (dissect.Pipeline.Read); here, Ctrl-C and --duration stop it as they
// stop a live capture, and the run ends with live's counts.

// stopOnSignal calls stop at the first Ctrl-C or SIGTERM, and ends the process at the second,
// for a capture that winds down too slowly; done stops listening.
func stopOnSignal(stop func()) (done func()) {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	quit := make(chan struct{})
	go func() {
		select {
		case <-signals:
			stop()
		case <-quit:
			return
		}
		select {
		case <-signals:
			os.Exit(130)
		case <-quit:
		}
	}()
	return func() {
		signal.Stop(signals)
		close(quit)
	}
}

// stopWhen says after what a run stops, for the first line of a live or pipe run.
func stopWhen(count int, duration time.Duration, end string) string {
	var what []string
	if count > 0 {
		what = append(what, fmt.Sprintf("%d messages", count))
	}
	if duration > 0 {
		what = append(what, duration.String())
	}
	return strings.Join(append(what, end), " or ")
}

// follow arranges the stops of a run that reads a pipe: Ctrl-C, SIGTERM and --duration (which
// stops files too, though they rarely take that long), and says so. done undoes it.
func (o *captureOptions) follow(p *dissect.Pipeline, files []string, stdin io.Reader, stderr io.Writer) (done func()) {
	var undo []func()
	if dissect.Streams(files, stdin) {
		undo = append(undo, stopOnSignal(p.Stop))
		fmt.Fprintf(stderr, "kdissect: reading a capture from a pipe as it arrives; stops after %s\n", stopWhen(o.count, o.duration, "its end or Ctrl-C"))
	}
	if o.duration > 0 {
		t := time.AfterFunc(o.duration, p.Stop)
		undo = append(undo, func() { t.Stop() })
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}

// followed writes the counts a run that read pipes ends with, as live's.
func followed(p *dissect.Pipeline, stderr io.Writer) {
	seen := p.Seen()
	if len(seen.Streamed) == 0 {
		return
	}
	shown, _ := p.Shown()
	fmt.Fprintf(stderr, "kdissect: %d packets read (%d TCP), %d Kafka messages shown\n", seen.Packets, seen.TCP, shown)
}

// stdinTerminal reports whether files name stdin ("-") and stdin is a terminal, from which no
// capture comes.
func stdinTerminal(files []string, stdin io.Reader) bool {
	f, ok := stdin.(*os.File)
	return ok && slices.Contains(files, "-") && term.IsTerminal(int(f.Fd()))
}
