package cli

import (
	"io"
	"os"

	"golang.org/x/term"
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

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
