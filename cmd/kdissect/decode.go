package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/render"
)

type decodeOptions struct {
	cli.Common
	api     string
	version int
}

func decodeFlags() (*flag.FlagSet, *decodeOptions) {
	o := &decodeOptions{}
	fs := flag.NewFlagSet("kdissect decode", flag.ContinueOnError)
	registerCommon(fs, &o.Common, render.Formats()[0].Name)
	// decode has no --stats: no format hint mentions it.
	fs.Lookup("format").Usage = "output format: " + render.ListFormats(render.Formats(), " or ", false) + " (parquet to stdout when it is not a terminal: > FILE.parquet)"
	fs.StringVar(&o.api, "api", "", "decode the frames as responses of this API (name or key)")
	fs.IntVar(&o.version, "api-version", -1, "the API version of the responses (with --api)")
	cli.HideDefault(fs, "api-version", "api-key")
	return fs, o
}

func runDecode(cmd *cli.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, o := decodeFlags()
	if status, ok := cmd.Parse(fs, args, stdout, stderr); !ok {
		return status
	}
	fail := func(format string, a ...any) int { return cmd.Failed(stderr, "decode: "+format, a...) }
	if fs.NArg() > 1 {
		return cmd.UsageError(stderr, "one input file at most, got %q", fs.Args())
	}
	// With no file, frames come from stdin: from a terminal, none would (decode would wait).
	if cli.StdinTerminal([]string{cmp.Or(fs.Arg(0), "-")}, stdin) {
		return cmd.UsageError(stderr, "decode reads frames from stdin, which is a terminal: pipe them in (xxd -p frames.bin | kdissect decode) or name a file")
	}
	if o.api == "" && fs.Changed("api-version") {
		return cmd.UsageError(stderr, "--api-version goes with --api")
	}
	c, err := o.Codec(stderr)
	if err != nil {
		return cmd.Report(stderr, err)
	}
	name, data, err := dissect.ReadFrames(fs.Arg(0), stdin)
	if err != nil {
		return fail("%v", err)
	}
	var key, version int16 = -1, -1
	if o.api != "" {
		a, err := c.Schemas.Lookup(o.api)
		if err != nil {
			return cmd.UsageError(stderr, "--api: %v", err)
		}
		if o.version < 0 {
			return cmd.UsageError(stderr, "--api needs --api-version")
		}
		key, version = a.Key, int16(o.version)
	}
	// decode has no -o: stdout is its only output, so a binary format goes there (Output
	// still refuses a terminal).
	o.ToFile = true
	f, out, err := o.Output(stdout, stderr)
	if err == nil {
		err = cli.WritesSomething(f, false, "") // decode has no --stats
	}
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	status := 0
	fr := dissect.Frames{Codec: c, Out: out, APIKey: key, Version: version,
		Warn: func(err error) { fmt.Fprintf(stderr, "kdissect: decode: %v\n", err) }}
	if err := fr.Decode(name, data); err != nil {
		var ie *dissect.InputError
		if !errors.As(err, &ie) {
			return fail("%v", err)
		}
		status = fail("%v", err)
	}
	if err := out.Close(); err != nil {
		return fail("%v", err)
	}
	return status
}
