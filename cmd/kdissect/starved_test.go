package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kdissect/kdissect/pcaps"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/internal/testutil"
)

// TestStarvedRuns: what kdissect says about a capture file depends on the file alone, never on
// timing. Every capture in pcaps/ is read with --workers 1 and 3 while the process is starved
// (GOMAXPROCS 1, with goroutines spinning beside the run, so that every goroutine of it waits
// for the one core at any point), and then all of them at once into a directory (-o DIR/,
// several captures read in parallel); each output, stdout and stderr, must be byte for byte
// that of a quiet run with one worker.
func TestStarvedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every capture six times")
	}
	files := captures(t)
	formats := [][]string{{"--format", "json", "--errors"}, {"--format", "summary"}}
	args := func(format []string, workers int, file string) []string {
		a := append([]string{"-p", pcaps.Ports, "--workers", strconv.Itoa(workers)}, format...)
		if keylog := strings.TrimSuffix(file, filepath.Ext(file)) + ".keylog"; fileExists(keylog) {
			a = append(a, "--tls-keylog", keylog)
		}
		return append(a, file)
	}
	quiet := map[string]string{}
	for _, file := range files {
		for _, format := range formats {
			out, errOut, code := kdissect(t, args(format, 1, file)...)
			quiet[file+format[1]] = out + stderrSection(errOut) + "exit " + strconv.Itoa(code)
		}
	}
	quietDir := t.TempDir()
	dirArgs := []string{"--format", "json", "--errors", "-p", pcaps.Ports, "-o", quietDir + "/"}
	_, quietDirErr, quietDirCode := kdissect(t, append(dirArgs, files...)...)

	defer starve()()
	for _, workers := range []int{1, 3} {
		for _, file := range files {
			for _, format := range formats {
				out, errOut, code := kdissect(t, args(format, workers, file)...)
				got := out + stderrSection(errOut) + "exit " + strconv.Itoa(code)
				if want := quiet[file+format[1]]; got != want {
					g, w := testutil.Clip(got, want)
					t.Errorf("%s %s --workers %d, starved:\n%s\nquiet:\n%s", filepath.Base(file), format[1], workers, g, w)
				}
			}
		}
	}
	dir := t.TempDir()
	dirArgs[len(dirArgs)-1] = dir + "/"
	_, dirErr, dirCode := kdissect(t, append(append(dirArgs, "--workers", "3"), files...)...)
	if dirCode != quietDirCode || dirErr != strings.ReplaceAll(quietDirErr, quietDir, dir) {
		t.Errorf("-o DIR/, starved: exit %d, stderr:\n%s\nquiet: exit %d, stderr:\n%s", dirCode, dirErr, quietDirCode, quietDirErr)
	}
	outs, err := capture.Outputs(dir, ".jsonl", files)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range outs {
		got, gerr := os.ReadFile(out)
		want, werr := os.ReadFile(filepath.Join(quietDir, filepath.Base(out)))
		if gerr != nil || werr != nil {
			t.Errorf("%s: starved: %v; quiet: %v", out, gerr, werr)
			continue
		}
		if string(got) != string(want) {
			g, w := testutil.Clip(string(got), string(want))
			t.Errorf("-o DIR/ %s, starved:\n%s\nquiet:\n%s", filepath.Base(out), g, w)
		}
	}
}

// starve leaves the process one core, shared with goroutines that spin until the function it
// returns is called.
func starve() (stop func()) {
	prev := runtime.GOMAXPROCS(1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	return func() {
		close(done)
		wg.Wait()
		runtime.GOMAXPROCS(prev)
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
