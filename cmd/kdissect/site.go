package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/pcaps"
	"github.com/kdissect/kdissect/render"
)

// writeSite is "kdissect schema --site DIR": the whole reference as static pages.
func (o *schemaOptions) writeSite(cmd *cli.Command, fs *flag.FlagSet, c *codec.Codec, stderr io.Writer) int {
	if fs.NArg() > 0 || o.version >= 0 || o.diff != "" || o.request || o.response {
		return cmd.UsageError(stderr, "--site writes every API and version: it takes no API, --version, --diff, --request or --response")
	}
	x, err := demoExamples(c)
	if err != nil {
		return cmd.Failed(stderr, "schema --site: %v", err)
	}
	n, err := render.WriteSite(o.site, c, x)
	if err != nil {
		return cmd.Failed(stderr, "schema --site: %v", err)
	}
	fmt.Fprintf(stderr, "kdissect: wrote %s to %s (open %s)\n", plural.Count(n, "page"), o.site, filepath.Join(o.site, "index.html"))
	return cli.ExitOK
}

// demoExamples are the schema pages' examples: the messages of the capture built into the
// binary, which every install has (a clone's pcaps/ would give more, but pages that change
// with where the command runs would be a puzzle).
func demoExamples(c *codec.Codec) (*render.Examples, error) {
	return dissect.Examples(c, bytes.NewReader(pcaps.Demo), pcaps.DemoName)
}
