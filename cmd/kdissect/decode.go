package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/render"
)

type decodeOptions struct {
	common
	api     string
	version int
}

func runDecode(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o := &decodeOptions{}
	fs := flag.NewFlagSet("kdissect decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.register(fs, render.Formats()[0].Name)
	fs.StringVar(&o.api, "api", "", "decode the frames as responses of this API (name or key)")
	fs.IntVar(&o.version, "api-version", -1, "the API version of the responses (with --api)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "kdissect decode: "+format+"\n", a...)
		return 1
	}
	c, err := o.codec()
	if err != nil {
		return fail("%v", err)
	}
	name, in := "stdin", stdin
	if fs.NArg() > 1 {
		return fail("one input file at most")
	}
	if fs.NArg() == 1 {
		name = fs.Arg(0)
		f, err := os.Open(name)
		if err != nil {
			return fail("%v", err)
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return fail("%s: %v", name, err)
	}
	var key, version int16 = -1, -1
	if o.api != "" {
		a, err := c.Schemas.Lookup(o.api)
		if err != nil {
			return fail("--api: %v", err)
		}
		if o.version < 0 {
			return fail("--api needs --api-version")
		}
		key, version = a.Key, int16(o.version)
	}
	_, out, err := o.output(stdout)
	if err != nil {
		return fail("%v", err)
	}
	status := 0
	if err := (dissect.Frames{Codec: c, Out: out, APIKey: key, Version: version}).Decode(name, data); err != nil {
		status = fail("%v", err)
	}
	if err := out.Close(); err != nil {
		return fail("%v", err)
	}
	if bytes.Equal(data, nil) {
		return fail("%s: no input", name)
	}
	return status
}
