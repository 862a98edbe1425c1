package dissect

import (
	"fmt"
	"slices"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/render"
)

// Plan is every performance switch of a run, in one place: what the decode (NewCodec), the
// reassembly (Pipeline's reassembly.Options) and the pipeline may skip, defer or reuse because
// nothing after them reads it. NewPlan derives it once, from what the output format reads
// (render.Needs) and what the run asks besides (Asks: a depth of records, a filter,
// statistics, analyses); the codec and the pipeline of a run take the same plan. Each switch
// says here why it is safe.
type Plan struct {
	// Records is how deep record batches are decoded: "full" (every record, decompressed),
	// "headers" (batch headers and record counts) or "none" (raw bytes).
	Records string
	// Shallow: nothing reads the field tree (the format shows none, no filter reads bodies),
	// so messages get nodes only for the fields their facts, topic names and pairing read
	// (codec.Codec.Shallow), besides those Keep names, and record batches are only counted
	// (unless BatchHeaders).
	Shallow bool
	// Keep names the fields, beyond those facts read, that analyses read (analysis.FieldReader):
	// a shallow decode keeps them (codec.Codec.Keep), and gives record batches' headers the
	// fields named among theirs (records.BatchHeaderField). The trees of
	// messages with kept fields are left to the analyses rather than released.
	Keep []codec.Kept
	// BatchHeaders: Keep names a field of record batches' headers (records.BatchHeaderField),
	// so shallow decodes give those fields nodes rather than only count records, and records are
	// expanded before the analyses read them (no LazyRecords).
	BatchHeaders bool
	// LazyRecords: the format expands records fields itself as it writes them, and no filter
	// reads them before, so they are left unexpanded until then (codec.Codec.LazyRecords): a
	// big message is never held as a whole tree.
	LazyRecords bool
	// Facts: the decoders compute each message's facts (topics, groups, errors, record
	// counts), which the format shows, or a filter or the statistics read; without them the
	// decode makes no facts at all.
	Facts bool
	// Expand: a filter reads the warnings of records left unexpanded (facts count records
	// without expanding them), so the decoders expand them before the filter decides.
	Expand bool
	// Notes: topic ids get topic-name notes in the field tree, which the format shows, a
	// filter on bodies reads, or analyses read (Keep): the names learnt from the whole file,
	// which a message's own tree does not hold.
	Notes bool
	// LearnNames: something reads topic names (notes or facts), so a first pass over each
	// capture file learns them from the whole file; without it no file is read twice.
	LearnNames bool
	// Lend: nothing reads a frame's bytes or field tree once its facts are taken (the format
	// shows neither, no filter holds requests' trees), so reassembly lends frames rather than
	// giving them (reassembly.Options.ReuseFrames) and decoders release each tree at once.
	Lend bool
	// SpillOver is the frame size above which frames are kept outside the heap, in mapped
	// temporary files (reassembly.Options.SpillOver; 0: never). Only when the output keeps no
	// entry after writing it (lent frames, or formats that write records as they expand
	// them) and never reads one later (render.Needs.Holds), or reads only smaller ones later
	// (render.Needs.HoldsUpTo): the file is unmapped once the entry is written.
	SpillOver int
}

// spillOver is the frame size above which frames are kept outside the heap when the output
// allows it (Plan.SpillOver): a consumer's Fetch responses of megabytes, several arriving at
// once on different connections. (At 8 MiB, the frames of 1 to 8 MiB being assembled at once
// held 10 MB more at peak on a capture of big batches.)
const spillOver = 1 << 20

// Asks is what a run asks of the pipeline besides what its format reads: the choices that
// decide a plan.
type Asks struct {
	// Records is how deep record batches are decoded ("full", "headers" or "none"); "" is the
	// format's default (render.Format.Records), or "full" when a filter reads bodies.
	Records string
	// Select is the run's selection (SelectAll when nothing is chosen): its filter and its
	// statistics read facts, and a filter on bodies reads the whole tree.
	Select Selection
	// Keep names the fields that analyses read beyond facts (Plan.Keep).
	Keep []codec.Kept
}

// RecordsError is NewPlan's refusal of a depth of record decoding it does not know.
type RecordsError struct{ Depth string }

func (e *RecordsError) Error() string {
	return fmt.Sprintf("records depth %q: full, headers or none", e.Depth)
}

// NewPlan derives the plan of a run that writes format f and asks a.
func NewPlan(f render.Format, a Asks) (Plan, error) {
	n := f.Needs
	bodies := a.Select.ReadsBodies() // a filter on bodies reads the whole tree
	filters := a.Select.Filters()
	p := Plan{Records: a.Records, Keep: a.Keep}
	switch {
	case p.Records == "" && bodies:
		p.Records = "full" // the filter may ask about any record
	case p.Records == "":
		p.Records = f.Records
	}
	switch p.Records {
	case "full", "headers", "none":
	default:
		return Plan{}, &RecordsError{Depth: a.Records}
	}
	p.Shallow = !n.Tree && !bodies
	p.BatchHeaders = keepsBatchHeaders(a.Keep)
	p.LazyRecords = n.Expands && !bodies && !p.BatchHeaders
	p.Facts = n.Facts || filters || a.Select.Stats
	p.Expand = filters
	p.Notes = n.Notes || bodies || len(a.Keep) > 0
	p.LearnNames = p.Notes || p.Facts
	// A filter on bodies holds requests, trees and all, until their responses come.
	p.Lend = !n.Tree && !n.Bytes && !bodies
	if (p.Lend || n.Expands) && (!n.Holds || n.HoldsUpTo > 0) {
		p.SpillOver = max(spillOver, n.HoldsUpTo)
	}
	return p, nil
}

// covers reports whether the plan computes what a selection reads, so that a pipeline given
// a plan made for another selection fails rather than filters on what was not computed.
func (p Plan) covers(sel Selection) bool {
	if (sel.Filters() || sel.Stats) && !p.Facts {
		return false
	}
	return !sel.ReadsBodies() || !p.Lend && p.Notes && !p.Shallow
}

// options are the assembler's options for one capture: the plan's, and where Kafka is.
func (p *Pipeline) options() reassembly.Options {
	plan := p.cfg.Plan
	opt := reassembly.Options{IsServerPort: p.cfg.IsServerPort, TLSKeys: p.cfg.Keys, ManualFlush: true,
		ReuseFrames: plan.Lend, SpillOver: plan.SpillOver}
	if opt.IsServerPort == nil {
		opt.IsServerPort = func(uint16) bool { return false }
	}
	if p.cfg.Detect {
		opt.Detect = p.codec.DetectRequest
	}
	return opt
}

// keepsBatchHeaders reports whether keep names a field of record batches' headers.
func keepsBatchHeaders(keep []codec.Kept) bool {
	for _, k := range keep {
		if slices.ContainsFunc(k.Fields, records.BatchHeaderField) {
			return true
		}
	}
	return false
}
