package main

import (
	"io"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/internal/cli"
)

// doctorFlags are the doctor command's flags: the capture command's that choose and read the
// messages, and --format of its findings; none of the messages' output.
func doctorFlags() (*flag.FlagSet, *captureOptions) {
	o := &captureOptions{}
	fs := flag.NewFlagSet("kdissect doctor", flag.ContinueOnError)
	var names, help []string
	for _, f := range cli.FindingsFormats() {
		names = append(names, f.Name)
		help = append(help, f.Name+" ("+f.Help+")")
	}
	fs.StringVar(&o.FindingsFormat, "format", names[0], "how the findings are written: "+strings.Join(help, ", or "))
	fs.StringVarP(&o.OutPath, "output", "o", "", "write the findings to this file instead of stdout (- is stdout): the report of --format html, say")
	registerDecoding(fs, &o.Common)
	registerSelection(fs, &o.Select)
	o.registerInput(fs)
	return fs, o
}

// runDoctor is "kdissect doctor": the capture command's run, which shows the doctor's findings
// instead of the messages.
func runDoctor(cmd *cli.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, o := doctorFlags()
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
	if _, ok := cli.LookupFindingsFormat(o.FindingsFormat); !ok {
		var names []string
		for _, f := range cli.FindingsFormats() {
			names = append(names, "--format "+f.Name)
		}
		return cmd.UsageError(stderr, "unknown --format %q: doctor writes its findings with %s", o.FindingsFormat, strings.Join(names, ", "))
	}
	o.Format, o.Findings = "none", true
	return o.dissect(cmd, files, stdin, stdout, stderr)
}
