package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/render"
)

// Capture is the capture command's run (kdissect CAPTURE...): its flags' values, as
// cmd/kdissect parses them.
type Capture struct {
	Common
	Select dissect.Selection
	// Ports are -p's specs; Detect also looks for Kafka on the ports they do not name.
	Ports  []string
	Detect bool
	// KeyLog is --tls-keylog; NoProgress turns off the progress line a terminal gets on stderr.
	KeyLog     string
	NoProgress bool
	// Workers is how many assemblers share the reading of a capture file.
	Workers int
	// Count and Duration stop the run after so many messages, or so long (a pipe).
	Count    int
	Duration time.Duration
	// Write is -w: the packets of the messages shown are written to it.
	Write string
	// Profiles names files for Go profiles of the run.
	Profiles Profiles
	// Findings is --findings: after the messages, what the doctor finds (package doctor);
	// FindingsFormat writes them as one of FindingsFormats (the doctor command's --format).
	// doctor is the run's (nil without), made by configure.
	Findings       bool
	FindingsFormat string
	doctor         *Findings
	// Always, when set, writes the output of a capture read from a pipe to files of periods in
	// a directory (-o DIR/ with --rotate, --rotate-size), as live's; on is it under way.
	Always *AlwaysOn
	on     *alwaysOn
	// OutPath is -o; dest, when set, is the file the output goes to instead of stdout.
	OutPath string
	dest    io.Writer
	// named: this run is one capture of -o DIR/, whose notes are mixed with the others': its
	// notes on stderr name the capture (prefix).
	named bool
	// opened counts the captures Run opened as captures: with none, -o's file is removed.
	opened int
	// stats are the run's analyses (--stats; nil without), made by configure.
	stats analysis.Set
}

// Where the messages go: -o FILE, -o DIR (one file per capture, written in parallel), or
// stdout. A capture from a pipe (tcpdump -U -w - | kdissect -) is shown as it arrives
// (dissect.Pipeline.Read); Ctrl-C and --duration stop it as they stop a live capture, and the
// run ends with live's counts.

// Run runs the capture command on files; its result is the exit status.
func (o *Capture) Run(cmd *Command, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if o.OutPath != "" {
		return o.runTo(cmd, files, stdin, stdout, stderr)
	}
	f, cfg, status := o.configure(cmd, stdout, stderr)
	if status != ExitOK {
		return status
	}
	_, parallel := cfg.Out.(render.Parallel)
	defer TuneGC(cfg.Codec.Shallow, len(cfg.Codec.Keep) > 0, parallel && cfg.Workers > 1, f.HeapLimit)()
	warnings := NewWarnings(stderr)
	cfg.Warn = warnings.Warn
	var progress func(string) (func(read, size int64, packets int), func())
	if !o.NoProgress && ProgressWanted(o.messagesTo(stdout), stderr, f.Silent) {
		progress = warnings.Progress
	}
	if err := o.Select.Check(cfg.Codec); err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	var err error
	if cfg.Keys, err = KeyLog(o.KeyLog, false, stderr); err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	var save *dissect.Save
	if o.Write != "" {
		if save, err = dissect.CreateSave(o.Write, files); errors.Is(err, dissect.ErrSavingInput) {
			return cmd.UsageError(stderr, "-w %s: %v", o.Write, err)
		} else if err != nil {
			return cmd.Failed(stderr, "%v", err)
		}
	}
	o.on = o.Always.begin()
	cfg.Out = o.on.start("stdin", cfg.Out, stderr)
	o.on.pipe(&cfg)
	run := newRunner(&cfg, stdin, save, progress)
	o.doctor.Feed(&cfg)
	run.begins = o.doctor.File
	if run.p, err = dissect.New(cfg); err != nil {
		o.on.abandon(cfg.Out)
		return cmd.UsageError(stderr, "%v", err)
	}
	stopProfiles, err := StartProfiles(o.Profiles, stderr)
	if err != nil {
		o.on.abandon(cfg.Out)
		return cmd.Failed(stderr, "%v", err)
	}
	defer stopProfiles()
	status, err = o.read(cmd, f, run, files, stdin, stderr)
	if err != nil {
		return cmd.Failed(stderr, "writing output: %v", err)
	}
	return o.finish(cmd, f, run, files, status, stdout, stderr)
}

// pagesFindings reports whether the run's output is the workshop page, which shows the
// findings in a panel: not with files of periods (--rotate), whose findings would be of every
// period before.
func (o *Capture) pagesFindings() bool {
	f, err := o.LookupFormat()
	return err == nil && f.Name == render.PageFormat().Name && o.Always == nil
}

// configure makes the pipeline's configuration of the run's flags, but for what stderr, -w
// and the run's captures add; a status that is not ExitOK says why it could not.
func (o *Capture) configure(cmd *Command, stdout, stderr io.Writer) (render.Format, dissect.Config, int) {
	ports, err := capture.ParsePorts(o.Ports)
	if err != nil {
		return render.Format{}, dissect.Config{}, cmd.UsageError(stderr, "%v", err)
	}
	// The analyses and the doctor are made before the codec, which keeps the fields they read.
	o.stats = Analyses(o.Select.Stats)
	o.doctor = NewFindings(o.Findings || o.pagesFindings())
	if o.doctor != nil {
		o.doctor.Format = o.FindingsFormat
	}
	var needs *render.Needs
	if f, err := o.LookupFormat(); err == nil && o.doctor != nil { // an unknown format: Output reports it
		n := o.doctor.Needs(f.Needs)
		needs = &n
	}
	c, plan, err := o.CodecPlan(stderr, o.Select, needs, append(o.stats.Reads(), o.doctor.Reads()...))
	if err != nil {
		return render.Format{}, dissect.Config{}, cmd.Report(stderr, err)
	}
	f, out, err := o.output(stdout, stderr)
	if err == nil {
		err = WritesSomething(f, o.Select.Stats || o.Findings || o.Write != "", "--stats (the tables) or -w FILE (the packets)")
	}
	if err != nil {
		return f, dissect.Config{}, cmd.UsageError(stderr, "%v", err)
	}
	cfg := dissect.Config{Codec: c, Out: out, Plan: plan, Select: o.Select, IsServerPort: ports.Has,
		Detect: len(o.Ports) == 0 || o.Detect, Workers: o.Workers, Limit: o.Count, Batch: f.Batch && (o.Always == nil || o.Always.New == nil)}
	if o.stats != nil {
		cfg.Stats = o.stats // not a nil Set in an interface
	}
	return f, cfg, ExitOK
}

// output is the run's format and the renderer of its messages; with files of periods of
// messages, the renderer is a placeholder that Run replaces with theirs (alwaysOn.start), each
// file's own.
func (o *Capture) output(stdout, stderr io.Writer) (render.Format, render.Renderer, error) {
	if o.Always != nil && o.Always.New != nil {
		f, err := o.LookupFormat()
		return f, render.Discard{}, err
	}
	return o.Output(o.messagesTo(stdout), stderr)
}

// read reads the captures. A damaged file (cut short, a record that cannot be read) is shown
// up to where it can be read, the error names the file and the packet, and the exit status is
// 1, wherever the damage is; the other files are read all the same. err is one writing the
// output or the packets shown, which stopped the run.
func (o *Capture) read(cmd *Command, f render.Format, run *runner, files []string, stdin io.Reader, stderr io.Writer) (status int, err error) {
	done := o.follow(run.p, files, stdin, stderr)
	defer done()
	return status, run.files(files, func(err error) {
		if errors.Is(err, dissect.ErrNeedsFile) {
			status = cmd.UsageError(stderr, "--format %s: %s", f.Name, needsFile(err))
			return
		}
		status = cmd.Failed(stderr, "%v", err)
	})
}

// needsFile words dissect.ErrNeedsFile for the command line, after the capture's name that
// err begins with.
func needsFile(err error) string {
	const advice = "a capture from a pipe is dissected as its packets arrive, and this output format is written only at the end: save the capture to a file (tcpdump -w FILE) and dissect the file"
	return strings.TrimSuffix(err.Error(), dissect.ErrNeedsFile.Error()) + advice
}

// finish closes the output and the packets written, and says what the run found; its result
// is the exit status.
func (o *Capture) finish(cmd *Command, f render.Format, run *runner, files []string, status int, stdout, stderr io.Writer) int {
	p := run.p
	stats := o.stats
	paged := stats != nil && TablesOnPage(run.out, stats)
	foundOnPage := o.doctor.OnPage(run.out)
	p.Close()
	o.on.close()
	followed(p, stderr)
	if run.save != nil {
		if err := run.save.Close(); err != nil {
			status = cmd.Failed(stderr, "-w %s: %v", o.Write, err)
		} else {
			fmt.Fprintf(stderr, "kdissect: %s written to %s\n", plural.Count(run.save.Written(), "packet"), o.Write)
		}
	}
	o.opened = p.Seen().Files
	noticesLeftOut(p, o.prefix(files), stderr)
	idleFlushed(p, o.prefix(files), stderr)
	shown, _ := p.Shown()
	if why := p.Seen().Explain(shown, o.Ports, o.Select.Filters()); why != "" && status == ExitOK {
		fmt.Fprintf(stderr, "kdissect: %s%s\n", o.prefix(files), why)
	}
	if stats != nil && !paged && p.Err() == nil && shown > 0 {
		w := o.statsTo(f, stdout)
		if !f.Silent && f.Stats == nil {
			fmt.Fprintln(w)
		}
		if err := f.WriteStats(w, stats.Tables(), TableWidth(w)); err != nil {
			return cmd.Failed(stderr, "writing output: %v", err)
		}
	}
	// No findings of captures that could not be read; a page shows them in its panel.
	if !foundOnPage && p.Err() == nil && p.Seen().Files > 0 {
		if err := o.doctor.Write(f, o.statsTo(f, stdout), strings.Join(files, ", ")); err != nil {
			return cmd.Failed(stderr, "writing output: %v", err)
		}
	}
	if err := p.Err(); err != nil {
		return cmd.Failed(stderr, "writing output: %v", err)
	}
	return status
}

// prefix begins the notes said on stderr about the capture: its name when it is one capture
// of -o DIR/, whose notes are mixed with the others'.
func (o *Capture) prefix(files []string) string {
	if o.named {
		return files[0] + ": "
	}
	return ""
}

// messagesTo is where the messages go: the -o file, or stdout.
func (o *Capture) messagesTo(stdout io.Writer) io.Writer {
	if o.dest != nil {
		return o.dest
	}
	return stdout
}

// statsTo is where the statistics go: after the messages, unless those are a binary file.
func (o *Capture) statsTo(f render.Format, stdout io.Writer) io.Writer {
	if f.Binary {
		return stdout
	}
	return o.messagesTo(stdout)
}

// runTo runs the capture command with -o: into one file, into one file per capture in a
// directory, or to stdout (-o -).
func (o *Capture) runTo(cmd *Command, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := o.LookupFormat()
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	if o.OutPath == "-" {
		oc := *o
		oc.OutPath, oc.ToFile = "", true
		if len(files) == 1 {
			oc.Capture = files[0]
		}
		return oc.Run(cmd, files, stdin, stdout, stderr)
	}
	if in, ok := capture.Overwrites(o.OutPath, files); ok {
		return cmd.UsageError(stderr, "-o %s is the capture %s: it would be overwritten", o.OutPath, in)
	}
	if capture.IsCaptureFile(o.OutPath) {
		return cmd.UsageError(stderr, "-o %s is a capture: it would be overwritten (-w writes packets; remove the file first to replace it)", o.OutPath)
	}
	if st, err := os.Stat(o.OutPath); err == nil && st.IsDir() || strings.HasSuffix(o.OutPath, "/") {
		return o.runEach(cmd, f, files, stdin, stdout, stderr)
	}
	return o.runFile(cmd, o.OutPath, files, stdin, stdout, stderr)
}

// runFile writes what files hold into the file named path.
func (o *Capture) runFile(cmd *Command, path string, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out, err := os.Create(path)
	if err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	oc := *o
	oc.OutPath, oc.dest, oc.ToFile = "", out, true
	if len(files) == 1 {
		oc.Capture = files[0]
	}
	status := oc.Run(cmd, files, stdin, stdout, stderr)
	if err := out.Close(); err != nil && status == ExitOK {
		status = cmd.Failed(stderr, "writing %s: %v", path, err)
	}
	if status == ExitUsage || status != ExitOK && oc.opened == 0 {
		os.Remove(path) // nothing was read (not a capture, or not at all): leave nothing behind
	}
	return status
}

// runEach writes each capture into a file of its own in the directory -o names, reading
// as many captures at once as there are cores (Each).
func (o *Capture) runEach(cmd *Command, f render.Format, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if f.Ext == "" {
		return cmd.UsageError(stderr, "--format %s writes no file", f.Name)
	}
	outs, err := capture.Outputs(o.OutPath, f.Ext, files)
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	if err := os.MkdirAll(o.OutPath, 0o777); err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	parallel := min(len(files), runtime.GOMAXPROCS(0))
	return Each(files, parallel, stdout, stderr, func(i int, stdout, stderr io.Writer) int {
		oc := *o
		oc.NoProgress = true
		oc.named = true
		oc.Workers = max(1, o.Workers/parallel)
		return oc.runFile(cmd, outs[i], files[i:i+1], stdin, stdout, stderr)
	})
}

// follow arranges the stops of a run that reads a pipe: Ctrl-C, SIGTERM and --duration (which
// stops files too, though they rarely take that long), and says so. done undoes it.
func (o *Capture) follow(p *dissect.Pipeline, files []string, stdin io.Reader, stderr io.Writer) (done func()) {
	var undo []func()
	if streams(files, stdin) {
		interrupts := CatchInterrupts()
		interrupts.Then(p.Stop)
		undo = append(undo, interrupts.Release)
		fmt.Fprintf(stderr, "kdissect: reading a capture from a pipe as it arrives; stops after %s\n", StopsAfter(o.Count, o.Duration, "its end or Ctrl-C"))
	}
	if o.Duration > 0 {
		t := time.AfterFunc(o.Duration, p.Stop)
		undo = append(undo, func() { t.Stop() })
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}

// followed writes the counts a run that read pipes ends with, as live's.
func followed(p *dissect.Pipeline, stderr io.Writer) {
	seen := p.Seen()
	if len(seen.Streamed) == 0 {
		return
	}
	shown, _ := p.Shown()
	fmt.Fprintf(stderr, "kdissect: %s read (%d TCP), %s shown\n", plural.Count(seen.Packets, "packet"), seen.TCP, plural.Count(shown, "Kafka message"))
}

// idleFlushed says, in one notice, how many connections were flushed and forgotten for being
// idle; prefix names the capture of a run among others (-o DIR/).
func idleFlushed(p *dissect.Pipeline, prefix string, stderr io.Writer) {
	if n := p.Seen().Idle; n > 0 {
		fmt.Fprintf(stderr, "kdissect: %s%s idle for %g minutes of capture time, or beyond the %d most recently active, %s flushed and forgotten: a later packet of one starts a new connection\n",
			prefix, plural.Count(n, "connection"), reassembly.DefaultCloseAfter.Minutes(), reassembly.DefaultMaxConns, plural.Pick(n, "was", "were"))
	}
}

// noticesLeftOut says how many notices a filter left out with connections that showed no
// message; prefix names the capture of a run among others (-o DIR/).
func noticesLeftOut(p *dissect.Pipeline, prefix string, stderr io.Writer) {
	quiet, crowded := p.NoticesLeftOut()
	switch {
	case quiet == 1:
		fmt.Fprintf(stderr, "kdissect: %s1 notice about a connection with no message shown was left out\n", prefix)
	case quiet > 1:
		fmt.Fprintf(stderr, "kdissect: %s%d notices about connections with no message shown were left out\n", prefix, quiet)
	}
	if crowded > 0 {
		fmt.Fprintf(stderr, "kdissect: %s%s %s left out: %s after the first %d of a connection, before its first message shown\n",
			prefix, plural.Count(crowded, "notice"), plural.Pick(crowded, "was", "were"), plural.Pick(crowded, "it came", "they came"), dissect.MaxHeldNotices)
	}
}
