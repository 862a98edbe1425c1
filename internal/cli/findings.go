package cli

import (
	"fmt"
	"io"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// Findings is the doctor's part of a run: --findings on captures and live (the findings after
// the messages, as --stats), the findings panel of the workshop page (--format html: always,
// for it costs the page little), and the doctor command (the findings alone, its format
// none). It is all here; the runs call these. A nil *Findings is a run without them: every
// method does nothing.
type Findings struct {
	d *doctor.Doctor
	// Format, when set, is how they are written whatever the run's format (the doctor
	// command's --format): a name of FindingsFormats.
	Format string
}

// FindingsFormat is a way to write findings: a --format of the doctor command. Write is given
// the doctor, and the title of what it read (the captures' names).
type FindingsFormat struct {
	Name, Help string
	Write      func(w io.Writer, title string, d *doctor.Doctor) error
}

// FindingsFormats are the doctor command's formats, its default first.
func FindingsFormats() []FindingsFormat {
	return []FindingsFormat{
		{"table", "a table, then what each finding means and what to check", func(w io.Writer, _ string, d *doctor.Doctor) error {
			return render.FindingsTable(w, d.Findings())
		}},
		{"json", `JSON lines, one {"kind": "finding", ...} each`, func(w io.Writer, _ string, d *doctor.Doctor) error {
			return render.FindingsJSON(w, d.Findings())
		}},
		{"html", "a self-contained report: the findings, and pictures of latency, lag, groups and throughput (-o report.html)", func(w io.Writer, title string, d *doctor.Doctor) error {
			return render.Report(w, title, d.Findings(), d.Series())
		}},
	}
}

// LookupFindingsFormat returns the findings format named.
func LookupFindingsFormat(name string) (FindingsFormat, bool) {
	for _, f := range FindingsFormats() {
		if f.Name == name {
			return f, true
		}
	}
	return FindingsFormat{}, false
}

// NewFindings returns the doctor of a run with --findings or a findings panel (on), nil
// without. It must be made before the codec, which keeps the fields it reads (Reads).
func NewFindings(on bool) *Findings {
	if !on {
		return nil
	}
	return &Findings{d: doctor.New()}
}

// Needs adds to what a format needs (n) what the doctor reads beyond the fields it names
// (Reads): the facts, errors among them. Not the tree: the codec keeps the fields it names,
// and their messages' trees until the doctor has read them (codec.Codec.Keeps).
func (fd *Findings) Needs(n render.Needs) render.Needs {
	if fd != nil {
		n.Facts = true
	}
	return n
}

// Reads names the fields the doctor reads, which the codec keeps.
func (fd *Findings) Reads() []analysis.Read {
	if fd == nil {
		return nil
	}
	return fd.d.Reads()
}

// Feed makes the pipeline of cfg tell the doctor all it shows: every message (Config.OnShow)
// and every notice (Config.OnNotice), after whoever the run set there before.
func (fd *Findings) Feed(cfg *dissect.Config) {
	if fd == nil {
		return
	}
	d := fd.d
	show, notice := cfg.OnShow, cfg.OnNotice
	cfg.OnShow = func(e *model.Entry) {
		if show != nil {
			show(e)
		}
		d.Add(e)
	}
	cfg.OnNotice = func(n *model.Notice) {
		if notice != nil {
			notice(n)
		}
		d.Notice(n)
	}
}

// File tells the doctor that, in a run of several captures, the one named begins: the
// evidence names the file of each frame.
func (fd *Findings) File(name string) {
	if fd != nil {
		fd.d.File(name)
	}
}

// OnPage gives the findings to an output that shows them on its page (the workshop page),
// before it is closed; it reports whether it did.
func (fd *Findings) OnPage(out render.Renderer) bool {
	p, ok := out.(render.FindingsPage)
	if ok && fd != nil {
		p.Findings(fd.d.Findings())
	}
	return ok
}

// Write writes the findings of what is named title after the messages (and statistics) of
// format f: as Format says, or JSON lines after JSON lines, a table otherwise, after a blank
// line when the messages are shown.
func (fd *Findings) Write(f render.Format, w io.Writer, title string) error {
	if fd == nil {
		return nil
	}
	name := fd.Format
	switch {
	case name != "":
	case f.Name == "json":
		name = "json"
	default:
		name = "table"
		if !f.Silent {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
	}
	ff, ok := LookupFindingsFormat(name)
	if !ok {
		return fmt.Errorf("unknown findings format %q", name)
	}
	return ff.Write(w, title, fd.d)
}
