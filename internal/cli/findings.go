package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// The doctor's part of a capture run: --findings (after the messages, as --stats), the
// findings panel of the workshop page (--format html: always, for it costs the page little),
// and the doctor command (the findings alone). It is all here; Run calls these.

// findingsPlan is what the run's plan needs for the doctor, beyond the format's: the facts
// (errors), and the fields the doctor reads (reads) in the tree, which must then be kept until
// the message is shown (a plan that lends frames releases trees once the facts are taken).
// needs is nil without a doctor: without --findings, and for a page, with files of periods
// (--rotate), whose findings would be of every period before.
func (o *Capture) findingsPlan() (needs *render.Needs, reads []analysis.Read) {
	f, err := o.LookupFormat()
	if err != nil {
		return nil, nil // Output reports it
	}
	if !o.Findings && (f.Name != render.PageFormat().Name || o.Always != nil) {
		return nil, nil
	}
	o.doctor = doctor.New()
	n := f.Needs
	n.Facts, n.Tree = true, true
	return &n, o.doctor.Reads()
}

// feedDoctor makes the pipeline of cfg tell the doctor what it shows: every message
// (Config.OnShow, after what the runner set), and with the doctor command, whose output is
// the findings alone, the notices too (the doctor is then the output).
func (o *Capture) feedDoctor(cfg *dissect.Config) {
	d := o.doctor
	if d == nil {
		return
	}
	if o.DoctorOnly {
		cfg.Out = doctorOutput{d}
		return
	}
	then := cfg.OnShow
	cfg.OnShow = func(e *model.Entry) {
		if then != nil {
			then(e)
		}
		d.Add(e)
	}
}

// findingsOnPage gives the findings to an output that shows them on its page (the workshop
// page), before it is closed; it reports whether it did.
func (o *Capture) findingsOnPage(out render.Renderer) bool {
	p, ok := out.(render.FindingsPage)
	if ok && o.doctor != nil {
		p.Findings(o.doctor.Findings())
	}
	return ok
}

// writeFindings writes the findings of the captures files after the messages (and
// statistics): JSON lines after JSON lines (or with FindingsAs "json"), the report with
// FindingsAs "html", a table otherwise.
func (o *Capture) writeFindings(f render.Format, w io.Writer, files []string) error {
	if o.doctor == nil {
		return nil
	}
	fs := o.doctor.Findings()
	switch {
	case o.FindingsAs == "html":
		return render.Report(w, strings.Join(files, ", "), fs, o.doctor.Series())
	case o.FindingsAs == "json" || f.Name == "json":
		return render.FindingsJSON(w, fs)
	}
	if !f.Silent {
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	return render.FindingsTable(w, fs)
}

// doctorOutput is the output of the doctor command: it tells the doctor every message and
// notice, and writes nothing.
type doctorOutput struct{ d *doctor.Doctor }

func (o doctorOutput) Message(e *model.Entry) error {
	o.d.Add(e)
	return nil
}

func (o doctorOutput) Notice(n *model.Notice) error {
	o.d.Notice(n)
	return nil
}

func (doctorOutput) Close() error { return nil }
func (doctorOutput) Flush() error { return nil }
