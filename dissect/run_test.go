package dissect

// The tests of this package run the pipeline as kdissect does: testRun holds what its flags
// would say, and dissect runs capture files through a pipeline so configured.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
	"github.com/kdissect/kdissect/render"
)

func pcapPath(name string) string { return filepath.Join("..", "pcaps", name) }

// captures lists the capture files shipped in pcaps/.
func captures(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*.pcap", "*.pcapng", "*.pcap.gz"} {
		m, err := filepath.Glob(pcapPath(pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no captures in pcaps/")
	}
	return files
}

// keylogOf returns the TLS secrets shipped beside a capture file (x.keylog for x.pcap,
// x.pcapng or x.pcap.gz), or "" when there are none.
func keylogOf(file string) string {
	base := strings.TrimSuffix(file, ".gz")
	if k := strings.TrimSuffix(base, filepath.Ext(base)) + ".keylog"; fileExists(k) {
		return k
	}
	return ""
}

// testRun is a run of the pipeline as kdissect's flags would ask for it.
type testRun struct {
	format string // a name in render.Formats; "" is diagram, kdissect's default
	hex    bool
	// ports are the broker ports ("9092-9094"); without them, Kafka is detected on any port.
	ports  string
	keylog string
	stats  bool
	// workers and perRound are Config's Workers and RoundPackets; workers 0 is kdissect's
	// default, one per core up to 8.
	workers, perRound int
	// sel changes the selection from every message (the selection flags: --api, --topic, ...).
	sel func(s *Selection)
	// showSecrets is --show-secrets; noCut is --max-bytes 0 (values are cut at 64 bytes
	// otherwise, kdissect's default).
	showSecrets, noCut bool
	// save is -w: the file the packets of the messages shown are written to; limit is -c.
	save  string
	limit int
	// spill is Plan.SpillOver where the plan allows frames outside the heap (-1: never).
	spill int
	// time is -t; wrap, when set, is given the renderer and returns the one the run writes to.
	time render.TimeFormat
	wrap func(render.Renderer) render.Renderer
	// big and held, when big is set, replace the writers' bigMessage and heldBytes.
	big, held int
}

// withWorkers returns the run with workers and perRound set.
func (r testRun) withWorkers(workers, perRound int) testRun {
	r.workers, r.perRound = workers, perRound
	return r
}

// dissect runs files through the pipeline and returns what kdissect would print: the output
// (statistics after the messages), the warnings and errors, and the exit status (1 when a
// file could not be read to its end).
func (r testRun) dissect(t testing.TB, files ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = r.run(t, &out, &errOut, files...)
	return out.String(), errOut.String(), code
}

// formatCodec finds the format named ("" is diagram, kdissect's default) and builds the codec
// it needs from the built-in definitions, as kdissect's flags would.
func formatCodec(t testing.TB, format string, showSecrets bool) (render.Format, *codec.Codec) {
	t.Helper()
	f, _, c := formatPlan(t, format, showSecrets, SelectAll(), nil)
	return f, c
}

// formatPlan finds the format named and makes the plan of a run of it with sel, and its codec.
func formatPlan(t testing.TB, format string, showSecrets bool, sel Selection, keep []codec.Kept) (render.Format, Plan, *codec.Codec) {
	t.Helper()
	name := format
	if name == "" {
		name = render.Formats()[0].Name
	}
	f, ok := render.LookupFormat(name)
	if !ok {
		t.Fatalf("no format %q", format)
	}
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(f, Asks{Select: sel, Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	return f, plan, NewCodec(set, plan, CodecOptions{MaxDecompressed: 64 << 20, ShowSecrets: showSecrets})
}

// planOf is the plan of a run whose format reads what needs says, with sel.
func planOf(t testing.TB, needs render.Needs, sel Selection) Plan {
	t.Helper()
	plan, err := NewPlan(render.Format{Needs: needs, Records: "full"}, Asks{Select: sel})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// fileFrom runs the capture read from in through p, as kdissect runs stdin.
func fileFrom(p *Pipeline, in io.Reader, name string) (packets int, err error) {
	r, err := capture.NewReader(in, name)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return p.Read(r, name)
}

// run is dissect writing to w and errW.
func (r testRun) run(t testing.TB, w, errW io.Writer, files ...string) (code int) {
	t.Helper()
	extra := Config{Limit: r.limit}
	var save *Save
	var stats analysis.Set
	if r.stats {
		stats = analysis.Registered()
		extra.Stats = stats
	}
	if r.save != "" {
		out, err := os.Create(r.save)
		if err != nil {
			t.Fatal(err)
		}
		save = NewSave(out)
		extra.OnShow = save.Note
		defer func() {
			if err := save.Close(); err != nil {
				t.Fatal(err)
			}
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
		}()
	}
	p, f := r.pipeline(t, w, errW, extra)
	for _, file := range files {
		if p.Stopped() {
			break // as kdissect reads them: up to Limit
		}
		if _, err := p.File(file); err != nil {
			fmt.Fprintf(errW, "kdissect: %v\n", err)
			code = 1
		}
		if save != nil {
			saveFile(t, save, file) // as kdissect does: each capture is read again for -w
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if stats != nil {
		if f.Stats == nil && !f.Silent {
			fmt.Fprintln(w)
		}
		if err := f.WriteStats(w, stats.Tables(), 0); err != nil {
			t.Fatal(err)
		}
	}
	return code
}

// saveFile reads a capture again for save to write the packets of the messages shown.
func saveFile(t testing.TB, save *Save, file string) {
	t.Helper()
	r, err := capture.Open(file)
	if err != nil {
		return // as the first reading found
	}
	defer r.Close()
	if err := save.Write(r); err != nil {
		t.Fatal(err)
	}
}

// pipeline makes the pipeline of the run, writing to w and errW; extra gives the fields of
// Config that runs do not (Limit, Stop, Batch, OnShow, OnNotice).
func (r testRun) pipeline(t testing.TB, w, errW io.Writer, extra Config) (*Pipeline, render.Format) {
	t.Helper()
	sel := SelectAll()
	if r.sel != nil {
		r.sel(&sel)
	}
	sel.Stats = sel.Stats || r.stats
	var keep []codec.Kept
	if set, ok := extra.Stats.(analysis.Set); ok {
		keep = set.Reads()
	}
	f, plan, c := formatPlan(t, r.format, r.showSecrets, sel, keep)
	ports, err := capture.ParsePorts([]string{r.ports})
	if err != nil {
		t.Fatal(err)
	}
	if err := sel.Check(c); err != nil {
		t.Fatal(err)
	}
	maxBytes := 64
	if r.noCut {
		maxBytes = 0
	}
	switch {
	case r.spill < 0:
		plan.SpillOver = 0
	case r.spill > 0 && plan.SpillOver > 0:
		plan.SpillOver = max(r.spill, f.Needs.HoldsUpTo) // never a frame the format still reads
	}
	out := f.New(w, render.Options{Hex: r.hex, MaxBytes: maxBytes, Time: r.time})
	if r.wrap != nil {
		out = r.wrap(out)
	}
	cfg := Config{Codec: c, Out: out, Plan: plan, Select: sel,
		IsServerPort: ports.Has, Detect: r.ports == "", Workers: r.workers, RoundPackets: r.perRound,
		Warn: func(err error) { fmt.Fprintf(errW, "kdissect: %v\n", err) }, Limit: extra.Limit, Stop: extra.Stop, Stats: extra.Stats, Batch: extra.Batch, OnShow: extra.OnShow, OnNotice: extra.OnNotice}
	if cfg.Workers == 0 {
		cfg.Workers = min(runtime.GOMAXPROCS(0), 8)
	}
	if r.keylog != "" {
		if cfg.Keys, err = tlsdec.OpenKeyLog(r.keylog, false); err != nil {
			t.Fatal(err)
		}
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.writeLimits.big, p.writeLimits.held = r.big, r.held
	return p, f
}

// mustDissect is dissect for a run that must succeed.
func (r testRun) mustDissect(t testing.TB, files ...string) (stdout, stderr string) {
	t.Helper()
	out, errOut, code := r.dissect(t, files...)
	if code != 0 {
		t.Fatalf("%+v on %v: exit %d: %s", r, files, code, errOut)
	}
	return out, errOut
}

// clip cuts two strings that differ to the neighbourhood of their first difference.
func clip(a, b string) (string, string) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-80)
	cut := func(s string) string {
		if from > len(s) {
			return ""
		}
		return strings.TrimSpace(s[from:min(len(s), i+120)])
	}
	return cut(a), cut(b)
}
