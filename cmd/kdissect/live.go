package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/cli"
)

type liveOptions struct {
	common
	sel      dissect.Selection
	tls      tlsOptions
	ports    []string
	iface    string
	count    int
	duration time.Duration
	write    string
}

func liveFlags() (*flag.FlagSet, *liveOptions) {
	o := &liveOptions{}
	fs := flag.NewFlagSet("kdissect live", flag.ContinueOnError)
	o.register(fs, "summary")
	registerSelection(fs, &o.sel)
	o.tls.register(fs)
	fs.StringVarP(&o.iface, "interface", "i", "", "network interface to capture on (lo, eth0, ...; any: every interface)")
	fs.StringSliceVarP(&o.ports, "port", "p", []string{"9092"}, "Kafka broker ports: repeatable, lists and ranges (9092,9093-9095); filtered in the kernel")
	fs.IntVarP(&o.count, "count", "c", 0, "stop after this many Kafka messages")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (30s, 5m, 1h)")
	fs.StringVarP(&o.write, "write", "w", "", "also write the captured packets to this pcapng file")
	cli.HideDefault(fs, "api-key", "correlation-id", "stream")
	return fs, o
}

// runLive is "kdissect live": capture on an interface until Ctrl-C, SIGTERM, --count or
// --duration, through the same pipeline as files.
func runLive(cmd *cli.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, o := liveFlags()
	if status, ok := cmd.Parse(fs, args, stdout, stderr); !ok {
		return status
	}
	fail := func(format string, a ...any) int { return cmd.UsageError(stderr, format, a...) }
	if fs.NArg() > 0 {
		return fail("live takes no arguments (got %q); to dissect files: kdissect FILE...", strings.Join(fs.Args(), " "))
	}
	if o.iface == "" {
		return fail("live needs an interface: -i INTERFACE (interfaces here: %s)", strings.Join(capture.Interfaces(), ", "))
	}
	ports, err := capture.ParsePorts(o.ports)
	if err != nil {
		return fail("%v", err)
	}
	ranges := ports.Ranges()
	if len(ranges) == 0 {
		return fail("no ports given")
	}
	o.trees = o.sel.ReadsBodies()
	c, err := o.codec(stderr)
	if err != nil {
		return cmd.Report(stderr, err)
	}
	keys, err := cli.KeyLog(o.tls.keylog, true, stderr)
	if err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	f, inner, err := o.output(stdout, stderr)
	if err != nil {
		return fail("%v", err)
	}
	if f.Batch {
		return fail("--format %s writes its output only at the end: live capture shows each message as it completes", f.Name)
	}

	// From here on, Ctrl-C and SIGTERM end the capture cleanly (a signal that comes while the
	// socket is set up waits).
	interrupts := cli.CatchInterrupts()
	defer interrupts.Release()

	lopt := capture.LiveOptions{Ports: ranges}
	var save *capture.SaveFile
	if o.write != "" {
		save = capture.NewSaveFile(o.write)
		lopt.Save = save
	}
	r, err := capture.OpenLive(o.iface, lopt)
	if err != nil {
		if save != nil {
			save.Close()
		}
		fmt.Fprintf(stderr, "kdissect: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "kdissect: capturing on %s (Kafka on TCP %s); stops after %s\n", o.iface, ports, cli.StopsAfter(o.count, o.duration, "Ctrl-C"))

	stop := sync.OnceFunc(r.Stop)
	interrupts.Then(stop)
	if o.duration > 0 {
		t := time.AfterFunc(o.duration, stop)
		defer t.Stop()
	}

	p, err := dissect.New(dissect.Config{Codec: c, Out: inner, Needs: f.Needs, Select: o.sel, IsServerPort: ports.Has, Keys: keys,
		Limit: o.count, Flush: true, Stop: stop, Warn: func(err error) { fmt.Fprintf(stderr, "kdissect: %v\n", err) }})
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	_, readErr := p.Read(r, o.iface)
	status := 0
	if readErr != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", readErr)
		status = 1
	}
	st := r.Stats()
	if err := r.Close(); err != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", err)
		status = 1
	}
	if save != nil {
		if err := save.Close(); err != nil {
			fmt.Fprintf(stderr, "kdissect: %v\n", err)
			status = 1
		}
	}
	writeErr := p.Close()
	if stats := p.Stats(); stats != nil && writeErr == nil {
		writeErr = f.WriteStats(stats, stdout)
	}
	ks, _ := r.KernelStats()
	shown, _ := p.Shown()
	fmt.Fprintf(stderr, "kdissect: %d packets captured (%d TCP), %d Kafka messages shown; %d packets received by filter, %d dropped by kernel\n",
		st.Packets, st.TCP, shown, ks.Received, ks.Dropped)
	if save != nil && status == 0 {
		fmt.Fprintf(stderr, "kdissect: wrote %d packets to %s\n", st.Packets, o.write)
	}
	if writeErr != nil {
		return cmd.Failed(stderr, "writing output: %v", writeErr)
	}
	return status
}
