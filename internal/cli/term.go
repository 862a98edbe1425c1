package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"golang.org/x/term"

	"github.com/kdissect/kdissect/internal/inert"
	"github.com/kdissect/kdissect/render"
)

// Colorful reports whether output to w gets colours: w is a terminal and NO_COLOR is not set
// to a non-empty value (https://no-color.org).
func Colorful(w io.Writer) bool {
	return os.Getenv("NO_COLOR") == "" && IsTerminal(w)
}

// ProgressWanted says whether to show progress: stderr is a terminal, and the messages do not
// go to that terminal too (the progress line would cut their lines), unless the format is
// silent.
func ProgressWanted(stdout, stderr io.Writer, silent bool) bool {
	return IsTerminal(stderr) && (silent || !IsTerminal(stdout))
}

// StdinTerminal reports whether files name stdin ("-") and stdin is a terminal, from which no
// capture comes.
func StdinTerminal(files []string, stdin io.Reader) bool {
	f, ok := stdin.(*os.File)
	return ok && slices.Contains(files, "-") && term.IsTerminal(int(f.Fd()))
}

// IsTerminal reports whether w is a terminal (or an inert.Writer over one).
func IsTerminal(w io.Writer) bool {
	f, ok := unwrap(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// unwrap is the writer under an inert.Writer (Program.Run puts one over stderr), or w.
func unwrap(w io.Writer) io.Writer {
	if iw, ok := w.(*inert.Writer); ok {
		return iw.Unwrap()
	}
	return w
}

// Warnings writes a run's warnings to stderr ("kdissect: ..."), and keeps the progress line
// that a terminal gets there while a capture file is read: a warning erases it first.
type Warnings struct {
	stderr io.Writer
	line   *render.Progress
}

// NewWarnings writes warnings to stderr.
func NewWarnings(stderr io.Writer) *Warnings { return &Warnings{stderr: stderr} }

// Warn writes one warning, for dissect.Config's Warn.
func (w *Warnings) Warn(err error) {
	if w.line != nil {
		w.line.Clear() // the next update draws it again
	}
	fmt.Fprintf(w.stderr, "kdissect: %v\n", err)
}

// Progress starts a progress line for a file, for the runner (runner.go): its update and
// its end.
func (w *Warnings) Progress(string) (update func(read, total int64, packets int), end func()) {
	w.line = render.NewProgress(unwrap(w.stderr), time.Now) // its carriage returns are its own
	return w.line.Update, func() { w.line.Clear(); w.line = nil }
}
