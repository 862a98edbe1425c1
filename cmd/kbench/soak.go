package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/internal/cli"
)

// soakOptions are kbench soak's flags.
type soakOptions struct {
	lasting time.Duration
	rate    float64
	rotate  time.Duration
	ring    string
	saveOn  string
	dir     string
	kd      string
	format  string
	lean    bool
}

// soakMain is "kbench soak": kdissect live, always on (Parquet files of periods and a flight
// recorder), under gen's workload at a steady rate for minutes; its resident memory sampled
// each second, its drops, and every file it wrote read back.
func soakMain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kbench soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o soakOptions
	fs.DurationVar(&o.lasting, "for", 10*time.Minute, "how long the workload runs")
	fs.Float64Var(&o.rate, "rate", 2, "MB/s of record values the producers write together")
	fs.DurationVar(&o.rotate, "rotate", 30*time.Second, "kdissect live --rotate")
	fs.StringVar(&o.ring, "ring", "64MB", "kdissect live --ring")
	fs.StringVar(&o.saveOn, "save-on", "len(errors) > 0", "kdissect live --save-on")
	fs.StringVar(&o.format, "format", "parquet", "kdissect live --format: parquet or json for files of periods, none for the flight recorder alone")
	fs.BoolVar(&o.lean, "no-fields", false, "kdissect live --no-fields (Parquet without the field trees)")
	fs.StringVar(&o.dir, "dir", "", "where kdissect's files go (default: a new directory under /tmp, left for a look)")
	fs.StringVar(&o.kd, "kdissect", "", "the kdissect binary (default: go build ./cmd/kdissect from the module in the current directory)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	ring, err := cli.ParseSize(o.ring)
	if err != nil || fs.NArg() != 0 {
		fmt.Fprintf(stderr, "kbench soak: -ring %q: %v; no arguments\n", o.ring, err)
		return errUsage
	}
	if os.Geteuid() != 0 {
		return errors.New("needs root (network namespace, live capture): sudo go run ./cmd/kbench soak")
	}
	if o.dir == "" {
		if o.dir, err = os.MkdirTemp("", "kbench-soak-"); err != nil {
			return err
		}
	}
	if o.kd == "" {
		o.kd = filepath.Join(o.dir, "kdissect")
		fmt.Fprintf(stderr, "building kdissect: go build -o %s ./cmd/kdissect\n", o.kd)
		if err := buildKdissect(context.Background(), o.kd); err != nil {
			return err
		}
	}
	out, pidFile, errFile := filepath.Join(o.dir, "out")+"/", filepath.Join(o.dir, "kdissect.pid"), filepath.Join(o.dir, "kdissect.stderr")
	format := o.format
	if o.lean {
		format += " --no-fields"
	}
	with := fmt.Sprintf("echo $$ > %s; exec %s live -i lo -p 9092-9094 --format %s --rotate %s -o %s --ring %s --save-on %s 2> %s",
		pidFile, o.kd, format, o.rotate, out, o.ring, shellQuote(o.saveOn), errFile)
	fmt.Fprintf(stdout, "kbench soak: %v at %g MB/s; kdissect live --format %s --rotate %v --ring %s; files in %s\n", o.lasting, o.rate, format, o.rotate, o.ring, out)

	samples := &rssSamples{}
	stop := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		samples.take(pidFile, stop)
	}()
	genErr := genMain([]string{"-o", filepath.Join(o.dir, "tcpdump.pcap"), "-size", "1000GB", "-for", o.lasting.String(),
		"-timeout", (o.lasting + 2*time.Minute).String(), "-rate", strconv.FormatFloat(o.rate, 'f', -1, 64), "-with", with}, io.Discard, stderr)
	close(stop)
	sampling.Wait()
	os.Remove(filepath.Join(o.dir, "tcpdump.pcap"))
	if genErr != nil {
		return fmt.Errorf("workload: %w", genErr)
	}
	return soakReport(stdout, samples, errFile, out, ring)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// rssSamples are the resident set sizes of a process, one a second.
type rssSamples struct {
	at  []time.Duration
	rss []int64
}

// take samples the process whose pid the file will hold, until stop.
func (s *rssSamples) take(pidFile string, stop <-chan struct{}) {
	var start time.Time
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		b, err := os.ReadFile(pidFile)
		if err != nil {
			continue
		}
		status, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/status")
		if err != nil {
			continue
		}
		m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(status)
		if m == nil {
			continue
		}
		kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
		if start.IsZero() {
			start = time.Now()
		}
		s.at = append(s.at, time.Since(start))
		s.rss = append(s.rss, kb<<10)
	}
}

// soakReport prints the memory at the start, middle and end, the drops, and reads back every
// file written.
func soakReport(w io.Writer, s *rssSamples, errFile, dir string, ring int64) error {
	if len(s.rss) < 3 {
		return fmt.Errorf("only %d samples of kdissect's memory", len(s.rss))
	}
	var peak int64
	for _, r := range s.rss {
		peak = max(peak, r)
	}
	n := len(s.rss)
	fmt.Fprintf(w, "RSS: start (%v) %s, middle (%v) %s, end (%v) %s, peak %s; bound: ring %s + 96 MB = %s\n",
		s.at[0].Round(time.Second), fmtBytes(s.rss[0]), s.at[n/2].Round(time.Second), fmtBytes(s.rss[n/2]),
		s.at[n-1].Round(time.Second), fmtBytes(s.rss[n-1]), fmtBytes(peak), fmtBytes(ring), fmtBytes(ring+96e6))
	said, err := os.ReadFile(errFile)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "kdissect said:\n%s", said)
	counts := regexp.MustCompile(`(\d+) Kafka messages? shown; \d+ packets? received by filter, (\d+) dropped by kernel`).FindSubmatch(said)
	if counts == nil {
		return errors.New("kdissect did not say its counts")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var files, saved, rows, packets int64
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case strings.HasSuffix(e.Name(), ".saved.pcapng"):
			n, err := countPackets(path)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			saved, packets = saved+1, packets+n
		case strings.HasSuffix(e.Name(), ".jsonl"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files, rows = files+1, rows+int64(bytes.Count(b, []byte("\n")))
		case strings.HasSuffix(e.Name(), ".parquet"):
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			st, _ := f.Stat()
			pf, err := parquet.OpenFile(f, st.Size())
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			files, rows = files+1, rows+pf.NumRows()
		default:
			return fmt.Errorf("%s: not a file kdissect should leave", path)
		}
	}
	fmt.Fprintf(w, "files: %d files of periods, all readable, %d rows (messages and notices; %s messages shown); %d saved pcapng files, all readable, %d packets; %s dropped by kernel\n",
		files, rows, counts[1], saved, packets, counts[2])
	return nil
}

// countPackets reads a capture file through and counts its packets.
func countPackets(path string) (int64, error) {
	r, err := capture.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	for {
		_, err := r.Next()
		var pe *capture.PacketError
		if errors.As(err, &pe) {
			return 0, err
		}
		if errors.Is(err, io.EOF) {
			return int64(r.Stats().Packets), nil
		}
		if err != nil {
			return 0, err
		}
	}
}
