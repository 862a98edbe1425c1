package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// outputRuns are the runs kbench outputs makes of each capture, with --workers 1 and 3: every
// format, and the flags that take other paths through the pipeline (field bytes and encodings,
// statistics, a filter on bodies, --errors with -w, Parquet). Each writes the file named by its
// key, with the capture's name and the workers before it.
var outputRuns = []struct {
	key  string
	args []string
}{
	{"diagram", []string{"--format", "diagram"}},
	{"summary", []string{"--format", "summary"}},
	{"json", []string{"--format", "json"}},
	{"html", []string{"--format", "html"}},
	{"diagx", []string{"--format", "diagram", "-x", "--explain"}},
	{"stats", []string{"--format", "none", "--stats"}},
	{"jstats", []string{"--format", "json", "--stats"}},
	{"Y", []string{"--format", "summary", "-Y", "latency_ms >= 1 || len(errors) > 0"}},
	{"Yb", []string{"--format", "summary", "-Y", "resp.ErrorCode == 0"}},
	{"errw", []string{"--format", "summary", "--errors", "-w", "{dir}/{name}.saved.pcapng"}},
	{"pq", []string{"--format", "parquet", "-o", "{dir}/{name}.parquet"}},
}

// outputsMain writes what a kdissect binary prints for each capture in every format, to a
// directory, so that two builds can be compared with diff -r: a change that should leave
// outputs alone must leave these files byte for byte the same. Captures with a .keylog file
// beside them are decrypted with it.
func outputsMain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("outputs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("kdissect", "", "the kdissect binary (required)")
	dir := fs.String("o", "", "the directory to write to (required; made if missing)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *bin == "" || *dir == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: kbench outputs -kdissect BIN -o DIR CAPTURE...")
		return errUsage
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	n := 0
	for _, capture := range fs.Args() {
		for _, workers := range []int{1, 3} {
			for _, r := range outputRuns {
				if err := outputRun(*bin, *dir, capture, workers, r.key, r.args); err != nil {
					return err
				}
				n++
			}
		}
	}
	fmt.Fprintf(stdout, "%d runs of %s written to %s\n", n, *bin, *dir)
	return nil
}

// outputRun runs bin once on capture and writes its stdout, stderr and exit status to
// DIR/CAPTURE.KEY.wWORKERS (the files it is told to write go to DIR too, named after the
// capture).
func outputRun(bin, dir, capture string, workers int, key string, args []string) error {
	base, w := filepath.Base(capture), ".w"+strconv.Itoa(workers)
	argv := []string{"--no-progress", "--workers", strconv.Itoa(workers)}
	if keylog := strings.TrimSuffix(capture, filepath.Ext(capture)) + ".keylog"; fileExists(keylog) {
		argv = append(argv, "--tls-keylog", keylog)
	}
	for _, a := range args {
		argv = append(argv, strings.NewReplacer("{dir}", dir, "{name}", base+w).Replace(a))
	}
	cmd := exec.Command(bin, append(argv, capture)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	status := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return fmt.Errorf("%s: %w", bin, err)
		}
		status = exit.ExitCode()
	}
	// Paths in what kdissect says are those of this run's directory: left out, so that two
	// runs into different directories compare equal.
	report := strings.ReplaceAll(errOut.String(), dir, "DIR")
	text := out.String() + "--- stderr\n" + report + "--- exit status " + strconv.Itoa(status) + "\n"
	return os.WriteFile(filepath.Join(dir, base+"."+key+w), []byte(text), 0o644)
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
