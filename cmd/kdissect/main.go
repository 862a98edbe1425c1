// Command kdissect dissects the Apache Kafka wire protocol: from capture files, a live
// interface or raw frames, it prints every message field by field with offsets, sizes, types
// and values, or serves them as a page.
//
//	kdissect [flags] CAPTURE...         dissect pcap/pcapng files (gzipped too; - is stdin)
//	kdissect decode [flags] [FILE]      decode raw Kafka frames (binary or hex text)
//	kdissect schema [API] [flags]       the APIs, or one message's layout at a version
//	kdissect errors [CODE|NAME]         Kafka's error codes and what they mean
//	kdissect live -i IFACE [flags]      capture on a network interface (Linux)
//	kdissect serve [flags] CAPTURE...   the workshop page over HTTP (or serve --live -i IFACE)
//	kdissect demo [flags]               dissect a capture built into kdissect
//	kdissect version                    the version, and the Kafka versions known
//	kdissect help [SUBCOMMAND]          the usage of kdissect or of a subcommand
//
// Every subcommand takes --help. The subcommands and their usage are in cli.go; the machinery
// that finds them, checks flags and exits with 0, 1 or 2 is package internal/cli.
package main

import (
	"io"
	"os"
	"runtime"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/render"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// registerCommon registers the flags every subcommand shares (cli.Common says what they ask for).
func registerCommon(fs *flag.FlagSet, c *cli.Common, defaultFormat string) {
	fs.StringVar(&c.Format, "format", defaultFormat, "output format: "+render.ListFormats(render.Formats(), ", or ", true))
	fs.BoolVarP(&c.Hex, "hex", "x", false, "diagram: add each field's bytes in hex and a hex dump of each message")
	fs.BoolVar(&c.Explain, "explain", false, "diagram: under each field, how it is encoded: length and count prefixes, varint bytes and zigzag steps, named bits, why the header has its version")
	fs.IntVar(&c.MaxBytes, "max-bytes", 64, "diagram: cut byte and string values longer than this (0: never)")
	registerDecoding(fs, c)
	fs.StringVar(&c.Records, "records", "", "how much of record batches to decode: full (every record, decompressed), headers (batch headers and record counts), none (raw bytes); "+render.RecordsDefaults(render.Formats()))
	fs.StringVarP(&c.Times, "time", "t", "", "time format, as tshark's -t: ad (date and time, UTC), a (time of day, UTC), r (seconds since the first packet of all the files), d (since the previous message of the file), e (epoch); default r for summary, ad for diagram")
	fs.BoolVar(&c.ShowSecrets, "show-secrets", false, "show SASL passwords, SCRAM proofs, OAuth tokens and token HMACs instead of <redacted>")
	fs.IntVar(&c.MaxMessages, "max-messages", render.DefaultMaxMessages, "html: how many messages the page holds; the others are counted and left out (0: no limit)")
	parquet, _ := render.LookupFormat("parquet")
	fs.StringVar(&c.Compression, "parquet-compression", "", "parquet: how pages are compressed: "+
		strings.Join(parquet.Compressions, ", ")+" (default "+parquet.Compressions[0]+", fastest; zstd: files 1.5 to 1.8 times smaller, written slower)")
}

// registerDecoding registers the flags of how messages are decoded, whatever is shown of them:
// the definitions and the decompression limit.
func registerDecoding(fs *flag.FlagSet, c *cli.Common) {
	fs.StringVar(&c.SchemaDir, "schema-dir", "", "directory of Kafka JSON message definitions (a Kafka release's common/message folder, a KIP draft) merged over the built-in ones, version by version")
	fs.IntVar(&c.APIKey, "api-key", -1, "API key for definitions in --schema-dir whose apiKey is not a number (KIP drafts)")
	fs.Int64Var(&c.MaxDecompressed, "max-decompressed", 64<<20, "largest decompressed size of one record batch, in bytes; larger batches are shown compressed with a warning")
}

// captureOptions are the capture command's flags: cli.Capture's, -r and --version.
type captureOptions struct {
	cli.Capture
	tls      tlsOptions
	rotation rotation
	read     []string
	version  bool
}

func captureFlags() (*flag.FlagSet, *captureOptions) {
	o := &captureOptions{}
	fs := flag.NewFlagSet("kdissect", flag.ContinueOnError)
	registerCommon(fs, &o.Common, render.Formats()[0].Name)
	registerSelection(fs, &o.Select)
	registerStats(fs, &o.Select)
	o.registerInput(fs)
	fs.StringVarP(&o.OutPath, "output", "o", "", "write the output to this file instead of stdout (- is stdout); to a directory (one that exists, or a name ending in /), one file per capture, named after it, the captures read in parallel; from a pipe with --rotate or --rotate-size, one file per period")
	o.rotation.register(fs)
	fs.BoolVar(&o.Lean, "no-fields", false, "parquet: leave the field tree out (the fields column is null), for smaller files written faster")
	fs.StringVarP(&o.Write, "write", "w", "", "also write the packets that carry the messages shown (with their connections' handshakes) to this pcapng file; from a pipe with --rotate or --rotate-size, every packet read, to pcapng files of periods in this directory (DIR/)")
	fs.BoolVar(&o.Findings, "findings", false, "after the messages, print what kdissect doctor finds wrong: findings, worst first, with their frames")
	fs.BoolVar(&o.version, "version", false, "print kdissect's version and the newest Kafka versions it knows, and exit")
	return fs, o
}

// registerInput registers the flags of the captures read and how: the files, the ports, TLS,
// when to stop, and the profiles of the run (hidden). The doctor command has these too.
func (o *captureOptions) registerInput(fs *flag.FlagSet) {
	o.tls.register(fs)
	fs.StringArrayVarP(&o.read, "read", "r", nil, "read this capture file (repeatable; - is stdin), as tcpdump and tshark do; file names may also follow the flags")
	fs.BoolVar(&o.NoProgress, "no-progress", false, "no progress line on stderr while reading files (shown only on a terminal, after a second)")
	fs.StringSliceVarP(&o.Ports, "port", "p", nil, "Kafka broker ports: repeatable, lists and ranges (9092,9093-9095); without -p, Kafka is detected on any port")
	fs.BoolVar(&o.Detect, "detect", false, "also detect Kafka on ports -p does not name, from the first request of each connection")
	fs.IntVar(&o.Workers, "workers", min(runtime.GOMAXPROCS(0), 8), "connections of a capture file are spread over this many goroutines (1: one goroutine reads, reassembles and decodes)")
	fs.IntVarP(&o.Count, "count", "c", 0, "stop after this many Kafka messages")
	fs.DurationVar(&o.Duration, "duration", 0, "stop after this long (30s, 5m, 1h), for a capture coming through a pipe")
	fs.StringVar(&o.Profiles.CPU, "cpuprofile", "", "write a Go CPU profile of the run to this file")
	fs.StringVar(&o.Profiles.Mem, "memprofile", "", "write a Go heap profile at the end of the run to this file")
	fs.StringVar(&o.Profiles.Trace, "trace", "", "write a Go execution trace of the run to this file")
	for _, name := range []string{"cpuprofile", "memprofile", "trace"} {
		fs.MarkHidden(name)
	}
	cli.SetMinimum(fs, "workers", 1)
	cli.HideDefault(fs, "api-key", "correlation-id", "stream")
}

// registerSelection registers the flags that choose which messages are shown.
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
	fs.StringVarP(&s.Expr, "display-filter", "Y", "", "show only pairs for which this expression holds (see docs/filters.md): 'api == \"Fetch\" && latency_ms > 100'")
}

// registerStats registers --stats.
func registerStats(fs *flag.FlagSet, s *dissect.Selection) {
	fs.BoolVar(&s.Stats, "stats", false, "after the messages, print tables: per API, per error code, per connection, per topic, per fetch session, consumer lag, end-to-end latency, group rebalances, producers, transactions, latency per broker, topic and client id, the slowest answers, rates per topic")
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

// dissect runs the capture command on files.
func (o *captureOptions) dissect(cmd *cli.Command, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o.KeyLog = o.tls.keylog
	if o.rotation.given() {
		if err := o.rotating(files, stdin, stderr); err != nil {
			return cmd.UsageError(stderr, "%v", err)
		}
	}
	return o.Run(cmd, files, stdin, stdout, stderr)
}
