package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/internal/suggest"
	"github.com/kdissect/kdissect/render"
)

type schemaOptions struct {
	cli.Common
	version           int
	request, response bool
	diff              string
	compare           string
	site              string
}

func schemaFlags() (*flag.FlagSet, *schemaOptions) {
	o := &schemaOptions{}
	fs := flag.NewFlagSet("kdissect schema", flag.ContinueOnError)
	fs.StringVar(&o.Format, "format", render.Formats()[0].Name, "output format: "+render.ListFormats(render.SchemaFormats(), " or ", false))
	fs.IntVar(&o.version, "version", -1, "the API version (default: the latest)")
	fs.BoolVar(&o.request, "request", false, "lay out the request (the default)")
	fs.BoolVar(&o.response, "response", false, "lay out the response")
	fs.StringVar(&o.diff, "diff", "", "list the fields added, removed and changed between versions `A..B`")
	fs.StringVar(&o.compare, "compare", "", "list, API by API, what the definitions in `DIR` change against the built-in ones (and --schema-dir's)")
	fs.StringVar(&o.SchemaDir, "schema-dir", "", "directory of Kafka JSON message definitions (a Kafka release's common/message folder, a KIP draft) merged over the built-in ones, version by version")
	fs.IntVar(&o.APIKey, "api-key", -1, "API key for definitions in --schema-dir whose apiKey is not a number (KIP drafts)")
	fs.StringVar(&o.site, "site", "", "write a static HTML reference of every API, direction and version (and the error codes) into `DIR`")
	cli.HideDefault(fs, "version", "api-key")
	return fs, o
}

// runSchema is "kdissect schema [API] [flags]": the table of APIs, or one message's layout.
func runSchema(cmd *cli.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, o := schemaFlags()
	if status, ok := cmd.Parse(fs, args, stdout, stderr); !ok {
		return status
	}
	// Every mistake here is in the command line, an API or version that does not exist included.
	fail := func(format string, a ...any) int { return cmd.UsageError(stderr, format, a...) }
	f, ok := render.LookupFormat(o.Format)
	if !ok || (f.Layout == nil && f.Page == nil) {
		return fail("unknown --format %q (%s)", o.Format, render.ListFormats(render.SchemaFormats(), " or ", false))
	}
	if o.request && o.response {
		return fail("--request or --response, not both")
	}
	if fs.NArg() > 1 {
		return fail("one API at most, got %q", fs.Args())
	}
	if o.compare != "" {
		if fs.NArg() > 0 || o.version >= 0 || o.diff != "" || o.request || o.response {
			return fail("--compare compares whole directories: no API, --version, --diff, --request or --response")
		}
		cmp, err := o.Compare(o.compare, stderr)
		if err != nil {
			return cmd.Report(stderr, err)
		}
		return cmd.Wrote(stderr, f.Compare(stdout, cmp))
	}
	c, err := o.Codec(stderr)
	if err != nil {
		return cmd.Report(stderr, err)
	}
	if o.site != "" {
		return o.writeSite(cmd, fs, c, stderr)
	}
	if fs.NArg() == 0 {
		if f.APIs == nil {
			return fail("--format %s draws one API (kdissect schema API --format %s), or all of them with --site DIR", f.Name, f.Name)
		}
		if o.version >= 0 || o.diff != "" || o.request || o.response {
			return fail("--version, --diff, --request and --response need an API")
		}
		return cmd.Wrote(stderr, f.APIs(stdout, c.Schemas.APIs()))
	}
	a, err := c.Schemas.Lookup(fs.Arg(0))
	if err != nil {
		return fail("%v", err)
	}
	m, dir := a.Request, "request"
	if o.response {
		m, dir = a.Response, "response"
	}
	if m == nil {
		return fail("%s has no %s definition", a.Name, dir)
	}
	if o.diff != "" {
		return o.writeDiff(cmd, f, c, a, m, stdout, stderr)
	}
	v := m.ValidVersions.Latest()
	if o.version >= 0 {
		v = int16(min(o.version, int(schema.MaxVersion)))
	}
	l, err := render.LayoutAt(c, a, m, v)
	if err != nil {
		return fail("%v", err)
	}
	if f.Page != nil {
		return writeSchemaPage(cmd, f, c, a, m, l.Version, stdout, stderr)
	}
	return cmd.Wrote(stderr, f.Layout(l, stdout))
}

// writeSchemaPage writes the page of message m of API a, every version, show open, with its
// example from the demo capture.
func writeSchemaPage(cmd *cli.Command, f render.Format, c *codec.Codec, a *schema.API, m *schema.Message, show int16, stdout, stderr io.Writer) int {
	ls, err := render.Layouts(c, a, m)
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	x, err := demoExamples(c)
	if err != nil {
		return cmd.Report(stderr, err)
	}
	return cmd.Wrote(stderr, f.Page(stdout, ls, show, x))
}

// writeDiff is "kdissect schema API --diff A..B": the fields changed between two versions.
func (o *schemaOptions) writeDiff(cmd *cli.Command, f render.Format, c *codec.Codec, a *schema.API, m *schema.Message, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int { return cmd.UsageError(stderr, format, a...) }
	if f.Diff == nil {
		return fail("--diff has no --format %s: use %s", f.Name, render.ListFormats(render.DiffFormats(), " or ", false))
	}
	if o.version >= 0 {
		return fail("--diff names its versions; drop --version")
	}
	va, vb, err := parseDiff(o.diff)
	if err != nil {
		return fail("--diff: %v", err)
	}
	la, err := render.LayoutAt(c, a, m, va)
	if err != nil {
		return fail("%v", err)
	}
	lb, err := render.LayoutAt(c, a, m, vb)
	if err != nil {
		return fail("%v", err)
	}
	return cmd.Wrote(stderr, f.Diff(stdout, la, lb))
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

// runErrors is "kdissect errors [CODE|NAME]": Kafka's error codes, or one of them.
func runErrors(cmd *cli.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := cmd.Flags()
	if status, ok := cmd.Parse(fs, args, stdout, stderr); !ok {
		return status
	}
	codes := codec.ErrorCodes()
	if fs.NArg() > 0 {
		codes = codes[:0]
		for _, a := range fs.Args() {
			e, ok := codec.LookupError(a)
			if !ok {
				return cmd.UsageError(stderr, "no Kafka error has the code or name %q%s", a, nearestError(a))
			}
			codes = append(codes, e)
		}
	}
	if err := render.ErrorTable(stdout, codes); err != nil {
		return cmd.Failed(stderr, "errors: writing output: %v", err)
	}
	return cli.ExitOK
}

// nearestError is ": did you mean NAME?" for the error name nearest to word, or "".
func nearestError(word string) string {
	codes := codec.ErrorCodes()
	names := make([]string, len(codes))
	for i, e := range codes {
		names[i] = e.Name
	}
	if near := suggest.Nearest(word, names); near != "" {
		return ": did you mean " + near + "?"
	}
	return ""
}
