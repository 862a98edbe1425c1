package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// colorful reports whether output to w gets colours: w is a terminal and NO_COLOR is not set
// to a non-empty value (https://no-color.org).
func colorful(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(f.Fd()))
}

// progressWanted says whether to show progress: stderr is a terminal, and the messages do not
// go to that terminal too (the progress line would cut their lines), unless the format is
// silent.
func progressWanted(stdout, stderr io.Writer, silent bool) bool {
	return isTerminal(stderr) && (silent || !isTerminal(stdout))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
