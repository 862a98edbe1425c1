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
