package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/olekukonko/tablewriter/tw"
)

// coresOptions are kbench cores' flags.
type coresOptions struct {
	n, cores int
	kdissect string
	formats  []string
	timeout  time.Duration
	markdown bool
}

// coresMain measures how kdissect's formats scale from one core to several, against what the
// machine itself gives. A virtual machine's cores are not always whole: with all of them busy,
// each may get less of the host than one alone gets, and a one-core run and a k-core run then
// differ by less than k for reasons no program can change. So each round also runs k one-core
// runs side by side, one per core, on the same capture: k runs' work in the time they take
// together, against one run's in the time it takes alone, is the most the machine gives k
// cores over one at that moment (its ceiling), and the speedup is read against it.
func coresMain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kbench cores", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o coresOptions
	fs.IntVar(&o.n, "n", 5, "rounds; each runs every format on one core, on -cores cores, and -cores one-core runs side by side")
	fs.IntVar(&o.cores, "cores", 2, "the cores to compare one core with (cores 0 to cores-1, by taskset)")
	kdissectFlag(fs, &o.kdissect)
	formats := fs.String("formats", "json,diagram", "kdissect's formats to measure, comma-separated")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "time limit of one run")
	fs.BoolVar(&o.markdown, "markdown", false, "print the table in Markdown too (for docs/performance.md)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	o.formats = strings.Split(*formats, ",")
	if fs.NArg() != 1 || o.n < 1 || o.cores < 2 || o.cores > 64 || slices.Contains(o.formats, "") {
		fmt.Fprintln(stderr, "usage: kbench cores [flags] FILE.pcap   (-n at least 1, -cores 2 to 64, -formats not empty)")
		fs.PrintDefaults()
		return errUsage
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return fmt.Errorf("taskset (util-linux) is needed to pin runs to cores: %w", err)
	}
	return benchCores(fs.Arg(0), o, stdout, stderr)
}

// coresRound is one round's wall times of one format: on one core, on several, and the
// one-core runs side by side.
type coresRound struct {
	one, many, together time.Duration
}

// speedup is the one-core time over the k-core time.
func (r coresRound) speedup() float64 { return r.one.Seconds() / r.many.Seconds() }

// ceiling is the same for the machine: k runs' work done side by side in together, against
// one run's done alone in one.
func (r coresRound) ceiling(k int) float64 {
	return float64(k) * r.one.Seconds() / r.together.Seconds()
}

func benchCores(file string, o coresOptions, stdout, stderr io.Writer) error {
	ctx := context.Background()
	info, err := inspectCapture(file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	file, _ = filepath.Abs(file)
	tmp, cleanup, err := tempFolder(runOptions{})
	if err != nil {
		return err
	}
	defer cleanup()
	kd, _, err := kdissectBinary(ctx, o.kdissect, tmp, stderr)
	if err != nil {
		return err
	}
	one := coreList(1)
	many := coreList(o.cores)
	args := func(cores, format string) []string {
		return append([]string{"taskset", "-c", cores, kd, "--format", format}, kdissectPorts(file)...)
	}
	same := map[string]bool{}
	for _, f := range o.formats {
		if same[f], err = sameOutput(ctx, o.timeout, args(one, f), args(many, f)); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	m := describeMachine(ctx, false)
	rounds := map[string][]coresRound{}
	for i := range o.n {
		for _, f := range o.formats {
			r, err := coresRun(ctx, o, args(one, f), args(many, f), func(c int) []string { return args(strconv.Itoa(c), f) })
			if err != nil {
				return fmt.Errorf("%s, round %d: %w", f, i+1, err)
			}
			fmt.Fprintf(stderr, "  %-8s round %d/%d: one core %6.2fs, %d cores %6.2fs (%.2f×), %d one-core runs side by side %6.2fs (ceiling %.2f×)\n",
				f, i+1, o.n, r.one.Seconds(), o.cores, r.many.Seconds(), r.speedup(), o.cores, r.together.Seconds(), r.ceiling(o.cores))
			rounds[f] = append(rounds[f], r)
		}
	}
	fmt.Fprintf(stdout, "\n%s\n", m)
	fmt.Fprintf(stdout, "capture: %s, %s, %d packets; %d rounds, output to /dev/null; medians of the rounds\n\n", file, fmtBytes(info.size), info.packets, o.n)
	return renderCores(stdout, o, rounds, same)
}

// coreList is "0" for one core, "0-(k-1)" for k.
func coreList(k int) string {
	if k == 1 {
		return "0"
	}
	return fmt.Sprintf("0-%d", k-1)
}

// kdissectPorts are the arguments that name the benchmark capture's broker ports and the file.
func kdissectPorts(file string) []string {
	return []string{"-p", strings.Join(brokerPortList(), ","), file}
}

// coresRun times one round of one format: one core, k cores, then k one-core runs at once.
func coresRun(ctx context.Context, o coresOptions, one, many []string, pinned func(core int) []string) (coresRound, error) {
	var r coresRound
	m, err := measure(ctx, o.timeout, one, nil, false)
	if err != nil {
		return r, err
	}
	r.one = m.wall
	if m, err = measure(ctx, o.timeout, many, nil, false); err != nil {
		return r, err
	}
	r.many = m.wall
	argvs := make([][]string, o.cores)
	for c := range argvs {
		argvs[c] = pinned(c)
	}
	r.together, err = measureTogether(ctx, o.timeout, argvs)
	return r, err
}

// measureTogether starts the commands at once and returns the time until the last one ends.
func measureTogether(ctx context.Context, timeout time.Duration, argvs [][]string) (time.Duration, error) {
	errs := make([]error, len(argvs))
	var wg sync.WaitGroup
	start := time.Now()
	for i, argv := range argvs {
		wg.Go(func() { _, errs[i] = measure(ctx, timeout, argv, nil, false) })
	}
	wg.Wait()
	return time.Since(start), errors.Join(errs...)
}

// sameOutput reports whether two command lines print the same bytes (compared by SHA-256, not
// timed).
func sameOutput(ctx context.Context, timeout time.Duration, a, b []string) (bool, error) {
	sum := func(argv []string) ([sha256.Size]byte, error) {
		var s [sha256.Size]byte
		h := sha256.New()
		if _, err := measure(ctx, timeout, argv, h, true); err != nil {
			return s, err
		}
		copy(s[:], h.Sum(nil))
		return s, nil
	}
	sa, err := sum(a)
	if err != nil {
		return false, err
	}
	sb, err := sum(b)
	return sa == sb, err
}

// median is the middle of xs (the mean of the two middle ones for an even count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// coresRows are renderCores' rows, one per format: the median times, speedup and ceiling of
// its rounds (with their least and most), the speedup's share of the ceiling, and whether the
// outputs on one and k cores were the same.
func coresRows(o coresOptions, rounds map[string][]coresRound, same map[string]bool) [][]string {
	var rows [][]string
	for _, f := range o.formats {
		var one, many, sp, ce, share []float64
		for _, r := range rounds[f] {
			one = append(one, r.one.Seconds())
			many = append(many, r.many.Seconds())
			sp = append(sp, r.speedup())
			ce = append(ce, r.ceiling(o.cores))
			share = append(share, r.speedup()/r.ceiling(o.cores))
		}
		out := "identical"
		if !same[f] {
			out = "DIFFERS"
		}
		rows = append(rows, []string{f,
			fmt.Sprintf("%.2f s", median(one)), fmt.Sprintf("%.2f s", median(many)),
			fmt.Sprintf("%.2f× (%.2f–%.2f)", median(sp), slices.Min(sp), slices.Max(sp)),
			fmt.Sprintf("%.2f× (%.2f–%.2f)", median(ce), slices.Min(ce), slices.Max(ce)),
			fmt.Sprintf("%.0f%%", 100*median(share)), out})
	}
	return rows
}

// renderCores prints the table of coresRows, then again in Markdown with o.markdown.
func renderCores(w io.Writer, o coresOptions, rounds map[string][]coresRound, same map[string]bool) error {
	rows := coresRows(o, rounds, same)
	header := []string{"format", "1 core", fmt.Sprintf("%d cores", o.cores), "speedup (min–max)",
		"machine ceiling (min–max)", "speedup ÷ ceiling", "output"}
	R, L := tw.AlignRight, tw.AlignLeft
	for _, markdown := range []bool{false, true} {
		if markdown && !o.markdown {
			break
		}
		if markdown {
			fmt.Fprintln(w)
		}
		t := newTable(w, markdown, []tw.Align{L, R, R, R, R, R, L})
		t.Header(header)
		if err := t.Bulk(rows); err != nil {
			return err
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return nil
}
