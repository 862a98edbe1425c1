package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/render"
)

func pcapPath(name string) string { return filepath.Join("..", "..", "pcaps", name) }

// recorder is a renderer that records what the runner tells it besides the messages.
type recorder struct {
	render.Renderer
	files  []string
	starts []time.Time
}

func (r *recorder) File(name string) error { r.files = append(r.files, name); return nil }
func (r *recorder) SetStart(t time.Time)   { r.starts = append(r.starts, t) }

// testRunner is the runner of a summary run into out, with stdin, save, the progress lines of
// progress (nil: none) and a limit of messages (0: none).
func testRunner(t *testing.T, out render.Renderer, stdin io.Reader, save *dissect.Save,
	progress func(string) (func(read, size int64, packets int), func()), limit int) *runner {
	t.Helper()
	c := Common{Format: "summary", APIKey: -1}
	cc, plan, err := c.CodecPlan(io.Discard, dissect.SelectAll(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ports, err := capture.ParsePorts([]string{"9092-9094,19092,36333"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := dissect.Config{Codec: cc, Out: out, Plan: plan, Select: dissect.SelectAll(), IsServerPort: ports.Has, Limit: limit}
	run := newRunner(&cfg, stdin, save, progress)
	if run.p, err = dissect.New(cfg); err != nil {
		t.Fatal(err)
	}
	return run
}

// TestRunnerFiles: with several captures the output is told where each begins and that times
// count from the earliest first packet; one capture is told neither; a run stopped at its limit
// reads no later capture; stdin is read once; each capture gets a progress line of its own.
func TestRunnerFiles(t *testing.T) {
	late, early := pcapPath("kgo-transactions.pcap"), pcapPath("kgo-admin.pcapng")
	first := func(name string) time.Time {
		ft, ok := capture.FirstTime(name)
		if !ok {
			t.Fatalf("%s: no first packet", name)
		}
		return ft
	}
	if !first(early).Before(first(late)) {
		t.Fatalf("%s does not start before %s", early, late)
	}
	data, err := os.ReadFile(early)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		files  []string
		limit  int
		told   []string    // the files the output is told of
		starts []time.Time // SetStart's calls before the packets' own
		lines  []string    // the progress lines started
		fails  []string    // what the errors say
	}{
		{name: "several", files: []string{late, early}, told: []string{late, early}, starts: []time.Time{first(early)}, lines: []string{late, early}},
		{name: "one", files: []string{late}, lines: []string{late}},
		{name: "limit", files: []string{late, early}, limit: 2, told: []string{late}, starts: []time.Time{first(early)}, lines: []string{late}},
		{name: "stdin twice", files: []string{"-", "-"}, told: []string{"-", "-"}, lines: []string{"-"}, fails: []string{"stdin (-) given twice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &recorder{Renderer: render.Discard{}}
			var lines []string
			ended := 0
			progress := func(name string) (func(read, size int64, packets int), func()) {
				lines = append(lines, name)
				return func(int64, int64, int) {}, func() { ended++ }
			}
			run := testRunner(t, out, bytes.NewReader(data), nil, progress, tc.limit)
			var fails []string
			if err := run.files(tc.files, func(err error) { fails = append(fails, err.Error()) }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(out.files, tc.told) {
				t.Errorf("output told of files %q, want %q", out.files, tc.told)
			}
			if len(out.starts) < len(tc.starts) || !slices.Equal(out.starts[:len(tc.starts)], tc.starts) {
				t.Errorf("SetStart first %v, want %v", out.starts[:min(len(out.starts), len(tc.starts)+1)], tc.starts)
			}
			if !slices.Equal(lines, tc.lines) || ended != len(lines) {
				t.Errorf("progress lines %q (%d ended), want %q", lines, ended, tc.lines)
			}
			if len(fails) != len(tc.fails) || len(fails) > 0 && !strings.Contains(fails[0], tc.fails[0]) {
				t.Errorf("errors %q, want %q", fails, tc.fails)
			}
		})
	}
}

// TestRunnerSaveStdin: with -w, a capture on stdin is kept while it is read, and its packets
// written as a file's would be.
func TestRunnerSaveStdin(t *testing.T) {
	file := pcapPath("kgo-group-3brokers.pcap")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var shown, saved [2]string
	for i, name := range []string{file, "-"} {
		path := filepath.Join(dir, "saved.pcapng")
		save, err := dissect.CreateSave(path, []string{file})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		run := testRunner(t, render.NewSummary(&out, render.TimeRel), bytes.NewReader(data), save, nil, 0)
		if err := run.files([]string{name}, func(err error) { t.Error(err) }); err != nil {
			t.Fatal(err)
		}
		if err := run.p.Close(); err != nil {
			t.Fatal(err)
		}
		if err := save.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		shown[i], saved[i] = out.String(), string(b)
	}
	if shown[0] != shown[1] || len(saved[0]) < 1000 || saved[0] != saved[1] {
		t.Errorf("from stdin: %d bytes written, from the file %d; shown the same: %v", len(saved[1]), len(saved[0]), shown[0] == shown[1])
	}
}
