package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type runOptions struct {
	n        int
	double   bool
	kdissect string
	tshark   bool
	tmp      string
	keep     bool
	timeout  time.Duration
	markdown bool
}

func runMain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kbench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o runOptions
	fs.IntVar(&o.n, "n", 3, "runs of each program; the best wall time counts")
	fs.BoolVar(&o.double, "double", false, "also run on the capture concatenated with itself (shifted in time) and compare peak RSS")
	kdissectFlag(fs, &o.kdissect)
	fs.BoolVar(&o.tshark, "tshark", true, "measure tshark too")
	fs.StringVar(&o.tmp, "tmp", "", "folder for the kdissect build and the doubled capture (default: a new one under $TMPDIR)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary folder")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "time limit of one run of one program")
	fs.BoolVar(&o.markdown, "markdown", false, "print the tables in Markdown too (for docs/performance.md)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if fs.NArg() != 1 || o.n < 1 {
		fmt.Fprintln(stderr, "usage: kbench run [flags] FILE.pcap   (-n at least 1)")
		fs.PrintDefaults()
		return errUsage
	}
	return benchRun(fs.Arg(0), o, stdout, stderr)
}

// program is one command line to time.
type program struct {
	name, mode string
	argv       []string // the FILE argument is fileArg, replaced by the capture's path
	keepStdout bool     // show what it printed (the floor's counts) instead of sending it to /dev/null
}

const fileArg = "FILE"

func (p program) command(file string) []string {
	out := make([]string, len(p.argv))
	for i, a := range p.argv {
		if a == fileArg {
			a = file
		}
		out[i] = a
	}
	return out
}

// measurement is one run of one program.
type measurement struct {
	wall time.Duration
	cpu  time.Duration // user + system
	rss  int64         // peak resident set, bytes
}

// result is the runs of one program on one capture.
type result struct {
	prog   program
	file   captureInfo
	runs   []measurement
	output string // the floor's counts
	err    error
}

// best is the run with the shortest wall time; rss is the highest peak of all runs.
func (r *result) best() (measurement, bool) {
	if len(r.runs) == 0 {
		return measurement{}, false
	}
	b := r.runs[0]
	for _, m := range r.runs[1:] {
		if m.wall < b.wall {
			b = m
		}
	}
	for _, m := range r.runs {
		b.rss = max(b.rss, m.rss)
	}
	return b, true
}

func benchRun(file string, o runOptions, stdout, stderr io.Writer) error {
	ctx := context.Background()
	info, err := inspectCapture(file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	if info.packets == 0 {
		return fmt.Errorf("%s holds no packets", file)
	}
	file, _ = filepath.Abs(file)
	tmp, cleanup, err := tempFolder(o)
	if err != nil {
		return err
	}
	defer cleanup()
	kd, help, err := kdissectBinary(ctx, o.kdissect, tmp, stderr)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	set := benchPrograms(self, kd, help, o.tshark)

	m := describeMachine(ctx, o.tshark)
	var failed []string
	results := runPrograms(ctx, set.all, file, info, o, stderr)
	failed = appendFailures(failed, results, "")
	var dresults []*result
	if o.double {
		var note string
		dresults, note, err = runDoubled(ctx, file, tmp, append([]program{set.floor}, set.kdissect...), o, stderr)
		if err != nil {
			return err
		}
		if note != "" {
			set.notes = append(set.notes, note)
		}
		failed = appendFailures(failed, dresults, " on the doubled capture")
	}
	fmt.Fprintf(stdout, "\n%s\n", m)
	fmt.Fprintf(stdout, "capture: %s, %s, %d packets, %.1f s of traffic; best of %d runs taken in turn, output to /dev/null; MB = 10^6 bytes\n\n",
		file, fmtBytes(info.size), info.packets, info.duration().Seconds(), o.n)
	notes, err := writeTables(stdout, results, dresults, o)
	if err != nil {
		return err
	}
	writeCommands(stdout, set.all, file, append(set.notes, notes...))
	if len(failed) > 0 {
		for _, f := range failed {
			fmt.Fprintf(stderr, "kbench run: FAILED %s\n", f)
		}
		return fmt.Errorf("%d of the measurements failed", len(failed))
	}
	return nil
}

// tempFolder is o.tmp, made if needed, or a new folder under $TMPDIR; cleanup removes the new
// folder unless o.keep.
func tempFolder(o runOptions) (tmp string, cleanup func(), err error) {
	if o.tmp != "" {
		return o.tmp, func() {}, os.MkdirAll(o.tmp, 0o755)
	}
	if tmp, err = os.MkdirTemp("", "kbench-"); err != nil {
		return "", nil, err
	}
	if o.keep {
		return tmp, func() {}, nil
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// kdissectFlag defines -kdissect, the binary kdissectBinary measures.
func kdissectFlag(fs *flag.FlagSet, kd *string) {
	fs.StringVar(kd, "kdissect", "", "a kdissect binary to measure (default: go build ./cmd/kdissect from the module in the current directory)")
}

// kdissectBinary is the kdissect binary to measure, built into tmp when none is given, and
// what its help says.
func kdissectBinary(ctx context.Context, kd, tmp string, stderr io.Writer) (string, string, error) {
	if kd == "" {
		kd = filepath.Join(tmp, "kdissect")
		fmt.Fprintf(stderr, "building kdissect: go build -o %s ./cmd/kdissect\n", kd)
		if err := buildKdissect(ctx, kd); err != nil {
			return "", "", err
		}
	}
	help, err := commandOutput(ctx, time.Minute, kd, "help")
	if err != nil {
		return "", "", fmt.Errorf("%s help: %w", kd, err)
	}
	return kd, help, nil
}

// programSet is what kbench run measures: the floor, kdissect's modes, and all of them with
// the stricter floor and tshark; notes say what could not be measured.
type programSet struct {
	floor    program
	kdissect []program
	all      []program
	notes    []string
}

// benchPrograms lists the command lines to time: kbench's own floor (self), kdissect's modes
// its help offers, and tshark's unless not wanted.
func benchPrograms(self, kd, help string, tshark bool) programSet {
	ports := brokerPortList()
	kdPorts := []string{"-p", strings.Join(ports, ",")}
	var set programSet
	set.floor = program{name: "floor", mode: "read+decode+reassemble", argv: []string{self, "floor", fileArg}, keepStdout: true}
	// The stricter floor: reassembled bytes counted, not read.
	countProg := program{name: "floor", mode: floorCountMode, argv: []string{self, "floor", "-count", fileArg}}
	set.kdissect = []program{
		{name: "kdissect", mode: "summary", argv: append([]string{kd, "--format", "summary"}, append(kdPorts, fileArg)...)},
		{name: "kdissect", mode: "json", argv: append([]string{kd, "--format", "json"}, append(kdPorts, fileArg)...)},
	}
	if hasStatsMode(help) {
		set.kdissect = append(set.kdissect, program{name: "kdissect", mode: "stats", argv: append([]string{kd, "--stats", "--format", "none"}, append(kdPorts, fileArg)...)})
	} else {
		set.notes = append(set.notes, "kdissect has no --stats / --format none (see kdissect help): stats mode not measured")
	}
	set.all = append([]program{set.floor, countProg}, set.kdissect...)
	if tshark {
		tsArgs := []string{"tshark", "-r", fileArg, "-n"}
		for _, p := range ports {
			tsArgs = append(tsArgs, "-d", "tcp.port=="+p+",kafka")
		}
		set.all = append(set.all,
			program{name: "tshark", mode: "one-line", argv: tsArgs},
			program{name: "tshark", mode: "json", argv: append(append([]string{}, tsArgs...), "-T", "json")},
		)
	}
	return set
}

// appendFailures adds to failed each program of results that failed, where being where it
// ran ("" for the capture itself).
func appendFailures(failed []string, results []*result, where string) []string {
	for _, r := range results {
		if r.err != nil {
			failed = append(failed, fmt.Sprintf("%s %s%s: %v", r.prog.name, r.prog.mode, where, r.err))
		}
	}
	return failed
}

// runDoubled writes the capture twice over into tmp and runs progs on it; the note says what
// of the doubling went wrong, if anything.
func runDoubled(ctx context.Context, file, tmp string, progs []program, o runOptions, stderr io.Writer) ([]*result, string, error) {
	dfile := filepath.Join(tmp, "double.pcap")
	fmt.Fprintf(stderr, "writing %s: %s twice, the second copy shifted in time and to other IP addresses\n", dfile, filepath.Base(file))
	unmoved, err := doubleCapture(file, dfile)
	if err != nil {
		return nil, "", fmt.Errorf("doubling the capture: %w", err)
	}
	var note string
	if unmoved > 0 {
		note = fmt.Sprintf("doubled capture: the addresses of %d packets of the second copy could not be moved", unmoved)
	}
	dinfo, err := inspectCapture(dfile)
	if err != nil {
		return nil, "", err
	}
	if !o.keep {
		defer os.Remove(dfile)
	}
	return runPrograms(ctx, progs, dfile, dinfo, o, stderr), note, nil
}

// writeTables writes the timings, the floor's counts, the memory of the doubled capture and,
// with o.markdown, the tables again in Markdown. Its notes are what it found amiss.
func writeTables(stdout io.Writer, results, dresults []*result, o runOptions) (notes []string, err error) {
	if err := renderResults(stdout, results, false); err != nil {
		return nil, err
	}
	for _, r := range results {
		if r.output != "" {
			fmt.Fprintf(stdout, "floor: %s\n", r.output)
		}
	}
	if o.double {
		fmt.Fprintf(stdout, "\nflat memory: the same programs on the capture and on the capture twice over (%s)\n\n", fmtBytes(dresults[0].file.size))
		if err := renderMemory(stdout, results, dresults, false); err != nil {
			return nil, err
		}
		if dresults[0].output != "" {
			fmt.Fprintf(stdout, "floor ×2: %s\n", dresults[0].output)
		}
		// The floor must have reassembled the bytes of both copies.
		one, ok1 := floorBytes(results[0].output)
		two, ok2 := floorBytes(dresults[0].output)
		if ok1 && ok2 && two != 2*one {
			notes = append(notes, fmt.Sprintf("the floor reassembled %d bytes of the doubled capture, not twice %d: its second copy was not read as new connections", two, one))
		}
	}
	if o.markdown {
		fmt.Fprintln(stdout)
		if err := renderResults(stdout, results, true); err != nil {
			return nil, err
		}
		if o.double {
			fmt.Fprintln(stdout)
			if err := renderMemory(stdout, results, dresults, true); err != nil {
				return nil, err
			}
		}
	}
	return notes, nil
}

// writeCommands lists the command lines measured, then the notes.
func writeCommands(stdout io.Writer, progs []program, file string, notes []string) {
	fmt.Fprintln(stdout, "\ncommands:")
	for _, p := range progs {
		argv := p.command(file)
		argv[0] = filepath.Base(argv[0]) // kbench's own path is a temporary one under go run
		fmt.Fprintf(stdout, "  %s > /dev/null\n", strings.Join(argv, " "))
	}
	for _, n := range notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
}

// hasStatsMode says whether kdissect's help offers --stats and --format none.
func hasStatsMode(help string) bool {
	return strings.Contains(help, "--stats") && strings.Contains(help, "none")
}

// buildKdissect builds ./cmd/kdissect of the module in the current directory.
func buildKdissect(ctx context.Context, out string) error {
	gomod, err := commandOutput(ctx, time.Minute, "go", "env", "GOMOD")
	if err != nil {
		return err
	}
	gomod = strings.TrimSpace(gomod)
	if gomod == "" || gomod == os.DevNull {
		return errors.New("not inside the kdissect module: run from the repository, or give -kdissect BIN")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/kdissect")
	cmd.Dir = filepath.Dir(gomod)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/kdissect: %v\n%s", err, b)
	}
	return nil
}

// commandOutput runs a command with a timeout and returns what it printed.
func commandOutput(ctx context.Context, timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return string(b), fmt.Errorf("%s: %v: %s", name, err, lastLines(string(b), 5))
	}
	return string(b), nil
}

// runPrograms runs each program on file o.n times, taking the programs in turn: run 1 of each,
// then run 2 of each, and so on. A shared machine's speed drifts from one minute to the next;
// in turn, every program meets the same drift, and the ratios between them stay meaningful.
// A program that fails is not run again.
func runPrograms(ctx context.Context, progs []program, file string, info captureInfo, o runOptions, stderr io.Writer) []*result {
	results := make([]*result, len(progs))
	for i, p := range progs {
		results[i] = &result{prog: p, file: info}
	}
	for i := range o.n {
		for _, r := range results {
			if r.err != nil {
				continue
			}
			p := r.prog
			var out bytes.Buffer
			m, err := measure(ctx, o.timeout, p.command(file), &out, p.keepStdout)
			if err != nil {
				fmt.Fprintf(stderr, "  %-8s %-22s run %d/%d on %s: FAILED: %v\n", p.name, p.mode, i+1, o.n, filepath.Base(file), err)
				r.err = err
				continue
			}
			fmt.Fprintf(stderr, "  %-8s %-22s run %d/%d on %s: %7.2fs  cpu %7.2fs  peak RSS %s\n",
				p.name, p.mode, i+1, o.n, filepath.Base(file), m.wall.Seconds(), m.cpu.Seconds(), fmtMiB(m.rss))
			r.runs = append(r.runs, m)
			r.output = strings.TrimSpace(out.String())
		}
	}
	return results
}

// measure runs argv once and returns its wall time, CPU time and peak RSS. Its standard output
// goes to /dev/null unless keep, when it goes to out.
func measure(ctx context.Context, timeout time.Duration, argv []string, out io.Writer, keep bool) (measurement, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if keep {
		cmd.Stdout = out
	} else {
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return measurement{}, err
		}
		defer null.Close()
		cmd.Stdout = null
	}
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if ctx.Err() != nil {
		return measurement{}, fmt.Errorf("no result within %v", timeout)
	}
	if err != nil {
		return measurement{}, fmt.Errorf("%v: %s", err, lastLines(errBuf.String(), 5))
	}
	m := measurement{wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.rss = maxRSSBytes(ru)
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return m, nil
}

// maxRSSBytes is the peak resident set of an rusage: Linux counts ru_maxrss in KiB.
func maxRSSBytes(ru *syscall.Rusage) int64 { return int64(ru.Maxrss) * 1024 }

// lastLines returns the last n lines of s, on one line.
func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " | ")
}

func fmtMiB(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// floorBytes finds the reassembled byte count in the floor's output.
func floorBytes(out string) (int64, bool) {
	f := strings.Fields(out)
	for i := 0; i+2 < len(f); i++ {
		if f[i] == "reassembled" && f[i+1] == "bytes" {
			n, err := strconv.ParseInt(f[i+2], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
