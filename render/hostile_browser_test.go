package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/browsertest"
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
	page := dissectFile(t, capture, "html", render.Options{MaxBytes: 64}, dissect.CodecOptions{}, on9092)
	path := filepath.Join(t.TempDir(), "hostile.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + path
	p := b.Open(t, url)
	hostile.CheckPage(t, p, len(jsonLinesOf(t, capture, on9092)))
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
