// Command kdissect dissects the Apache Kafka wire protocol: from capture files, or raw frames,
// it prints every message field by field with offsets, sizes, types and values.
//
//	kdissect [flags] CAPTURE...         dissect pcap/pcapng files (gzipped too)
//	kdissect decode [flags] [FILE]      decode raw Kafka frames (binary or --hex)
//
// Run "kdissect help" for the flags.
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/render"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `kdissect dissects the Apache Kafka wire protocol.

Usage:
  kdissect [flags] CAPTURE...        dissect pcap or pcapng files (gzipped too)
  kdissect decode [flags] [FILE]     decode raw frames (size prefix + header + body); stdin if no FILE
  kdissect help                      this text

`

// run is main without the process: arguments, streams, exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "decode":
			return runDecode(args[1:], stdin, stdout, stderr)
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
}

func (c *common) register(fs *flag.FlagSet, defaultFormat string) {
	fs.StringVar(&c.format, "format", defaultFormat, "output format: summary or json")
	fs.StringVar(&c.schemaDir, "schema-dir", "", "directory of Kafka JSON message definitions that take precedence over the built-in ones")
	fs.IntVar(&c.apiKey, "api-key", -1, "API key for definitions in --schema-dir whose apiKey is not a number (KIP drafts)")
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
	return codec.New(set), nil
}

func (c *common) renderer(w io.Writer) (render.Renderer, error) {
	switch c.format {
	case "summary":
		return render.NewSummary(w, timeZero), nil
	case "json":
		return render.NewJSON(w), nil
	}
	return nil, fmt.Errorf("unknown --format %q (summary or json)", c.format)
}

type captureOptions struct {
	common
	ports []string
}

func captureFlags(stderr io.Writer) (*flag.FlagSet, *captureOptions) {
	o := &captureOptions{}
	fs := flag.NewFlagSet("kdissect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.register(fs, "summary")
	fs.StringSliceVarP(&o.ports, "port", "p", []string{"9092"}, "Kafka broker ports: repeatable, lists and ranges (9092,9093-9095)")
	return fs, o
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
	isPort, err := parsePorts(o.ports)
	if err != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", err)
		return 2
	}
	c, err := o.codec()
	if err != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", err)
		return 2
	}
	out, err := o.renderer(stdout)
	if err != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", err)
		return 2
	}
	p := newPipeline(c, out)
	opt := reassembly.Options{IsServerPort: isPort}
	status, read := 0, 0
	for _, name := range fs.Args() {
		n, err := dissectFile(name, p, opt, stderr)
		read += n
		if err != nil {
			fmt.Fprintf(stderr, "kdissect: %v\n", err)
			if n == 0 {
				status = 1
			}
		}
	}
	if err := out.Close(); err != nil && p.err == nil {
		p.err = err
	}
	if p.err != nil {
		fmt.Fprintf(stderr, "kdissect: writing output: %v\n", p.err)
		return 1
	}
	return status
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
