package main

import (
	"io"

	"github.com/kdissect/kdissect/internal/cli"
)

// runDoctor is "kdissect doctor": the capture command's run, which shows the doctor's findings
// instead of the messages.
func runDoctor(cmd *cli.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, o := captureFlags()
	if status, ok := cmd.Parse(fs, args, stdout, stderr); !ok {
		return status
	}
	files := append(o.read, fs.Args()...)
	if len(files) == 0 {
		return cmd.UsageError(stderr, "no capture file given: kdissect doctor FILE..., or - for stdin")
	}
	if cli.StdinTerminal(files, stdin) {
		return cmd.UsageError(stderr, "- reads a capture from stdin, which is a terminal: pipe one in or name a file")
	}
	switch {
	case !fs.Changed("format"):
	case o.Format == "json":
		o.FindingsJSON = true
	default:
		return cmd.UsageError(stderr, "doctor writes its findings as a table, or as JSON lines with --format json")
	}
	o.Format, o.Findings = "none", true
	return o.dissect(cmd, files, stdin, stdout, stderr)
}
