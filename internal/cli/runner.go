package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/render"
)

// runner reads the captures a command names through a pipeline, one after another: files,
// and "-" for stdin, which can be read once. Around the pipeline's File and Read, it does what
// the command line asks: with several files, it tells the output where each begins
// (render.FileStarter) and that relative times count from the earliest of them
// (render.StartSetter); with -w, it reads each capture again to write the packets of the
// messages shown, keeping stdin in a temporary file meanwhile; on a terminal, it shows a
// progress line while each file is read.
type runner struct {
	p     *dissect.Pipeline
	out   render.Renderer
	stdin io.Reader
	// save, when set, writes the packets of the messages shown (-w); it must be the
	// pipeline's Config.OnShow too (see newRunner).
	save *dissect.Save
	// progress, when set, starts a file's progress line; update and done are the line of the
	// file being read, started by its first packet.
	progress func(name string) (update func(read, size int64, packets int), done func())
	name     string
	update   func(read, size int64, packets int)
	done     func()
	// stdinTaken: stdin was read.
	stdinTaken bool
	// begins, when set, is told where each capture begins, as the output is, with several.
	begins func(name string)
}

// newRunner returns the runner of the pipeline that dissect.New will make of cfg, which it
// completes: the messages shown go to save (when set), the progress to progress (when set).
// The pipeline made is then set in the runner's p.
func newRunner(cfg *dissect.Config, stdin io.Reader, save *dissect.Save,
	progress func(string) (func(read, size int64, packets int), func())) *runner {
	r := &runner{out: cfg.Out, stdin: stdin, save: save, progress: progress}
	if save != nil {
		cfg.OnShow = save.Note
	}
	if progress != nil {
		cfg.Progress = r.packet
	}
	return r
}

// packet is told how far the file being read is, after each packet (Config.Progress).
func (r *runner) packet(read, size int64, packets int) {
	if r.update == nil {
		r.update, r.done = r.progress(r.name)
	}
	r.update(read, size, packets)
}

// read ends the progress line of the file just read.
func (r *runner) read() {
	if r.done != nil {
		r.done()
	}
	r.update, r.done = nil, nil
}

// files reads the captures names, until the pipeline stops (its Limit, Stop); each one's
// error goes to fail and the next one is read all the same. Its error is one telling the
// output or writing the packets shown, which stops the run.
func (r *runner) files(names []string, fail func(error)) error {
	if len(names) > 1 {
		r.startAtEarliest(names)
	}
	for _, name := range names {
		if r.p.Stopped() {
			break // the Limit of messages is shown, or Stop was called
		}
		if fs, ok := r.out.(render.FileStarter); ok && len(names) > 1 {
			if err := fs.File(name); err != nil {
				return err
			}
		}
		if r.begins != nil && len(names) > 1 {
			r.begins(name)
		}
		readErr, saveErr := r.file(name)
		if saveErr != nil {
			return saveErr
		}
		if readErr != nil {
			fail(readErr)
		}
	}
	return nil
}

// file reads one capture, and writes the packets shown with -w; readErr is the reading's
// (File's), saveErr one keeping stdin or writing the packets.
func (r *runner) file(name string) (readErr, saveErr error) {
	r.name = name
	switch {
	case name != "-":
		_, readErr = r.p.File(name)
		r.read()
		return readErr, r.saveFile(name)
	case r.stdinTaken:
		return errors.New("stdin (-) given twice: it can be read once"), nil
	}
	r.stdinTaken = true
	if r.save != nil {
		return r.stdinSaved()
	}
	return r.readFrom(r.stdin), nil
}

// readFrom runs the capture read from in (stdin, gzipped or not) through the pipeline.
func (r *runner) readFrom(in io.Reader) error {
	defer r.read()
	cr, err := capture.NewReader(in, "stdin")
	if err != nil {
		return err
	}
	defer cr.Close()
	_, err = r.p.Read(cr, "stdin")
	return err
}

// startAtEarliest tells the output, before anything is shown, that relative times count from
// the earliest of the files' first packets, whatever the order the files are read in: each
// file's first TCP packet is read for it. A pipe (stdin, a FIFO) cannot be read ahead, so it
// takes no part: its packets count from the same start, and with no other file, from its
// own first packet, as one file's do.
func (r *runner) startAtEarliest(names []string) {
	s, ok := r.out.(render.StartSetter)
	if !ok {
		return
	}
	var earliest time.Time
	for _, name := range names {
		if name == "-" {
			continue
		}
		if t, ok := capture.FirstTime(name); ok && (earliest.IsZero() || t.Before(earliest)) {
			earliest = t
		}
	}
	if !earliest.IsZero() {
		s.SetStart(earliest)
	}
}

// saveFile reads a capture file again, for -w to write the packets of the messages shown; its
// error is one writing them.
func (r *runner) saveFile(name string) error {
	if r.save == nil {
		return nil
	}
	cr, err := capture.Open(name)
	if err != nil {
		return nil // as the first reading found
	}
	defer cr.Close()
	return r.saveFrom(cr)
}

func (r *runner) saveFrom(cr *capture.Reader) error {
	if err := r.save.Write(cr); err != nil {
		return fmt.Errorf("writing the packets shown: %w", err)
	}
	return nil
}

// stdinSaved reads stdin for -w, which must read it twice: it is kept in a temporary file
// meanwhile. readErr is the reading's; saveErr is one keeping or writing it.
func (r *runner) stdinSaved() (readErr, saveErr error) {
	tmp, err := os.CreateTemp("", "kdissect-stdin-*")
	if err != nil {
		return nil, fmt.Errorf("keeping stdin for -w: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := io.Copy(tmp, r.stdin); err != nil {
		return nil, fmt.Errorf("keeping stdin for -w: %w", err)
	}
	for pass := range 2 {
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("keeping stdin for -w: %w", err)
		}
		if pass == 0 {
			readErr = r.readFrom(tmp)
			continue
		}
		cr, err := capture.NewReader(tmp, "stdin")
		if err != nil {
			return readErr, nil
		}
		defer cr.Close()
		saveErr = r.saveFrom(cr)
	}
	return readErr, saveErr
}

// streams reports whether any of names, as runner.files takes them, is a capture that arrives
// as it is made: "-" when stdin is a pipe, or a FIFO. Such a run ends when its writer closes
// the pipe, or when it is stopped (Pipeline.Stop: Ctrl-C, -c).
func streams(names []string, stdin io.Reader) bool {
	for _, name := range names {
		if name == "-" && capture.IsStream(stdin) {
			return true
		}
		if name != "-" && capture.IsStreamName(name) {
			return true
		}
	}
	return false
}
