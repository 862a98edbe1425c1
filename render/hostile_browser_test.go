package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/internal/hostile"
	"github.com/kdissect/kdissect/render"
)

// TestHostilePage opens the page of a capture whose strings carry markup, escape sequences
// and controls in every place (package hostile) in Chromium: no dialog, no script run, no
// request but the page, no element made by the strings, and every string shown as text.
func TestHostilePage(t *testing.T) {
	b := browsertest.Start(t)
	data, err := hostile.Capture(hostile.String)
	if err != nil {
		t.Fatal(err)
	}
	capture := filepath.Join(t.TempDir(), "hostile.pcap")
	if err := os.WriteFile(capture, data, 0o644); err != nil {
		t.Fatal(err)
	}
	on9092 := func(port uint16) bool { return port == 9092 }
	// A finding whose words carry the strings, as a title names a client id or a group.
	evil := doctor.Finding{ID: "hostile", Title: hostile.String("finding title"), Why: hostile.String("finding why"),
		Advice: hostile.String("finding advice"), Evidence: doctor.Evidence{Frames: []int{4}, Streams: []int{0}, Count: 1}}
	path, fs := doctoredPage(t, capture, on9092, evil)
	url := "file://" + path
	p := b.Open(t, url)
	hostile.CheckPage(t, p, len(jsonLinesOf(t, capture, on9092)))
	var panel string
	p.Eval(`(function () {
	  var f = document.getElementById('findings');
	  f.open = true;
	  f.querySelectorAll('.finding').forEach(function (d) { d.open = true; });
	  return f.innerText;
	})()`, &panel)
	for _, place := range []string{"finding title", "finding why", "finding advice"} {
		if !strings.Contains(panel, place+": ") {
			t.Errorf("the panel does not show the %s", place)
		}
	}
	if n := strings.Count(panel, "<img src=x onerror=alert(2)>"); n != 3 {
		t.Errorf("the panel shows the markup of %d of the finding's 3 strings as text", n)
	}
	if len(fs) < 2 {
		t.Errorf("the panel has %d findings: the doctor found none in the hostile capture", len(fs))
	}
	p.Check(onlyItself(url))
}

// jsonLinesOf are the message lines of a capture's JSON output (notices left out).
func jsonLinesOf(t *testing.T, capture string, isServerPort func(uint16) bool) [][]byte {
	t.Helper()
	var lines [][]byte
	for _, l := range bytes.Split(dissectFile(t, capture, "json", render.Options{}, dissect.CodecOptions{}, isServerPort), []byte("\n")) {
		if len(l) > 0 && !bytes.HasPrefix(l, []byte(`{"kind":"notice"`)) {
			lines = append(lines, l)
		}
	}
	return lines
}
