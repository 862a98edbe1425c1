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

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/render"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
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
	fs.StringVar(&c.format, "format", defaultFormat, "output format: diagram, summary, json, or none (with --stats)")
	fs.BoolVarP(&c.hex, "hex", "x", false, "diagram: add each field's bytes in hex and a hex dump of each message")
	fs.IntVar(&c.maxBytes, "max-bytes", 64, "diagram: cut byte and string values longer than this (0: never)")
	fs.StringVar(&c.schemaDir, "schema-dir", "", "directory of Kafka JSON message definitions that take precedence over the built-in ones")
	fs.IntVar(&c.apiKey, "api-key", -1, "API key for definitions in --schema-dir whose apiKey is not a number (KIP drafts)")
	fs.Int64Var(&c.maxDecompressed, "max-decompressed", 64<<20, "largest decompressed size of one record batch, in bytes; larger batches are shown compressed with a warning")
	fs.StringVar(&c.records, "records", "", "how much of record batches to decode: full (every record, decompressed), headers (batch headers and record counts), none (raw bytes); default full for diagram and json, headers for summary and none")
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
		return nil, flagError("--api-key goes with --schema-dir")
	}
	c2 := codec.New(set)
	mode := c.records
	if mode == "" {
		// Summaries and statistics need record counts, which batch headers give; diagrams
		// and JSON show every record.
		mode = "full"
		if c.format == "summary" || c.format == "none" {
			mode = "headers"
		}
	}
	// Summaries and statistics never show the field tree: decode only what they read.
	c2.Shallow = c.format == "summary" || c.format == "none"
	switch mode {
	case "full", "headers":
		c2.Records = records.New(records.Options{MaxDecompressed: c.maxDecompressed, HeadersOnly: mode == "headers",
			CountsOnly: c2.Shallow})
	case "none":
	default:
		return nil, flagError(fmt.Sprintf("--records %q: full, headers or none", c.records))
	}
	c2.ShowSecrets = c.showSecrets
	return c2, nil
}

func (c *common) renderer(w io.Writer) (render.Renderer, error) {
	switch c.format {
	case "diagram":
		return render.NewDiagram(w, render.DiagramOptions{Color: colorful(w), Hex: c.hex, MaxBytes: c.maxBytes}), nil
	case "summary":
		return render.NewSummary(w, timeZero), nil
	case "json":
		return render.NewJSON(w), nil
	case "none":
		return render.Discard{}, nil
	}
	return nil, fmt.Errorf("unknown --format %q (diagram, summary, json or none)", c.format)
}

type captureOptions struct {
	common
	sel    selection
	ports  []string
	detect bool
	tls    tlsOptions
	// noProgress turns off the progress line that a terminal gets on stderr.
	noProgress bool
	// workers is how many assemblers share the reading of a capture file; roundPackets, when
	// set, changes how many segments they are given at a time (tests).
	workers, roundPackets int
	// read holds the files of -r; version is --version.
	read    []string
	version bool
	// cpuProfile and memProfile name files for Go CPU and heap profiles of the run (hidden: for
	// kdissect's developers).
	cpuProfile, memProfile string
}

func captureFlags() (*flag.FlagSet, *captureOptions) {
	o := &captureOptions{}
	fs := flag.NewFlagSet("kdissect", flag.ContinueOnError)
	o.register(fs, "diagram")
	o.sel.register(fs)
	o.tls.register(fs)
	fs.StringArrayVarP(&o.read, "read", "r", nil, "read this capture file (repeatable; - is stdin), as tcpdump and tshark do; file names may also follow the flags")
	fs.BoolVar(&o.noProgress, "no-progress", false, "no progress line on stderr while reading files (shown only on a terminal, after a second)")
	fs.StringSliceVarP(&o.ports, "port", "p", nil, "Kafka broker ports: repeatable, lists and ranges (9092,9093-9095); without -p, Kafka is detected on any port")
	fs.BoolVar(&o.detect, "detect", false, "also detect Kafka on ports -p does not name, from the first request of each connection")
	fs.IntVar(&o.workers, "workers", min(runtime.GOMAXPROCS(0), 8), "connections of a capture file are spread over this many goroutines (1: one goroutine reads, reassembles and decodes)")
	fs.BoolVar(&o.version, "version", false, "print kdissect's version and the newest Kafka versions it knows, and exit")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a Go heap profile at the end of the run to this file")
	fs.MarkHidden("cpuprofile")
	fs.MarkHidden("memprofile")
	hideDefault(fs, "api-key", "correlation-id", "stream")
	return fs, o
}

func runCapture(cmd *subcommand, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, o := captureFlags()
	if status, ok := cmd.parse(fs, args, stdout, stderr); !ok {
		return status
	}
	if o.version {
		v := subcommand{name: "version", flags: noFlags("version")}
		return runVersion(&v, fs.Args(), stdin, stdout, stderr)
	}
	files := append(o.read, fs.Args()...)
	if len(files) == 0 {
		return cmd.usageError(stderr, "no capture file given: kdissect FILE..., kdissect -r FILE, or - for stdin")
	}
	return o.dissect(cmd, files, stdin, stdout, stderr)
}

// dissect runs the capture command on files with the options parsed.
func (o *captureOptions) dissect(cmd *subcommand, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	isPort, err := parsePorts(o.ports)
	if err != nil {
		return cmd.usageError(stderr, "%v", err)
	}
	c, err := o.codec()
	if err != nil {
		return cmd.report(stderr, err)
	}
	out, err := o.renderer(stdout)
	if err != nil {
		return cmd.usageError(stderr, "%v", err)
	}
	p := newPipeline(c, out)
	p.showProgress = !o.noProgress && progressWanted(stdout, stderr, o.format)
	p.showing(o.format)
	p.workers, p.roundPackets = o.workers, o.roundPackets
	if c.Shallow {
		tuneGC()
	}
	if err := p.selectWith(&o.sel); err != nil {
		return cmd.usageError(stderr, "%v", err)
	}
	if p.keys, err = o.tls.keys(false, stderr); err != nil {
		return failed(stderr, "%v", err)
	}
	opt := reassembly.Options{IsServerPort: isPort}
	if len(o.ports) == 0 || o.detect {
		opt.Detect = func(b []byte, strict bool) (reassembly.Verdict, string) {
			v, why := c.DetectRequest(b, strict)
			return reassembly.Verdict(v), why
		}
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return failed(stderr, "%v", err)
		}
		defer stop()
	}
	if o.memProfile != "" {
		runtime.MemProfileRate = 64 << 10
		defer writeHeapProfile(o.memProfile, stderr)
	}
	// A damaged file (cut short, a record that cannot be read) is shown up to where it can be
	// read, the error names the file and the packet, and the exit status is 1, wherever the
	// damage is; the other files are read all the same.
	status := exitOK
	stdinTaken := false
	counts := newRunCounts()
	p.counts = counts
	for _, name := range files {
		if len(files) > 1 {
			if f, ok := out.(interface{ File(string) error }); ok {
				p.keep(f.File(name))
			}
		}
		if name == "-" {
			if stdinTaken {
				status = failed(stderr, "stdin (-) given twice: it can be read once")
				continue
			}
			stdinTaken = true
		}
		r, err := openCapture(name, stdin)
		if err == nil {
			_, err = dissectFile(r, name, p, opt, stderr)
			counts.read(r.Stats())
			if n, pkt, capLen, length := r.Overlong(); n > 0 {
				fmt.Fprintf(stderr, "kdissect: %s: %d packet records claim more captured bytes than the packet had (the first: packet %d, %d > %d bytes), as some capture tools write them; read anyway, trusting the IP header's length\n",
					name, n, pkt, capLen, length)
			}
			r.Close()
		}
		if err != nil {
			status = failed(stderr, "%v", err)
		}
	}
	if err := out.Close(); err != nil && p.err == nil {
		p.err = err
	}
	counts.shown = p.messages
	if why := counts.explain(o.ports, p.filter != nil); why != "" && status == exitOK {
		fmt.Fprintf(stderr, "kdissect: %s\n", why)
	}
	if p.stats != nil && p.err == nil && p.messages > 0 {
		p.keep(writeStats(p.stats, o.format, stdout))
	}
	if p.err != nil {
		return failed(stderr, "writing output: %v", p.err)
	}
	return status
}

// writeStats writes the statistics after the messages: JSON lines after JSON lines, tables
// otherwise (after a blank line, when messages came before).
func writeStats(s *render.Stats, format string, w io.Writer) error {
	switch format {
	case "json":
		return s.WriteJSON(w)
	case "none":
	default:
		fmt.Fprintln(w)
	}
	return s.Write(w)
}

// openCapture opens a capture file, or stdin for "-".
func openCapture(name string, stdin io.Reader) (*capture.Reader, error) {
	if name == "-" {
		return capture.NewReader(stdin, "stdin")
	}
	return capture.Open(name)
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
