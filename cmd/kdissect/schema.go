package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/render"
)

type schemaOptions struct {
	common
	version           int
	request, response bool
	diff              string
}

// runSchema is "kdissect schema [API] [flags]": the table of APIs, or one message's layout.
func runSchema(args []string, stdout, stderr io.Writer) int {
	o := &schemaOptions{}
	fs := flag.NewFlagSet("kdissect schema", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: kdissect schema [API] [flags]\n\nWithout an API, the table of every API. With an API (name or key), the layout of its\nrequest or response at one version, header first.\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.format, "format", render.Formats()[0].Name, "output format: "+formatList(schemaFormats(), " or ", false))
	fs.IntVar(&o.version, "version", -1, "the API version (default: the latest)")
	fs.BoolVar(&o.request, "request", false, "lay out the request (the default)")
	fs.BoolVar(&o.response, "response", false, "lay out the response")
	fs.StringVar(&o.diff, "diff", "", "list the fields added, removed and changed between versions `A..B`")
	fs.StringVar(&o.schemaDir, "schema-dir", "", "directory of Kafka JSON message definitions that take precedence over the built-in ones")
	fs.IntVar(&o.apiKey, "api-key", -1, "API key for definitions in --schema-dir whose apiKey is not a number (KIP drafts)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	fail := func(status int, format string, a ...any) int {
		fmt.Fprintf(stderr, "kdissect schema: "+format+"\n", a...)
		return status
	}
	f, ok := render.LookupFormat(o.format)
	if !ok || f.Layout == nil {
		return fail(2, "unknown --format %q (%s)", o.format, formatList(schemaFormats(), " or ", false))
	}
	if o.request && o.response {
		return fail(2, "--request or --response, not both")
	}
	if fs.NArg() > 1 {
		return fail(2, "one API at most, got %q", fs.Args())
	}
	c, err := o.codec()
	if err != nil {
		return fail(1, "%v", err)
	}
	if fs.NArg() == 0 {
		if o.version >= 0 || o.diff != "" || o.request || o.response {
			return fail(2, "--version, --diff, --request and --response need an API")
		}
		return status(f.APIs(stdout, c.Schemas.APIs()), stderr)
	}
	a, err := c.Schemas.Lookup(fs.Arg(0))
	if err != nil {
		return fail(1, "%v", err)
	}
	m, dir := a.Request, "request"
	if o.response {
		m, dir = a.Response, "response"
	}
	if m == nil {
		return fail(1, "%s has no %s definition", a.Name, dir)
	}
	if o.diff != "" {
		if o.version >= 0 {
			return fail(2, "--diff names its versions; drop --version")
		}
		va, vb, err := parseDiff(o.diff)
		if err != nil {
			return fail(2, "--diff: %v", err)
		}
		la, err := layout(c, a, m, va)
		if err != nil {
			return fail(1, "%v", err)
		}
		lb, err := layout(c, a, m, vb)
		if err != nil {
			return fail(1, "%v", err)
		}
		return status(f.Diff(stdout, la, lb), stderr)
	}
	v := latest(m.ValidVersions)
	if o.version >= 0 {
		v = int16(min(o.version, int(schema.MaxVersion)))
	}
	l, err := layout(c, a, m, v)
	if err != nil {
		return fail(1, "%v", err)
	}
	return status(f.Layout(l, stdout), stderr)
}

// schemaFormats are the formats that lay out schemas.
func schemaFormats() []render.Format {
	var fs []render.Format
	for _, f := range render.Formats() {
		if f.Layout != nil {
			fs = append(fs, f)
		}
	}
	return fs
}

// layout lays out message m of API a at version v, after the header that version uses.
func layout(c *codec.Codec, a *schema.API, m *schema.Message, v int16) (*render.Layout, error) {
	if !m.ValidVersions.Contains(v) {
		return nil, fmt.Errorf("%s v%d does not exist: valid versions are %s", m.Name, v, m.ValidVersions)
	}
	header, hv := c.Schemas.RequestHeader, c.RequestHeaderVersion(a.Key, v)
	if m.Type == "response" {
		header, hv = c.Schemas.ResponseHeader, c.ResponseHeaderVersion(a.Key, v)
	}
	return render.NewLayout(a.Name, m, v, header, hv), nil
}

// latest is the highest version of a range; for an open range ("3+", a draft) its first.
func latest(r schema.Versions) int16 {
	if r.Hi == schema.MaxVersion {
		return r.Lo
	}
	return r.Hi
}

// parseDiff reads "A..B".
func parseDiff(s string) (int16, int16, error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not A..B", s)
	}
	va, err1 := strconv.ParseInt(a, 10, 16)
	vb, err2 := strconv.ParseInt(b, 10, 16)
	if err1 != nil || err2 != nil || va < 0 || vb < 0 {
		return 0, 0, fmt.Errorf("%q is not A..B with two versions", s)
	}
	return int16(va), int16(vb), nil
}

// status is the exit status after writing the output: 1, with a message, when writing failed.
func status(err error, stderr io.Writer) int {
	if err != nil {
		fmt.Fprintf(stderr, "kdissect schema: writing output: %v\n", err)
		return 1
	}
	return 0
}

// runErrors is "kdissect errors": Kafka's error codes.
func runErrors(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kdissect errors", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "kdissect errors: takes no arguments")
		return 2
	}
	if err := render.ErrorTable(stdout, codec.ErrorCodes()); err != nil {
		fmt.Fprintf(stderr, "kdissect errors: writing output: %v\n", err)
		return 1
	}
	return 0
}
