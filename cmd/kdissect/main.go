// Command kdissect dissects the Apache Kafka wire protocol: from capture files, or raw frames,
// it prints every message field by field with offsets, sizes, types and values.
//
//	kdissect [flags] CAPTURE...         dissect pcap/pcapng files (gzipped too)
//	kdissect decode [flags] [FILE]      decode raw Kafka frames (binary or hex text)
//	kdissect schema [API] [flags]       the APIs, or one message's layout at a version
//	kdissect errors                     Kafka's error codes
//	kdissect live -i IFACE [flags]      capture on a network interface (Linux)
//
// Run "kdissect help" for the flags.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/render"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `kdissect dissects the Apache Kafka wire protocol.

Usage:
  kdissect [flags] CAPTURE...        dissect pcap or pcapng files (gzipped too)
  kdissect decode [flags] [FILE]     decode raw frames (size prefix + header + body; binary or hex
                                     text); stdin if no FILE
  kdissect schema [API] [flags]      without API: every API; with one (name or key): the layout of
                                     its request or response (--response) at a version (--version)
  kdissect errors                    Kafka's error codes
  kdissect live -i IFACE [flags]     capture on a network interface (Linux; root or CAP_NET_RAW);
                                     "kdissect live --help" for its flags
  kdissect demo [flags]              dissect a capture built into kdissect (a franz-go client and a broker)
  kdissect help                      this text

`

// run is main without the process: arguments, streams, exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "demo":
			return runDemo(args[1:], stdout, stderr)
		case "decode":
			return runDecode(args[1:], stdin, stdout, stderr)
		case "schema":
			return runSchema(args[1:], stdout, stderr)
		case "errors":
			return runErrors(args[1:], stdout, stderr)
		case "live":
			return runLive(args[1:], stdout, stderr)
		case "help", "-h", "--help":
			fmt.Fprint(stdout, usage)
			fs, _ := captureFlags(stdout)
			fs.PrintDefaults()
			return 0
		}
	}
	return runCapture(args, stdout, stderr)
}

// common holds the flags every subcommand shares.
type common struct {
	format    string
	schemaDir string
	apiKey    int
	hex       bool
	maxBytes  int
	// maxDecompressed caps one batch's decompressed size; showSecrets keeps passwords visible.
	maxDecompressed int64
	showSecrets     bool
	records         string
}

func (c *common) register(fs *flag.FlagSet, defaultFormat string) {
	fs.StringVar(&c.format, "format", defaultFormat, "output format: "+formatList(render.Formats(), ", or ", true))
	fs.BoolVarP(&c.hex, "hex", "x", false, "diagram: add each field's bytes in hex and a hex dump of each message")
	fs.IntVar(&c.maxBytes, "max-bytes", 64, "diagram: cut byte and string values longer than this (0: never)")
	fs.StringVar(&c.schemaDir, "schema-dir", "", "directory of Kafka JSON message definitions that take precedence over the built-in ones")
	fs.IntVar(&c.apiKey, "api-key", -1, "API key for definitions in --schema-dir whose apiKey is not a number (KIP drafts)")
	fs.Int64Var(&c.maxDecompressed, "max-decompressed", 64<<20, "largest decompressed size of one record batch, in bytes; larger batches are shown compressed with a warning")
	fs.StringVar(&c.records, "records", "", "how much of record batches to decode: full (every record, decompressed), headers (batch headers and record counts), none (raw bytes); "+recordsDefaults())
	fs.BoolVar(&c.showSecrets, "show-secrets", false, "show SASL passwords, SCRAM proofs, OAuth tokens and token HMACs instead of <redacted>")
}

// codec builds the codec from the built-in definitions and --schema-dir.
func (c *common) codec() (*codec.Codec, error) {
	set, err := schema.Embedded()
	if err != nil {
		return nil, err
	}
	if c.schemaDir != "" {
		if set, err = set.WithDir(c.schemaDir, c.apiKey); err != nil {
			return nil, err
		}
	} else if c.apiKey >= 0 {
		return nil, fmt.Errorf("--api-key goes with --schema-dir")
	}
	c2 := codec.New(set)
	// An unknown format is reported by renderer; until then it counts as one that shows all.
	f, known := render.LookupFormat(c.format)
	mode := c.records
	if mode == "" {
		mode = "full"
		if known {
			mode = f.Records
		}
	}
	// Formats that never show the field tree get only what they read.
	c2.Shallow = known && !f.Needs.Tree
	switch mode {
	case "full", "headers":
		c2.Records = records.New(records.Options{MaxDecompressed: c.maxDecompressed, HeadersOnly: mode == "headers",
			CountsOnly: c2.Shallow})
	case "none":
	default:
		return nil, fmt.Errorf("--records %q: full, headers or none", c.records)
	}
	c2.ShowSecrets = c.showSecrets
	return c2, nil
}

// output returns the format chosen and its renderer, writing to w.
func (c *common) output(w io.Writer) (render.Format, render.Renderer, error) {
	f, ok := render.LookupFormat(c.format)
	if !ok {
		return f, nil, fmt.Errorf("unknown --format %q (%s)", c.format, formatList(render.Formats(), " or ", false))
	}
	return f, f.New(w, render.Options{Color: colorful(w), Hex: c.hex, MaxBytes: c.maxBytes}), nil
}

// formatList names formats for the user: "a, b or c"; with hints, each format's hint follows
// its name.
func formatList(fs []render.Format, or string, hints bool) string {
	var s string
	for i, f := range fs {
		switch {
		case i == 0:
		case i == len(fs)-1:
			s += or
		default:
			s += ", "
		}
		s += f.Name
		if hints && f.Hint != "" {
			s += " (" + f.Hint + ")"
		}
	}
	return s
}

// recordsDefaults says which formats decode records how deep unless --records says.
func recordsDefaults() string {
	var depths []string
	byDepth := map[string][]render.Format{}
	for _, f := range render.Formats() {
		if byDepth[f.Records] == nil {
			depths = append(depths, f.Records)
		}
		byDepth[f.Records] = append(byDepth[f.Records], f)
	}
	s := "default"
	for i, d := range depths {
		if i > 0 {
			s += ","
		}
		s += " " + d + " for " + formatList(byDepth[d], " and ", false)
	}
	return s
}

type captureOptions struct {
	common
	sel    dissect.Selection
	ports  []string
	detect bool
	tls    tlsOptions
	// noProgress turns off the progress line that a terminal gets on stderr.
	noProgress bool
	// workers is how many assemblers share the reading of a capture file; roundPackets, when
	// set, changes how many segments they are given at a time (tests).
	workers, roundPackets int
	// cpuProfile and memProfile name files for Go CPU and heap profiles of the run (hidden: for
	// kdissect's developers).
	cpuProfile, memProfile string
}

func captureFlags(stderr io.Writer) (*flag.FlagSet, *captureOptions) {
	o := &captureOptions{}
	fs := flag.NewFlagSet("kdissect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.register(fs, render.Formats()[0].Name)
	registerSelection(fs, &o.sel)
	o.tls.register(fs)
	fs.BoolVar(&o.noProgress, "no-progress", false, "no progress line on stderr while reading files (shown only on a terminal, after a second)")
	fs.StringSliceVarP(&o.ports, "port", "p", nil, "Kafka broker ports: repeatable, lists and ranges (9092,9093-9095); without -p, Kafka is detected on any port")
	fs.BoolVar(&o.detect, "detect", false, "also detect Kafka on ports -p does not name, from the first request of each connection")
	fs.IntVar(&o.workers, "workers", min(runtime.GOMAXPROCS(0), 8), "connections of a capture file are spread over this many goroutines (1: one goroutine reads, reassembles and decodes)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a Go heap profile at the end of the run to this file")
	fs.MarkHidden("cpuprofile")
	fs.MarkHidden("memprofile")
	return fs, o
}

// registerSelection registers the flags that choose which messages are shown, and --stats.
func registerSelection(fs *flag.FlagSet, s *dissect.Selection) {
	fs.StringSliceVar(&s.APIs, "api", nil, "show only these APIs, by name or key (repeatable)")
	fs.StringVar(&s.Topic, "topic", "", "show only pairs that name a topic matching this glob (its name, or its topic id)")
	fs.StringVar(&s.Group, "group", "", "show only pairs that name a consumer group matching this glob")
	fs.StringVar(&s.ClientID, "client-id", "", "show only pairs whose request's client id matches this glob")
	fs.BoolVar(&s.Errors, "errors", false, "show only pairs whose response carries a non-zero error code")
	fs.DurationVar(&s.MinLatency, "min-latency", 0, "show only pairs answered this slowly or slower (e.g. 50ms)")
	fs.Int32Var(&s.CorrelationID, "correlation-id", -1, "show only messages with this correlation id")
	fs.IntVar(&s.Stream, "stream", -1, "show only this connection (the stream number in the output)")
	fs.BoolVar(&s.Requests, "requests", false, "show requests only")
	fs.BoolVar(&s.Responses, "responses", false, "show responses only")
	fs.BoolVar(&s.Stats, "stats", false, "after the messages, print tables: per API, per error code, per connection, per topic")
}

func runCapture(args []string, stdout, stderr io.Writer) int {
	fs, o := captureFlags(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, usage)
		fmt.Fprintln(stderr, "kdissect: no capture file given")
		return 2
	}
	return o.dissect(fs.Args(), stdout, stderr)
}

// dissect runs the capture command on files with the options parsed.
func (o *captureOptions) dissect(files []string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "kdissect: %v\n", err)
		return 2
	}
	isPort, err := parsePorts(o.ports)
	if err != nil {
		return fail(err)
	}
	c, err := o.codec()
	if err != nil {
		return fail(err)
	}
	f, out, err := o.output(stdout)
	if err != nil {
		return fail(err)
	}
	if o.workers < 1 {
		return fail(fmt.Errorf("--workers %d: at least 1", o.workers))
	}
	if c.Shallow {
		tuneGC()
	}
	cfg := dissect.Config{Codec: c, Out: out, Needs: f.Needs, Select: o.sel, IsServerPort: isPort,
		Detect: len(o.ports) == 0 || o.detect, Workers: o.workers, RoundPackets: o.roundPackets}
	// Warnings go through the progress line while one is shown: it is erased first.
	var line *progress
	cfg.Warn = func(err error) {
		w := stderr
		if line != nil {
			w = line
		}
		fmt.Fprintf(w, "kdissect: %v\n", err)
	}
	if !o.noProgress && progressWanted(stdout, stderr, f.Silent) {
		cfg.Progress = func(string) (func(int64, int64, int), func()) {
			line = newProgress(stderr, time.Now)
			return line.update, func() { line.clear(); line = nil }
		}
	}
	if err := o.sel.Check(c); err != nil {
		return fail(err)
	}
	if cfg.Keys, err = o.tls.keys(false, stderr); err != nil {
		return fail(err)
	}
	p, err := dissect.New(cfg)
	if err != nil {
		return fail(err)
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return fail(err)
		}
		defer stop()
	}
	if o.memProfile != "" {
		runtime.MemProfileRate = 64 << 10
		defer writeHeapProfile(o.memProfile, stderr)
	}
	status := 0
	for _, name := range files {
		n, err := p.File(name)
		if err != nil {
			fmt.Fprintf(stderr, "kdissect: %v\n", err)
			if n == 0 {
				status = 1
			}
		}
	}
	p.Close()
	if st := p.Stats(); st != nil && p.Err() == nil {
		if !f.Silent {
			fmt.Fprintln(stdout)
		}
		if err := st.Write(stdout); err != nil {
			fmt.Fprintf(stderr, "kdissect: writing output: %v\n", err)
			return 1
		}
	}
	if err := p.Err(); err != nil {
		fmt.Fprintf(stderr, "kdissect: writing output: %v\n", err)
		return 1
	}
	return status
}

// tuneGC trades memory the summaries and statistics do not use for fewer collections: they
// hold little (a few MiB of frames and shallow trees), so the heap may grow to three times
// that, up to a soft limit of 48 MiB. GOGC and GOMEMLIMIT in the environment take precedence.
func tuneGC() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(200)
		debug.SetMemoryLimit(48 << 20)
	}
}

// startCPUProfile profiles the process into the named file until stop is called.
func startCPUProfile(name string) (stop func(), err error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeHeapProfile writes the heap profile (all allocations so far, and what is in use).
func writeHeapProfile(name string, stderr io.Writer) {
	f, err := os.Create(name)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", err)
	}
}

// parsePorts reads "9092", "9092-9094" and comma lists into a membership test.
func parsePorts(specs []string) (func(uint16) bool, error) {
	var set [65536]bool
	for _, spec := range specs {
		for _, s := range strings.Split(spec, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			lo, hi, isRange := strings.Cut(s, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.ParseUint(lo, 10, 16)
			b, err2 := strconv.ParseUint(hi, 10, 16)
			if err1 != nil || err2 != nil || a == 0 || b < a {
				return nil, fmt.Errorf("bad port or range %q", s)
			}
			for p := a; p <= b; p++ {
				set[p] = true
			}
		}
	}
	return func(p uint16) bool { return set[p] }, nil
}
