package render_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kdissect/kdissect/internal/browsertest"
)

// TestReportInBrowser opens the doctor's report of captures with groups and several brokers in
// Chromium: the latency plot holds one mark per answered pair (counted from the JSON lines of
// the same run), the timeline one lane per group member (the member ids the group responses
// gave, or says it has none), no console error or refused style, and no request but the page itself.
func TestReportInBrowser(t *testing.T) {
	b := browsertest.Start(t)
	for _, name := range []string{"kgo-group-3brokers.pcap", "kgo-lag.pcap", "kgo-group-848.pcap"} {
		t.Run(name, func(t *testing.T) {
			run := runDoctor(t, name)
			path := filepath.Join(t.TempDir(), "report.html")
			if err := os.WriteFile(path, run.report(t, name), 0o644); err != nil {
				t.Fatal(err)
			}
			url := "file://" + path
			p := b.Open(t, url)
			var got struct {
				Marks, Lanes int
				Empty        bool
			}
			p.Eval(`(function () {
				var marks = 0;
				document.querySelectorAll('svg[data-plot^="latency-"] .mark').forEach(function (m) {
					marks += m.dataset.count ? Number(m.dataset.count) : 1;
				});
				return {marks: marks, lanes: document.querySelectorAll('svg[data-plot="timeline"] .lane').length,
					empty: document.querySelector('[data-empty="timeline"]') !== null};
			})()`, &got)
			if want := answeredPairs(t, run.json.Bytes()); got.Marks != want || want == 0 {
				t.Errorf("the latency plot draws %d answers, the JSON lines have %d", got.Marks, want)
			}
			if want := groupMembers(t, run.json.Bytes()); got.Lanes != want || got.Empty != (want == 0) {
				t.Errorf("the timeline draws %d lanes (empty %v), the group responses gave %d member ids", got.Lanes, got.Empty, want)
			}
			p.Check(onlyItself(url))
		})
	}
}

// TestReportScreenshots takes the pictures of docs/doctor.md, with -update (otherwise into a
// temporary directory: they are looked at, not compared).
func TestReportScreenshots(t *testing.T) {
	dir := t.TempDir()
	if updating() {
		dir = filepath.Join("..", "docs")
	}
	b := browsertest.Start(t)
	var p *browsertest.Page
	// Each as high as its section, so that the page scrolls it to the top.
	for _, shot := range []struct {
		capture, section string
		height           int64
	}{
		{"kgo-group-3brokers.pcap", "latency", 660},
		{"kgo-lag.pcap", "lag", 380},
		{"kgo-group-3brokers.pcap", "timeline", 300},
		{"kgo-group-3brokers.pcap", "throughput", 380},
	} {
		path := filepath.Join(t.TempDir(), "report.html")
		if err := os.WriteFile(path, runDoctor(t, shot.capture).report(t, shot.capture), 0o644); err != nil {
			t.Fatal(err)
		}
		url := "file://" + path
		if p == nil {
			p = b.Open(t, url)
		} else {
			p.Navigate(url)
		}
		p.Viewport(1040, shot.height)
		p.Eval(`document.getElementById('`+shot.section+`').scrollIntoView(); true`, nil)
		p.Check(onlyItself(url))
		p.Screenshot(filepath.Join(dir, "doctor-"+shot.section+".png"), 1040, shot.height)
	}
}
