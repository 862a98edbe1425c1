package render

import (
	"io"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/model"
)

// Format is one output format: how to make its renderer, and what it needs of the stages
// before it, which compute nothing more. A new format is a file of its own and a row of
// Formats.
type Format struct {
	Name string
	// Hint follows the name where the formats are listed for the user ("with --stats").
	Hint string
	// New makes the format's renderer.
	New   func(w io.Writer, o Options) Renderer
	Needs Needs
	// Records is how deep record batches are decoded unless the user says: "full" (every
	// record, decompressed) or "headers" (batch headers and record counts).
	Records string
	// Silent: nothing is written while a capture is read (statistics only), so a progress line
	// on the same terminal cuts no line, and nothing needs parting from the tables after it.
	Silent bool
	// Empty: the format writes nothing at all; a run is worth it only for what else it asks
	// (the statistics, the packets written with -w).
	Empty bool
	// Batch: the output is written only when the renderer is closed, so a live capture, which
	// shows each message as it completes, cannot use it.
	Batch bool
	// Binary: the output is a file format, not text: it goes to a file named with -o, never to
	// a terminal.
	Binary bool
	// Ext ends the name of the file written for each capture into a directory (-o DIR).
	Ext string
	// Compressions names the codecs the format's output may be compressed with, the default
	// first (Options.Compression; nil: the format has no such choice).
	Compressions []string
	// HeapLimit is the soft limit of the heap of a run writing field trees in this format,
	// when it holds less than most (0: that of cli.TuneGC).
	HeapLimit int64
	// Lean, when set, is what the format reads, and how deep it decodes record batches, when
	// the user leaves the field tree out (--no-fields, see WithoutTree).
	Lean *Lean
	// APIs, Layout, Diff and Compare write the schema command's outputs: the table of APIs,
	// one message's layout, the fields changed between two versions, and what a directory of
	// definitions changes (nil: not a format of the schema command).
	APIs    func(w io.Writer, apis []*schema.API) error
	Layout  func(l *Layout, w io.Writer) error
	Diff    func(w io.Writer, a, b *Layout) error
	Compare func(w io.Writer, c *Compared) error
	// Page, when set, writes the schema command's layout instead of Layout: a page of every
	// version of the message (ls, oldest first) with version show first in view, and its
	// example from x (nil: none).
	Page func(w io.Writer, ls []*Layout, show int16, x *Examples) error
	// Stats writes the tables of --stats after the messages (nil: as text, WriteTables, after
	// a blank line unless the format is Silent).
	Stats func(w io.Writer, ts []model.Table) error
}

// Needs says what a format reads of each message. It declares facts about the format only:
// what the stages before it may then skip (a shallow decode, lent frames, records expanded
// late, frames in mapped files) is decided once, from these and the run's other choices, in
// dissect.Plan.
type Needs struct {
	// Tree: the field tree; without it, messages are decoded only as deep as their facts need.
	Tree bool
	// Bytes: each message's bytes (hex dumps).
	Bytes bool
	// Notes: topic-name notes on the topic ids of the tree.
	Notes bool
	// Facts: the message facts (topics, groups, errors, record counts); filters and statistics
	// ask for them too.
	Facts bool
	// Expands: the renderer expands records fields itself as it writes them
	// (codec.Message.ExpandRecords), so they may be left unexpanded until then
	// (codec.Codec.LazyRecords) and a big message is never held as a whole tree.
	Expands bool
	// Holds: the renderer still reads an entry after Write has returned (Parquet builds its
	// field trees on goroutines of its own), so the entry's frame must stay where it is until
	// then: it is never put in a mapped file that the pipeline unmaps once Write returns.
	Holds bool
	// HoldsUpTo, when positive, narrows Holds to the messages of at most this many bytes
	// (codec.Message.Size): the renderer is done with a bigger one once Write returns, so its
	// frame may be kept in a mapped file.
	HoldsUpTo int
}

// Lean is what a format reads without the field tree.
type Lean struct {
	Needs   Needs
	Records string
}

// WithoutTree returns the format as it is when the user leaves the field tree out, or false
// when the format has no use without it.
func (f Format) WithoutTree() (Format, bool) {
	if f.Lean == nil {
		return f, false
	}
	f.Needs, f.Records, f.Lean = f.Lean.Needs, f.Lean.Records, nil
	return f, true
}

// Options are the user's choices that formats read.
type Options struct {
	// Color, Hex, MaxBytes and Explain are DiagramOptions'.
	Color, Hex, Explain bool
	MaxBytes            int
	// Time is how summaries and diagram headings show times (-t).
	Time TimeFormat
	// MaxMessages is how many messages a page holds (0: no limit; kdissect's flag defaults to
	// DefaultMaxMessages); Warn tells the user what a format left out (nil: nobody is told but the page).
	MaxMessages int
	Warn        func(string)
	// NoTree: the user left the field tree out (Format.Lean).
	NoTree bool
	// File is the capture file read, when there is one: the Parquet rows name it (JSON lines
	// name files only when there are several, see FileStarter).
	File string
	// Compression is the codec of a format with Compressions ("": its default).
	Compression string
}

// Formats is the table of output formats, the default first.
func Formats() []Format {
	return []Format{
		{Name: "diagram", New: newDiagram, Ext: ".txt", Needs: Needs{Tree: true, Bytes: true, Notes: true, Expands: true}, Records: "full",
			APIs: APITable, Layout: (*Layout).WriteText, Diff: DiffTable, Compare: CompareText},
		{Name: "summary", New: newSummary, Ext: ".txt", Needs: Needs{Facts: true}, Records: "headers"},
		{Name: "json", New: newJSON, Ext: ".jsonl", Needs: Needs{Tree: true, Bytes: true, Notes: true, Expands: true}, Records: "full",
			APIs: APIJSON, Layout: (*Layout).WriteJSON, Diff: DiffJSON, Compare: CompareJSON, Stats: WriteTablesJSON},
		{Name: "html", Hint: "the workshop page", New: newHTML, Ext: ".html", Needs: Needs{Tree: true, Bytes: true, Notes: true}, Records: "full",
			Page: WriteLayoutPage},
		{Name: "parquet", Hint: "with -o", New: newParquet, Needs: Needs{Tree: true, Facts: true, Notes: true, Expands: true, Holds: true, HoldsUpTo: ParquetHoldsUpTo},
			Records: "full", Batch: true, Binary: true, Silent: true, Ext: ".parquet", Compressions: ParquetCompressions(),
			HeapLimit: ParquetHeapLimit, Lean: &Lean{Needs: Needs{Facts: true}, Records: "headers"}},
		{Name: "none", Hint: "with --stats", New: newDiscard, Needs: Needs{Facts: true}, Records: "headers", Silent: true, Empty: true},
	}
}

// LookupFormat finds a format by name.
func LookupFormat(name string) (Format, bool) {
	for _, f := range Formats() {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// ListFormats names formats for the user: "a, b or c", or is what comes before the last; with
// hints, each format's hint follows its name.
func ListFormats(fs []Format, or string, hints bool) string {
	var s string
	for i, f := range fs {
		switch {
		case i == 0:
		case i == len(fs)-1:
			s += or
		default:
			s += ", "
		}
		s += f.Name
		if hints && f.Hint != "" {
			s += " (" + f.Hint + ")"
		}
	}
	return s
}

func newDiagram(w io.Writer, o Options) Renderer {
	return NewDiagram(w, DiagramOptions{Color: o.Color, Hex: o.Hex, MaxBytes: o.MaxBytes, Time: o.Time, Explain: o.Explain})
}

func newSummary(w io.Writer, o Options) Renderer { return NewSummary(w, o.Time) }

func newJSON(w io.Writer, _ Options) Renderer { return NewJSON(w) }

func newDiscard(io.Writer, Options) Renderer { return Discard{} }

// SchemaFormats are the formats that lay out schemas (as text, or as a page).
func SchemaFormats() []Format {
	return formatsThat(func(f Format) bool { return f.Layout != nil || f.Page != nil })
}

// DiffFormats are the formats that list the changes between versions.
func DiffFormats() []Format { return formatsThat(func(f Format) bool { return f.Diff != nil }) }

// formatsThat lists the formats for which has holds, in the table's order.
func formatsThat(has func(Format) bool) []Format {
	var fs []Format
	for _, f := range Formats() {
		if has(f) {
			fs = append(fs, f)
		}
	}
	return fs
}

// RecordsDefaults says which formats decode records how deep unless the user says: "default
// full for diagram and json, headers for summary and none".
func RecordsDefaults(fs []Format) string {
	var depths []string
	byDepth := map[string][]Format{}
	for _, f := range fs {
		if byDepth[f.Records] == nil {
			depths = append(depths, f.Records)
		}
		byDepth[f.Records] = append(byDepth[f.Records], f)
	}
	s := "default"
	for i, d := range depths {
		if i > 0 {
			s += ","
		}
		s += " " + d + " for " + ListFormats(byDepth[d], " and ", false)
	}
	return s
}

// WriteStats writes the tables of --stats after the messages, as the format writes them: JSON
// lines after JSON lines, text tables otherwise, as wide as width allows (see WriteTables).
func (f Format) WriteStats(w io.Writer, ts []model.Table, width int) error {
	if f.Stats != nil {
		return f.Stats(w, ts)
	}
	return WriteTables(w, ts, width)
}

// PageFormat is the format of the workshop page, the one kdissect serve serves: the format
// whose schema output is a page too.
func PageFormat() Format { return formatsThat(func(f Format) bool { return f.Page != nil })[0] }
