package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// newTable makes a table with the columns' alignment: text left, numbers right.
func newTable(w io.Writer, markdown bool, align []tw.Align) *tablewriter.Table {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	return tablewriter.NewTable(w, opts...)
}

// throughput is MB/s (10^6 bytes) and packets/s of a run on a capture.
func throughput(c captureInfo, d time.Duration) (mbps, pps float64) {
	s := d.Seconds()
	if s <= 0 {
		return 0, 0
	}
	return float64(c.size) / 1e6 / s, float64(c.packets) / s
}

// ratio writes a/b as "3.2×".
func ratio(a, b time.Duration) string {
	if a <= 0 || b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f×", a.Seconds()/b.Seconds())
}

// kdissectModeFor is the kdissect mode a tshark mode is compared with.
var kdissectModeFor = map[string]string{"one-line": "summary", "json": "json"}

// floorCountMode is the mode of the stricter floor, kbench floor -count.
const floorCountMode = "reassemble, bytes counted"

// renderResults prints the timing table. Ratios: each program's best wall time over the
// floor's, over the stricter floor's (bytes counted, not read), and tshark's over kdissect's in
// the matching mode (one-line vs summary, json vs json).
func renderResults(w io.Writer, results []*result, markdown bool) error {
	bestOf := map[string]measurement{}
	for _, r := range results {
		if m, ok := r.best(); ok {
			bestOf[r.prog.name+"/"+r.prog.mode] = m
		}
	}
	floor, haveFloor := bestOf["floor/read+decode+reassemble"]
	count, haveCount := bestOf["floor/"+floorCountMode]
	R, L := tw.AlignRight, tw.AlignLeft
	t := newTable(w, markdown, []tw.Align{L, L, R, R, R, R, R, R, R, R})
	t.Header("program", "mode", "wall (best)", "MB/s", "packets/s", "CPU", "peak RSS", "÷ floor", "÷ count floor", "tshark ÷ kdissect")
	for _, r := range results {
		m, ok := r.best()
		if !ok {
			if err := t.Append(r.prog.name, r.prog.mode, "FAILED", "", "", "", "", "", "", ""); err != nil {
				return err
			}
			continue
		}
		mbps, pps := throughput(r.file, m.wall)
		vsFloor, vsCount := "", ""
		if haveFloor && r.prog.name != "floor" {
			vsFloor = ratio(m.wall, floor.wall)
		}
		if haveCount && r.prog.name != "floor" {
			vsCount = ratio(m.wall, count.wall)
		}
		vsKd := ""
		if r.prog.name == "tshark" {
			if kd, ok := bestOf["kdissect/"+kdissectModeFor[r.prog.mode]]; ok {
				vsKd = ratio(m.wall, kd.wall) + " (" + kdissectModeFor[r.prog.mode] + ")"
			}
		}
		row := []string{r.prog.name, r.prog.mode,
			fmt.Sprintf("%.2f s", m.wall.Seconds()),
			fmt.Sprintf("%.1f", mbps),
			fmt.Sprintf("%.0f", pps),
			fmt.Sprintf("%.2f s", m.cpu.Seconds()),
			fmtMiB(m.rss), vsFloor, vsCount, vsKd}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// renderMemory prints wall time, CPU time and peak RSS on the capture and on the doubled
// capture.
func renderMemory(w io.Writer, single, double []*result, markdown bool) error {
	one := map[string]measurement{}
	for _, r := range single {
		if m, ok := r.best(); ok {
			one[r.prog.name+"/"+r.prog.mode] = m
		}
	}
	R, L := tw.AlignRight, tw.AlignLeft
	t := newTable(w, markdown, []tw.Align{L, L, R, R, R, R, R, R, R})
	t.Header("program", "mode", "wall ×1", "wall ×2", "CPU ×1", "CPU ×2", "peak RSS ×1", "peak RSS ×2", "RSS ×2 ÷ ×1")
	for _, r := range double {
		s, ok1 := one[r.prog.name+"/"+r.prog.mode]
		d, ok2 := r.best()
		if !ok1 || !ok2 {
			if err := t.Append(r.prog.name, r.prog.mode, "FAILED", "", "", "", "", "", ""); err != nil {
				return err
			}
			continue
		}
		row := []string{r.prog.name, r.prog.mode,
			fmt.Sprintf("%.2f s", s.wall.Seconds()),
			fmt.Sprintf("%.2f s", d.wall.Seconds()),
			fmt.Sprintf("%.2f s", s.cpu.Seconds()),
			fmt.Sprintf("%.2f s", d.cpu.Seconds()),
			fmtMiB(s.rss), fmtMiB(d.rss),
			fmt.Sprintf("%.2f", float64(d.rss)/float64(max(s.rss, 1)))}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// machine describes where the numbers were measured.
type machine struct {
	cpu     string
	cores   int
	memory  string
	kernel  string
	goVer   string
	tshark  string
	started time.Time
	load    string // /proc/loadavg's 1-minute average when the runs began
}

func describeMachine(ctx context.Context, withTshark bool) machine {
	m := machine{cpu: "unknown CPU", cores: runtime.NumCPU(), goVer: runtime.Version(), started: time.Now()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		m.cpu = cpuModel(f)
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				var kib int64
				fmt.Sscan(strings.TrimSpace(v), &kib)
				m.memory = fmt.Sprintf("%.1f GiB", float64(kib)/(1<<20))
			}
		}
		f.Close()
	}
	m.load = loadAverage()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(b))
	}
	if withTshark {
		m.tshark = tsharkVersion(ctx)
	}
	return m
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func (m machine) String() string {
	s := fmt.Sprintf("machine: %s, %d cores, %s RAM, Linux %s, %s, %s", m.cpu, m.cores, m.memory, m.kernel, runtime.GOARCH, m.goVer)
	if m.tshark != "" {
		s += "; " + m.tshark
	}
	s += "; " + m.started.Format("2006-01-02")
	if m.load != "" {
		s += "; load average " + m.load + " when the runs began, " + loadAverage() + " at the end"
	}
	return s
}

// loadAverage is the 1-minute load average: other work on the machine skews wall times
// (the CPU column less so).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// tsharkVersion is the first line of tshark --version on standard output (its warning about
// running as root goes to standard error).
func tsharkVersion(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tshark", "--version").Output()
	if err != nil {
		return "tshark --version failed: " + err.Error()
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSuffix(strings.TrimSpace(line), ".")
}
