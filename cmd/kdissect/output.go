package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

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
	fs.BoolVar(&o.lean, "no-fields", false, "parquet: leave the field tree out (the fields column is null), for smaller files written faster")
}

// lookupFormat returns the format chosen, as --no-fields makes it.
func (c *common) lookupFormat() (render.Format, error) {
	f, ok := render.LookupFormat(c.format)
	if !ok {
		return f, fmt.Errorf("unknown --format %q (%s)", c.format, render.ListFormats(render.Formats(), " or ", false))
	}
	if c.lean {
		lean, ok := f.WithoutTree()
		if !ok {
			var with []render.Format
			for _, f := range render.Formats() {
				if f.Lean != nil {
					with = append(with, f)
				}
			}
			return f, fmt.Errorf("--no-fields goes with --format %s", render.ListFormats(with, " or ", false))
		}
		f = lean
	}
	return f, nil
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
	f, err := o.lookupFormat()
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	if o.outPath == "-" {
		oc := *o
		oc.outPath, oc.toFile = "", true
		if len(files) == 1 {
			oc.capture = files[0]
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
	oc.outPath, oc.dest, oc.toFile = "", out, true
	if len(files) == 1 {
		oc.capture = files[0]
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
// as many captures at once as there are cores. What each run says on stdout (statistics) and
// stderr is shown when it ends, stdout in the order of the captures.
func (o *captureOptions) dissectEach(cmd *cli.Command, f render.Format, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if f.Ext == "" {
		return cmd.UsageError(stderr, "--format %s writes no file", f.Name)
	}
	dir := o.outPath
	outs := make([]string, len(files))
	taken := map[string]string{}
	for i, name := range files {
		outs[i] = filepath.Join(dir, capture.Stem(name)+f.Ext)
		if other, ok := taken[outs[i]]; ok {
			return cmd.UsageError(stderr, "%s and %s would both be written to %s", other, name, outs[i])
		}
		taken[outs[i]] = name
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	parallel := min(len(files), runtime.GOMAXPROCS(0))
	jobs := make(chan int)
	results := make([]struct {
		stdout, stderr bytes.Buffer
		status         int
	}, len(files))
	var mu sync.Mutex
	said := map[string]bool{}
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range jobs {
				r := &results[i]
				oc := *o
				oc.read, oc.noProgress = nil, true
				oc.workers = max(1, o.workers/parallel)
				r.status = oc.dissectFile(cmd, outs[i], files[i:i+1], stdin, &r.stdout, &r.stderr)
				// Each run says a usage error alike: once is enough.
				mu.Lock()
				if s := r.stderr.String(); r.status != cli.ExitUsage || !said[s] {
					said[s] = true
					io.WriteString(stderr, s)
				}
				mu.Unlock()
			}
		})
	}
	for i := range files {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	status := cli.ExitOK
	for i := range results {
		r := &results[i]
		if r.stdout.Len() > 0 {
			if len(files) > 1 {
				fmt.Fprintf(stdout, "==> %s <==\n", files[i])
			}
			stdout.Write(r.stdout.Bytes())
		}
		status = max(status, r.status)
	}
	return status
}
