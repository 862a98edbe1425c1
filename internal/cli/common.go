package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/render"
)

// Common is what the flags every subcommand shares ask for: the definitions and the codec
// (Codec), and the output format and its renderer (LookupFormat, Output). cmd/kdissect
// registers the flags; their names are in the errors.
type Common struct {
	Format    string
	SchemaDir string
	APIKey    int
	Hex       bool
	Explain   bool
	MaxBytes  int
	// MaxDecompressed caps one batch's decompressed size; ShowSecrets keeps passwords visible.
	MaxDecompressed int64
	ShowSecrets     bool
	Records         string
	// Times is -t, how summaries and diagram headings show times.
	Times string
	// Lean leaves the field tree out (--no-fields); ToFile: the output goes to a file the user
	// named (-o), where a binary format may go; Capture names the one capture read, if one.
	Lean    bool
	ToFile  bool
	Capture string
	// MaxMessages is how many messages a page holds (html).
	MaxMessages int
	// Compression is the codec of a format that has a choice of them (parquet; "": its default).
	Compression string
}

// Codec builds the codec from the built-in definitions and --schema-dir, whose notices (files
// skipped, versions that differ from the built-in ones) go to stderr, for a run of the format
// chosen that selects every message.
func (c *Common) Codec(stderr io.Writer) (*codec.Codec, error) {
	cc, _, err := c.CodecPlan(stderr, dissect.SelectAll(), nil, nil)
	return cc, err
}

// CodecPlan is Codec for a run that selects sel, with the run's plan (dissect.NewPlan): what
// the format chosen reads (or needs, when not nil: serve's pages read more), what sel and
// --records ask, and the fields the run's analyses read (analysis.Set.Reads) decide what is
// decoded and kept.
func (c *Common) CodecPlan(stderr io.Writer, sel dissect.Selection, needs *render.Needs, reads []analysis.Read) (*codec.Codec, dissect.Plan, error) {
	set, err := schema.Embedded()
	if err != nil {
		return nil, dissect.Plan{}, err
	}
	if c.SchemaDir != "" {
		if set, err = set.WithDir(c.SchemaDir, c.APIKey); err != nil {
			return nil, dissect.Plan{}, schemaDirError(err)
		}
		for _, n := range set.Notices() {
			fmt.Fprintf(stderr, "kdissect: %s\n", n.Text)
		}
	} else if c.APIKey >= 0 {
		return nil, dissect.Plan{}, FlagError("--api-key goes with --schema-dir")
	}
	// An unknown format is reported by Output; until then it counts as one that shows all.
	f, err := c.LookupFormat()
	if err != nil {
		f = render.Formats()[0]
	}
	if needs != nil {
		f.Needs = *needs
	}
	plan, err := dissect.NewPlan(f, dissect.Asks{Records: c.Records, Select: sel, Keep: reads})
	if re := (*dissect.RecordsError)(nil); errors.As(err, &re) {
		return nil, plan, FlagError(fmt.Sprintf("--records %q: full, headers or none", re.Depth))
	} else if err != nil {
		return nil, plan, err
	}
	return dissect.NewCodec(set, plan, dissect.CodecOptions{MaxDecompressed: c.MaxDecompressed, ShowSecrets: c.ShowSecrets}), plan, nil
}

// LookupFormat returns the format chosen, as --no-fields makes it, and refuses a compression
// (--parquet-compression) it does not have.
func (c *Common) LookupFormat() (render.Format, error) {
	f, ok := render.LookupFormat(c.Format)
	if !ok {
		return f, fmt.Errorf("unknown --format %q (%s)", c.Format, render.ListFormats(render.Formats(), " or ", false))
	}
	if c.Lean {
		lean, ok := f.WithoutTree()
		if !ok {
			var with []render.Format
			for _, f := range render.Formats() {
				if f.Lean != nil {
					with = append(with, f)
				}
			}
			return f, fmt.Errorf("--no-fields goes with --format %s", render.ListFormats(with, " or ", false))
		}
		f = lean
	}
	if c.Compression != "" && !slices.Contains(f.Compressions, c.Compression) {
		return f, compressionError(c.Compression, f)
	}
	return f, nil
}

// compressionError says why --parquet-compression is refused with format f.
func compressionError(name string, f render.Format) error {
	if f.Compressions == nil {
		var with []render.Format
		for _, f := range render.Formats() {
			if f.Compressions != nil {
				with = append(with, f)
			}
		}
		return fmt.Errorf("--parquet-compression goes with --format %s", render.ListFormats(with, " or ", false))
	}
	return fmt.Errorf("--parquet-compression %q: %s", name, strings.Join(f.Compressions, ", "))
}

// Output returns the format chosen and its renderer, writing to w; what it leaves out is said
// on stderr.
func (c *Common) Output(w, stderr io.Writer) (render.Format, render.Renderer, error) {
	f, err := c.LookupFormat()
	if err != nil {
		return f, nil, err
	}
	switch {
	case f.Binary && !c.ToFile:
		return f, nil, fmt.Errorf("--format %s writes a file, not text: give -o FILE%s, or -o DIR/ for a file per capture (-o - for stdout)", f.Name, f.Ext)
	case f.Binary && IsTerminal(w):
		return f, nil, fmt.Errorf("--format %s: not writing a binary file to a terminal", f.Name)
	}
	times, err := render.ParseTimeFormat(c.Times)
	if err != nil {
		return f, nil, fmt.Errorf("-t: %v", err)
	}
	o := render.Options{Color: Colorful(w), Hex: c.Hex, Explain: c.Explain, MaxBytes: c.MaxBytes, Time: times,
		NoTree: c.Lean, File: c.Capture, MaxMessages: c.MaxMessages, Compression: c.Compression,
		Warn: func(s string) { fmt.Fprintf(stderr, "kdissect: %s\n", s) }}
	return f, f.New(w, o), nil
}

// WritesSomething refuses a format that writes nothing (--format none) when the run asks for
// nothing else either (others names what would, "--stats or -w FILE"; "" when the command
// has nothing else): it would read the whole input and say nothing, and kdissect's runs say
// what they found.
func WritesSomething(f render.Format, asked bool, others string) error {
	if !f.Empty || asked {
		return nil
	}
	if others == "" {
		return FlagError(fmt.Sprintf("--format %s writes nothing: choose another format", f.Name))
	}
	return FlagError(fmt.Sprintf("--format %s writes nothing: give %s, or choose another format", f.Name, others))
}

// Compare is "schema --compare DIR": what the definitions in dir change against those Codec
// loads. --api-key goes to dir's drafts unless --schema-dir is given too; of dir's notices,
// only the files skipped go to stderr, since the comparison lists the versions that differ.
func (c *Common) Compare(dir string, stderr io.Writer) (*render.Compared, error) {
	base := *c
	if base.SchemaDir == "" {
		base.APIKey = -1
	}
	cc, err := base.Codec(stderr)
	if err != nil {
		return nil, err
	}
	loaded, err := cc.Schemas.WithDir(dir, c.APIKey)
	if err != nil {
		return nil, schemaDirError(err)
	}
	for _, n := range loaded.Notices()[len(cc.Schemas.Notices()):] {
		if n.Kind == schema.Skipped {
			fmt.Fprintf(stderr, "kdissect: %s\n", n.Text)
		}
	}
	against := "built-in"
	if c.SchemaDir != "" {
		against = "built-in and " + c.SchemaDir
	}
	return &render.Compared{Dir: dir, Against: against, Comparison: schema.Compare(cc.Schemas, loaded)}, nil
}

// schemaDirError words the errors of loading a schema directory that --api-key can mend for
// the command line.
func schemaDirError(err error) error {
	var noKey *schema.NoAPIKeyError
	if errors.As(err, &noKey) {
		return fmt.Errorf("%s: %s has apiKey %s; pass --api-key N to give it one", noKey.Path, noKey.Message, noKey.APIKey)
	}
	var keyRange *schema.APIKeyRangeError
	if errors.As(err, &keyRange) {
		return fmt.Errorf("--api-key %d out of range", keyRange.Key)
	}
	return err
}
