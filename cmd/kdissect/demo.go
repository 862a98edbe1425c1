package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kdissect/kdissect/pcaps"
)

// runDemo dissects the capture built into the binary, with the capture command's flags, so
// that kdissect shows what it does before the user has a capture of their own.
func runDemo(args []string, stdout, stderr io.Writer) int {
	dir, err := os.MkdirTemp("", "kdissect-demo")
	if err != nil {
		fmt.Fprintf(stderr, "kdissect demo: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, pcaps.DemoName)
	if err := os.WriteFile(name, pcaps.Demo, 0o600); err != nil {
		fmt.Fprintf(stderr, "kdissect demo: %v\n", err)
		return 1
	}
	return runCapture(append(args, name), stdout, stderr)
}
