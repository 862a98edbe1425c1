package main

import (
	"fmt"
	"io"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/cli"
)

// The capture command on a pipe (tcpdump -U -w - | kdissect -): the pipeline shows each
// message as it arrives (dissect.Pipeline.Read); here, Ctrl-C and --duration stop it as they
// stop a live capture, and the run ends with live's counts.

// follow arranges the stops of a run that reads a pipe: Ctrl-C, SIGTERM and --duration (which
// stops files too, though they rarely take that long), and says so. done undoes it.
func (o *captureOptions) follow(p *dissect.Pipeline, files []string, stdin io.Reader, stderr io.Writer) (done func()) {
	var undo []func()
	if dissect.Streams(files, stdin) {
		interrupts := cli.CatchInterrupts()
		interrupts.Then(p.Stop)
		undo = append(undo, interrupts.Release)
		fmt.Fprintf(stderr, "kdissect: reading a capture from a pipe as it arrives; stops after %s\n", cli.StopsAfter(o.count, o.duration, "its end or Ctrl-C"))
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
