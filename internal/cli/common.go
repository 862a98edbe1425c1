package cli

import (
	"fmt"
	"io"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
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
	// Trees: a display filter reads the messages' bodies, so they are decoded in full.
	Trees bool
	// Lean leaves the field tree out (--no-fields); ToFile: the output goes to a file the user
	// named (-o), where a binary format may go; Capture names the one capture read, if one.
	Lean    bool
	ToFile  bool
	Capture string
	// MaxMessages is how many messages a page holds (html).
	MaxMessages int
	// KeepFields names the fields the analyses of --stats read (analysis.Set.Keep), for Codec.
	KeepFields []codec.Kept
}

// Codec builds the codec from the built-in definitions and --schema-dir, whose notices (files
// skipped, versions that differ from the built-in ones) go to stderr.
func (c *Common) Codec(stderr io.Writer) (*codec.Codec, error) {
	set, err := schema.Embedded()
	if err != nil {
		return nil, err
	}
	if c.SchemaDir != "" {
		if set, err = set.WithDir(c.SchemaDir, c.APIKey); err != nil {
			return nil, err
		}
		for _, n := range set.Notices() {
			fmt.Fprintf(stderr, "kdissect: %s\n", n.Text)
		}
	} else if c.APIKey >= 0 {
		return nil, FlagError("--api-key goes with --schema-dir")
	}
	// An unknown format is reported by Output; until then it counts as one that shows all.
	f, err := c.LookupFormat()
	if err != nil {
		f = render.Formats()[0]
	}
	cc, err := dissect.NewCodec(set, f, dissect.CodecOptions{Records: c.Records, MaxDecompressed: c.MaxDecompressed, ShowSecrets: c.ShowSecrets, Trees: c.Trees,
		Keep: c.KeepFields})
	if err != nil {
		return nil, FlagError(err.Error())
	}
	return cc, nil
}

// LookupFormat returns the format chosen, as --no-fields makes it.
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
	return f, nil
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
		NoTree: c.Lean, File: c.Capture, MaxMessages: c.MaxMessages,
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
		return nil, err
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
