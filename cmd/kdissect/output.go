package main

import (
	"io"
	"os"
	"runtime"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/render"
)

// Where the messages go: -o FILE, -o DIR (one file per capture, written in parallel), or
// stdout; and --no-fields, which leaves the field tree out of the formats that can do without
// it (Parquet).

// registerOutput registers -o and --no-fields.
func (o *captureOptions) registerOutput(fs *flag.FlagSet) {
	fs.StringVarP(&o.outPath, "output", "o", "", "write the output to this file instead of stdout (- is stdout); to a directory (one that exists, or a name ending in /), one file per capture, named after it, the captures read in parallel")
	fs.BoolVar(&o.Lean, "no-fields", false, "parquet: leave the field tree out (the fields column is null), for smaller files written faster")
}

// messagesTo is where the messages go: the -o file, or stdout.
func (o *captureOptions) messagesTo(stdout io.Writer) io.Writer {
	if o.dest != nil {
		return o.dest
	}
	return stdout
}

// statsTo is where the statistics go: after the messages, unless those are a binary file.
func (o *captureOptions) statsTo(f render.Format, stdout io.Writer) io.Writer {
	if f.Binary {
		return stdout
	}
	return o.messagesTo(stdout)
}

// dissectTo runs the capture command with -o: into one file, into one file per capture in a
// directory, or to stdout (-o -).
func (o *captureOptions) dissectTo(cmd *cli.Command, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := o.LookupFormat()
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	if o.outPath == "-" {
		oc := *o
		oc.outPath, oc.ToFile = "", true
		if len(files) == 1 {
			oc.Capture = files[0]
		}
		return oc.dissect(cmd, files, stdin, stdout, stderr)
	}
	if in, ok := capture.Overwrites(o.outPath, files); ok {
		return cmd.UsageError(stderr, "-o %s is the capture %s: it would be overwritten", o.outPath, in)
	}
	if st, err := os.Stat(o.outPath); err == nil && st.IsDir() || strings.HasSuffix(o.outPath, "/") {
		return o.dissectEach(cmd, f, files, stdin, stdout, stderr)
	}
	return o.dissectFile(cmd, o.outPath, files, stdin, stdout, stderr)
}

// dissectFile writes what files hold into the file named path.
func (o *captureOptions) dissectFile(cmd *cli.Command, path string, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out, err := os.Create(path)
	if err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	oc := *o
	oc.outPath, oc.dest, oc.ToFile = "", out, true
	if len(files) == 1 {
		oc.Capture = files[0]
	}
	status := oc.dissect(cmd, files, stdin, stdout, stderr)
	if err := out.Close(); err != nil && status == cli.ExitOK {
		status = cmd.Failed(stderr, "writing %s: %v", path, err)
	}
	if status == cli.ExitUsage {
		os.Remove(path) // nothing was read: leave nothing behind
	}
	return status
}

// dissectEach writes each capture into a file of its own in the directory -o names, reading
// as many captures at once as there are cores (cli.Each).
func (o *captureOptions) dissectEach(cmd *cli.Command, f render.Format, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if f.Ext == "" {
		return cmd.UsageError(stderr, "--format %s writes no file", f.Name)
	}
	outs, err := capture.Outputs(o.outPath, f.Ext, files)
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	if err := os.MkdirAll(o.outPath, 0o777); err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	parallel := min(len(files), runtime.GOMAXPROCS(0))
	return cli.Each(files, parallel, stdout, stderr, func(i int, stdout, stderr io.Writer) int {
		oc := *o
		oc.read, oc.noProgress = nil, true
		oc.workers = max(1, o.workers/parallel)
		return oc.dissectFile(cmd, outs[i], files[i:i+1], stdin, stdout, stderr)
	})
}
