package main

import (
	"io"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/render"
)

type liveOptions struct {
	cli.Common
	sel      dissect.Selection
	tls      tlsOptions
	ports    []string
	iface    string
	count    int
	duration time.Duration
	write    string
	findings bool
	always   alwaysOnOptions
}

func liveFlags() (*flag.FlagSet, *liveOptions) {
	o := &liveOptions{}
	fs := flag.NewFlagSet("kdissect live", flag.ContinueOnError)
	registerCommon(fs, &o.Common, "summary")
	// Live shows each message as it completes; a format written only at the end (parquet) goes
	// to files of periods (-o DIR/), as its hint says.
	fs.Lookup("format").Usage = "output format: " + render.ListFormats(render.Formats(), ", or ", true)
	registerSelection(fs, &o.sel)
	registerStats(fs, &o.sel)
	o.tls.register(fs)
	fs.StringVarP(&o.iface, "interface", "i", "", "network interface to capture on (lo, eth0, ...; any: every interface)")
	fs.StringSliceVarP(&o.ports, "port", "p", []string{"9092"}, "Kafka broker ports: repeatable, lists and ranges (9092,9093-9095); filtered in the kernel")
	fs.IntVarP(&o.count, "count", "c", 0, "stop after this many Kafka messages")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (30s, 5m, 1h)")
	fs.StringVarP(&o.write, "write", "w", "", "also write the captured packets to this pcapng file (with --rotate or --rotate-size: to files of periods in this directory)")
	o.always.register(fs)
	fs.BoolVar(&o.findings, "findings", false, "when the capture stops, print what kdissect doctor finds wrong: findings, worst first, with their frames")
	fs.BoolVar(&o.Lean, "no-fields", false, "parquet (with -o DIR/): leave the field tree out (the fields column is null), for smaller files written faster")
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
	if len(ports.Ranges()) == 0 {
		return fail("no ports given")
	}
	always, err := o.always.build(&o.Common, o.write, stderr)
	if err != nil {
		return fail("%v", err)
	}
	keys, err := cli.KeyLog(o.tls.keylog, true, stderr)
	if err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	// A format written only at the end is refused before Output, whose advice for Parquet
	// (give -o FILE) does not apply: live writes files only to a directory.
	if f, err := o.LookupFormat(); err == nil && f.Batch && o.always.dir == "" {
		return fail("--format %s writes its output only at the end: give -o DIR/ (and --rotate DURATION) for a file per period; without it, live capture shows each message as it completes", f.Name)
	}
	var f render.Format
	var inner render.Renderer
	if always != nil && always.New != nil {
		f, err = o.LookupFormat()
	} else {
		f, inner, err = o.Output(stdout, stderr)
	}
	if err == nil {
		err = cli.WritesSomething(f, o.sel.Stats || o.findings || o.write != "" || o.always.ring != 0, "--stats (the tables), --findings, -w FILE (the packets) or --ring SIZE")
	}
	if err != nil {
		return fail("%v", err)
	}
	if always != nil {
		f.Needs = o.always.needs(f.Needs)
		if always.Packets != "" {
			o.write = ""
		}
	}
	// The analyses and the doctor are made before the codec, which keeps the fields they read.
	stats, findings := cli.Analyses(o.sel.Stats), cli.NewFindings(o.findings)
	f.Needs = findings.Needs(f.Needs)
	c, plan, err := o.CodecPlan(stderr, o.sel, &f.Needs, append(stats.Reads(), findings.Reads()...))
	if err != nil {
		return cmd.Report(stderr, err)
	}

	live := cli.Live{Iface: o.iface, Ports: ports, Count: o.count, Duration: o.duration, Write: o.write, Always: always, Stats: stats, Findings: findings}
	return live.Run(cmd, dissect.Config{Codec: c, Out: inner, Plan: plan, Select: o.sel, IsServerPort: ports.Has, Keys: keys}, f, stdout, stderr)
}
