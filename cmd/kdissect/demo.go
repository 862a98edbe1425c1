package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/pcaps"
)

// runDemo dissects the capture built into the binary, with the capture command's flags, so
// that kdissect shows what it does before the user has a capture of their own.
func runDemo(cmd *cli.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, o := captureFlags()
	if status, ok := cmd.Parse(fs, args, stdout, stderr); !ok {
		return status
	}
	if fs.NArg() > 0 || len(o.read) > 0 {
		return cmd.UsageError(stderr, "demo reads its own capture; to dissect files: kdissect FILE...")
	}
	dir, err := os.MkdirTemp("", "kdissect-demo")
	if err != nil {
		return cmd.Failed(stderr, "demo: %v", err)
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, pcaps.DemoName)
	if err := os.WriteFile(name, pcaps.Demo, 0o600); err != nil {
		return cmd.Failed(stderr, "demo: %v", err)
	}
	return o.dissect(cmd, []string{name}, stdin, stdout, stderr)
}
