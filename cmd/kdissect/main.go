// Command kdissect dissects the Apache Kafka wire protocol: from capture files, or raw frames,
// it prints every message field by field with offsets, sizes, types and values.
//
//	kdissect [flags] CAPTURE...         dissect pcap/pcapng files (gzipped too; - is stdin)
//	kdissect decode [flags] [FILE]      decode raw Kafka frames (binary or hex text)
//	kdissect schema [API] [flags]       the APIs, or one message's layout at a version
//	kdissect errors [CODE|NAME]         Kafka's error codes and what they mean
//	kdissect live -i IFACE [flags]      capture on a network interface (Linux)
//	kdissect version                    the version, and the Kafka versions known
//
// Every subcommand takes --help. The subcommands and their usage are in cli.go; the machinery
// that finds them, checks flags and exits with 0, 1 or 2 is package internal/cli.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/cli"
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
	explain   bool
	maxBytes  int
	// maxDecompressed caps one batch's decompressed size; showSecrets keeps passwords visible.
	maxDecompressed int64
	showSecrets     bool
	records         string
	// times is -t, how summaries and diagram headings show times.
	times string
	// trees: a display filter reads the messages' bodies, so they are decoded in full.
	trees bool
	// lean leaves the field tree out (--no-fields); toFile: the output goes to a file the user
	// named (-o), where a binary format may go; capture names the one capture read, if one.
	lean    bool
	toFile  bool
	capture string
	// maxMessages is how many messages a page holds (html).
	maxMessages int
}

func (c *common) register(fs *flag.FlagSet, defaultFormat string) {
	fs.StringVar(&c.format, "format", defaultFormat, "output format: "+render.ListFormats(render.Formats(), ", or ", true))
	fs.BoolVarP(&c.hex, "hex", "x", false, "diagram: add each field's bytes in hex and a hex dump of each message")
	fs.BoolVar(&c.explain, "explain", false, "diagram: under each field, how it is encoded: length and count prefixes, varint bytes and zigzag steps, named bits, why the header has its version")
	fs.IntVar(&c.maxBytes, "max-bytes", 64, "diagram: cut byte and string values longer than this (0: never)")
	fs.StringVar(&c.schemaDir, "schema-dir", "", "directory of Kafka JSON message definitions (a Kafka release's common/message folder, a KIP draft) merged over the built-in ones, version by version")
	fs.IntVar(&c.apiKey, "api-key", -1, "API key for definitions in --schema-dir whose apiKey is not a number (KIP drafts)")
	fs.Int64Var(&c.maxDecompressed, "max-decompressed", 64<<20, "largest decompressed size of one record batch, in bytes; larger batches are shown compressed with a warning")
	fs.StringVar(&c.records, "records", "", "how much of record batches to decode: full (every record, decompressed), headers (batch headers and record counts), none (raw bytes); "+render.RecordsDefaults(render.Formats()))
	fs.StringVarP(&c.times, "time", "t", "", "time format, as tshark's -t: ad (date and time, UTC), a (time of day, UTC), r (seconds since the first packet), d (since the previous message), e (epoch); default r for summary, ad for diagram")
	fs.BoolVar(&c.showSecrets, "show-secrets", false, "show SASL passwords, SCRAM proofs, OAuth tokens and token HMACs instead of <redacted>")
	c.registerPage(fs)
}

// codec builds the codec from the built-in definitions and --schema-dir, whose notices (files
// skipped, versions that differ from the built-in ones) go to stderr.
func (c *common) codec(stderr io.Writer) (*codec.Codec, error) {
	set, err := schema.Embedded()
	if err != nil {
		return nil, err
	}
	if c.schemaDir != "" {
		if set, err = set.WithDir(c.schemaDir, c.apiKey); err != nil {
			return nil, err
		}
		for _, n := range set.Notices() {
			fmt.Fprintf(stderr, "kdissect: %s\n", n.Text)
		}
	} else if c.apiKey >= 0 {
		return nil, cli.FlagError("--api-key goes with --schema-dir")
	}
	// An unknown format is reported by output; until then it counts as one that shows all.
	f, err := c.lookupFormat()
	if err != nil {
		f = render.Formats()[0]
	}
	cc, err := dissect.NewCodec(set, f, dissect.CodecOptions{Records: c.records, MaxDecompressed: c.maxDecompressed, ShowSecrets: c.showSecrets, Trees: c.trees})
	if err != nil {
		return nil, cli.FlagError(err.Error())
	}
	return cc, nil
}

// output returns the format chosen and its renderer, writing to w; what it leaves out is said on
// stderr.
func (c *common) output(w, stderr io.Writer) (render.Format, render.Renderer, error) {
	f, err := c.lookupFormat()
	if err != nil {
		return f, nil, err
	}
	switch {
	case f.Binary && !c.toFile:
		return f, nil, fmt.Errorf("--format %s writes a file, not text: give -o FILE%s, or -o DIR/ for a file per capture (-o - for stdout)", f.Name, f.Ext)
	case f.Binary && cli.IsTerminal(w):
		return f, nil, fmt.Errorf("--format %s: not writing a binary file to a terminal", f.Name)
	}
	times, err := render.ParseTimeFormat(c.times)
	if err != nil {
		return f, nil, fmt.Errorf("-t: %v", err)
	}
	o := render.Options{Color: cli.Colorful(w), Hex: c.hex, Explain: c.explain, MaxBytes: c.maxBytes, Time: times,
		NoTree: c.lean, File: c.capture}
	c.pageOptions(&o, stderr)
	return f, f.New(w, o), nil
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
	// read holds the files of -r; version is --version.
	read    []string
	version bool
	// count and duration stop the run after so many messages, or so long (a pipe).
	count    int
	duration time.Duration
	// write is -w: the packets of the messages shown are written to it.
	write string
	// cpuProfile and memProfile name files for Go CPU and heap profiles of the run (hidden: for
	// kdissect's developers).
	cpuProfile, memProfile string
	// outPath is -o; dest, when set, is the file the output goes to instead of stdout.
	outPath string
	dest    io.Writer
}

func captureFlags() (*flag.FlagSet, *captureOptions) {
	o := &captureOptions{}
	fs := flag.NewFlagSet("kdissect", flag.ContinueOnError)
	o.register(fs, render.Formats()[0].Name)
	registerSelection(fs, &o.sel)
	o.tls.register(fs)
	o.registerOutput(fs)
	fs.StringArrayVarP(&o.read, "read", "r", nil, "read this capture file (repeatable; - is stdin), as tcpdump and tshark do; file names may also follow the flags")
	fs.StringVarP(&o.write, "write", "w", "", "also write the packets that carry the messages shown (with their connections' handshakes) to this pcapng file")
	fs.BoolVar(&o.noProgress, "no-progress", false, "no progress line on stderr while reading files (shown only on a terminal, after a second)")
	fs.StringSliceVarP(&o.ports, "port", "p", nil, "Kafka broker ports: repeatable, lists and ranges (9092,9093-9095); without -p, Kafka is detected on any port")
	fs.BoolVar(&o.detect, "detect", false, "also detect Kafka on ports -p does not name, from the first request of each connection")
	fs.IntVar(&o.workers, "workers", min(runtime.GOMAXPROCS(0), 8), "connections of a capture file are spread over this many goroutines (1: one goroutine reads, reassembles and decodes)")
	fs.IntVarP(&o.count, "count", "c", 0, "stop after this many Kafka messages")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (30s, 5m, 1h), for a capture coming through a pipe")
	fs.BoolVar(&o.version, "version", false, "print kdissect's version and the newest Kafka versions it knows, and exit")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a Go heap profile at the end of the run to this file")
	fs.MarkHidden("cpuprofile")
	fs.MarkHidden("memprofile")
	cli.SetMinimum(fs, "workers", 1)
	cli.HideDefault(fs, "api-key", "correlation-id", "stream")
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
	fs.StringVarP(&s.Expr, "display-filter", "Y", "", "show only pairs for which this expression holds (see README, Display filters): 'api == \"Fetch\" && latency_ms > 100'")
	fs.BoolVar(&s.Stats, "stats", false, "after the messages, print tables: per API, per error code, per connection, per topic")
}

func runCapture(cmd *cli.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, o := captureFlags()
	if status, ok := cmd.Parse(fs, args, stdout, stderr); !ok {
		return status
	}
	if o.version {
		v := cmd.Program().Command("version")
		return runVersion(v, fs.Args(), stdin, stdout, stderr)
	}
	files := append(o.read, fs.Args()...)
	if len(files) == 0 {
		return cmd.UsageError(stderr, "no capture file given: kdissect FILE..., kdissect -r FILE, or - for stdin")
	}
	if cli.StdinTerminal(files, stdin) {
		return cmd.UsageError(stderr, "- reads a capture from stdin, which is a terminal: pipe one in (tcpdump -U -w - 'tcp port 9092' | kdissect -) or name a file")
	}
	return o.dissect(cmd, files, stdin, stdout, stderr)
}

// dissect runs the capture command on files with the options parsed.
func (o *captureOptions) dissect(cmd *cli.Command, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if o.outPath != "" {
		return o.dissectTo(cmd, files, stdin, stdout, stderr)
	}
	ports, err := capture.ParsePorts(o.ports)
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	o.trees = o.sel.ReadsBodies()
	c, err := o.codec(stderr)
	if err != nil {
		return cmd.Report(stderr, err)
	}
	f, out, err := o.output(o.messagesTo(stdout), stderr)
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	cli.TuneGC(c.Shallow)
	cfg := dissect.Config{Codec: c, Out: out, Needs: f.Needs, Select: o.sel, IsServerPort: ports.Has,
		Detect: len(o.ports) == 0 || o.detect, Workers: o.workers, RoundPackets: o.roundPackets,
		Limit: o.count, Batch: f.Batch}
	warnings := cli.NewWarnings(stderr)
	cfg.Warn = warnings.Warn
	if !o.noProgress && cli.ProgressWanted(o.messagesTo(stdout), stderr, f.Silent) {
		cfg.Progress = warnings.Progress
	}
	if err := o.sel.Check(c); err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	if cfg.Keys, err = cli.KeyLog(o.tls.keylog, false, stderr); err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	var save *dissect.Save
	if o.write != "" {
		if save, err = dissect.CreateSave(o.write, files); errors.Is(err, dissect.ErrSavingInput) {
			return cmd.Failed(stderr, "-w %s: %v", o.write, err)
		} else if err != nil {
			return cmd.Failed(stderr, "%v", err)
		}
	}
	cfg.Save = save
	p, err := dissect.New(cfg)
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	stopProfiles, err := cli.StartProfiles(o.cpuProfile, o.memProfile, stderr)
	if err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	defer stopProfiles()
	// A damaged file (cut short, a record that cannot be read) is shown up to where it can be
	// read, the error names the file and the packet, and the exit status is 1, wherever the
	// damage is; the other files are read all the same.
	status := cli.ExitOK
	done := o.follow(p, files, stdin, stderr)
	err = p.Files(files, stdin, func(err error) {
		if errors.Is(err, dissect.ErrNeedsFile) {
			status = cmd.UsageError(stderr, "--format %s: %v", f.Name, err)
			return
		}
		status = cmd.Failed(stderr, "%v", err)
	})
	done()
	if err != nil {
		return cmd.Failed(stderr, "writing output: %v", err)
	}
	p.Close()
	followed(p, stderr)
	if save != nil {
		if err := save.Close(); err != nil {
			status = cmd.Failed(stderr, "-w %s: %v", o.write, err)
		} else {
			fmt.Fprintf(stderr, "kdissect: %d packets written to %s\n", save.Written(), o.write)
		}
	}
	shown, _ := p.Shown()
	if why := p.Seen().Explain(shown, o.ports, o.sel.Filters()); why != "" && status == cli.ExitOK {
		fmt.Fprintf(stderr, "kdissect: %s\n", why)
	}
	if st := p.Stats(); st != nil && p.Err() == nil && shown > 0 {
		if !f.Silent && f.Stats == nil {
			fmt.Fprintln(o.statsTo(f, stdout))
		}
		if err := f.WriteStats(st, o.statsTo(f, stdout)); err != nil {
			return cmd.Failed(stderr, "writing output: %v", err)
		}
	}
	if err := p.Err(); err != nil {
		return cmd.Failed(stderr, "writing output: %v", err)
	}
	return status
}
