package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kdissect/kdissect/internal/connsgen"
)

// connsMain writes a synthetic capture of many connections that each send one request: the
// case of a day of health checks, a port scan, or a capture cut while clients are connected.
func connsMain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kbench conns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var spec connsgen.Spec
	out := fs.String("o", "", "the capture file to write (pcap); keep it out of the repository, e.g. /tmp/conns.pcap")
	fs.IntVar(&spec.Conns, "n", 200000, "how many connections")
	fs.BoolVar(&spec.Close, "close", false, "close each connection (FIN both ways) after its response; without it every connection stays open to the end")
	fs.DurationVar(&spec.Every, "every", connsgen.DefaultEvery, "capture time between one connection's start and the next's")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if *out == "" || fs.NArg() != 0 || spec.Conns <= 0 || spec.Every < 0 {
		fmt.Fprintln(stderr, "kbench conns: -o FILE is required, -n positive, and nothing else")
		fs.Usage()
		return errUsage
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := connsgen.Write(w, spec); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d connections (%s)\n", *out, spec.Conns, map[bool]string{true: "closed", false: "left open"}[spec.Close])
	return nil
}
