package render_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/internal/testutil"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// doctorRun is what a run of the doctor over a capture told it, and the capture's messages as
// the JSON lines write them.
type doctorRun struct {
	findings []doctor.Finding
	series   doctor.Series
	json     bytes.Buffer
}

// feed is a renderer that tells the doctor each message and notice, and writes them as JSON
// lines too (so that a test compares the report with an independent count).
type feed struct {
	d    *doctor.Doctor
	json render.Renderer
}

func (f feed) Message(e *model.Entry) error { f.d.Add(e); return f.json.Message(e) }
func (f feed) Notice(n *model.Notice) error { f.d.Notice(n); return f.json.Notice(n) }
func (f feed) Close() error                 { return f.json.Close() }
func (f feed) Flush() error                 { return f.json.Flush() }

// runDoctor runs the doctor over pcaps/name, as kdissect doctor does.
func runDoctor(t *testing.T, name string) *doctorRun {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	d := doctor.New()
	f, _ := render.LookupFormat("json")
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: dissect.SelectAll(), Keep: d.Reads()})
	if err != nil {
		t.Fatal(err)
	}
	plan.Facts = true
	run := &doctorRun{}
	out := feed{d, f.New(&run.json, render.Options{})}
	p, err := dissect.New(dissect.Config{Codec: dissect.NewCodec(set, plan, dissect.CodecOptions{}), Out: out, Plan: plan,
		Select: dissect.SelectAll(), Detect: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.File(filepath.Join("..", "pcaps", name)); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	run.findings, run.series = d.Findings(), d.Series()
	return run
}

// report writes the report of a doctor's run.
func (r *doctorRun) report(t *testing.T, title string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := render.Report(&b, title, r.findings, r.series); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReportGolden: the report of a capture with a group, three brokers and a finding.
func TestReportGolden(t *testing.T) {
	run := runDoctor(t, "kgo-group-3brokers.pcap")
	testutil.Golden(t, filepath.Join("testdata", "report-kgo-group-3brokers.html"), run.report(t, "kgo-group-3brokers.pcap"), updating())
}

// TestReportEmpty: a capture without Kafka makes a report whose every picture says why it is
// empty, and no findings.
func TestReportEmpty(t *testing.T) {
	page := string(runDoctor(t, "other-http.pcap").report(t, "other-http.pcap"))
	for _, want := range []string{"No findings", `data-empty="latency"`, `data-empty="lag"`, `data-empty="timeline"`, `data-empty="throughput"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the report of a capture without Kafka lacks %s", want)
		}
	}
	if strings.Contains(page, "<svg") {
		t.Error("the report of a capture without Kafka draws a plot")
	}
}

// TestReportInert: a report keeps strings from the wire (and the title) text: no element,
// attribute or control character of theirs gets through.
func TestReportInert(t *testing.T) {
	run := runDoctor(t, "kgo-group-3brokers.pcap")
	hostile := `<script>alert(1)</script>"' onload=x` + "\x1b[2J\u202e"
	for i := range run.findings {
		run.findings[i].Title += hostile
	}
	run.series.Latency.Add(hostile, run.series.First, 1)
	run.series.Events = append(run.series.Events, run.series.Events[0])
	run.series.Events[len(run.series.Events)-1].Member = hostile
	run.series.Events[len(run.series.Events)-1].Group = hostile
	page := string(run.report(t, hostile))
	for _, bad := range []string{"<script", `" onload`, "\x1b", "\u202e"} {
		if strings.Contains(page, bad) {
			t.Errorf("the report holds %q", bad)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&#39; onload=x\\x1b[2J\\u202e") {
		t.Error("the hostile string is not shown escaped")
	}
}

// answeredPairs counts the responses of the JSON lines that have a latency: the pairs the
// latency plot draws.
func answeredPairs(t *testing.T, lines []byte) int {
	n := 0
	for _, l := range bytes.Split(bytes.TrimSpace(lines), []byte("\n")) {
		var m struct {
			Kind    string
			Latency *int64 `json:"latency_us"`
		}
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		if m.Kind == "response" && m.Latency != nil {
			n++
		}
	}
	return n
}

// groupMembers counts the member ids the JSON lines' group responses gave without error: a
// JoinGroup's MemberId, or a group heartbeat's.
func groupMembers(t *testing.T, lines []byte) int {
	members := map[string]bool{}
	for _, l := range bytes.Split(bytes.TrimSpace(lines), []byte("\n")) {
		var m struct {
			Kind    string
			APIName string `json:"api_name"`
			Fields  []struct {
				Name  string
				Value any
			}
		}
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		if m.Kind != "response" || !regexp.MustCompile(`^(JoinGroup|ConsumerGroupHeartbeat)$`).MatchString(m.APIName) {
			continue
		}
		id, ok := "", true
		for _, f := range m.Fields {
			switch f.Name {
			case "ErrorCode":
				ok = f.Value == 0.0
			case "MemberId":
				id, _ = f.Value.(string)
			}
		}
		if ok && id != "" {
			members[id] = true
		}
	}
	return len(members)
}

// updating reports whether the run rewrites golden files (-update, the package's flag).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}
