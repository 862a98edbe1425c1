package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// TestPageStatsPanel opens the page of a capture dissected with --stats's analyses: its panel
// of tables, once opened, shows each row of the table latency with the cells that the text
// table draws.
func TestPageStatsPanel(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, _ := render.LookupFormat("html")
	stats := analysis.Registered()
	sel := dissect.SelectAll()
	sel.Stats = true
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: sel, Keep: stats.Reads()})
	if err != nil {
		t.Fatal(err)
	}
	c := dissect.NewCodec(set, plan, dissect.CodecOptions{})
	var page bytes.Buffer
	out := f.New(&page, render.Options{MaxBytes: 64})
	p, err := dissect.New(dissect.Config{Codec: c, Out: out, Plan: plan, Select: sel, Detect: true, Workers: 1, Stats: stats})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("..", "pcaps", "kgo-group-3brokers.pcap")
	if _, err := p.File(file); err != nil {
		t.Fatal(err)
	}
	tables := stats.Tables()
	out.(render.TablePage).Tables(tables)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// The rows as the text table draws them: "│ a │ b │".
	var text bytes.Buffer
	for _, tb := range tables {
		if tb.Name == "latency" {
			if err := render.WriteTables(&text, []model.Table{tb}, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	var want [][]string
	for i, l := range strings.Split(text.String(), "\n") {
		if !strings.HasPrefix(l, "│") || i <= 2 { // the title, the border, the headings
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(l, "│"), "│") {
			cells = append(cells, strings.TrimSpace(c))
		}
		want = append(want, cells)
	}
	if len(want) == 0 {
		t.Fatalf("the capture makes no latency row:\n%s", text.String())
	}

	path := filepath.Join(t.TempDir(), "stats.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b := browsertest.Start(t)
	url := "file://" + path
	pg := b.Open(t, url)
	var shown struct {
		Closed  bool // shown while the panel is closed
		Visible bool
		Rows    [][]string
	}
	pg.Eval(`(function () {
		var d = document.getElementById('stats'), tb = d.querySelector('table[data-table="latency"]');
		var closed = d.open || tb.checkVisibility();
		d.querySelector('summary').click();
		var r = tb.getBoundingClientRect();
		return {closed: closed, visible: tb.checkVisibility() && r.height > 0 && r.width > 0,
			rows: Array.prototype.map.call(tb.querySelectorAll('tbody tr'), function (tr) {
				return Array.prototype.map.call(tr.cells, function (c) { return c.innerText; });
			})};
	})()`, &shown)
	if shown.Closed || !shown.Visible {
		t.Errorf("the panel's table: shown while closed %v, visible once opened %v", shown.Closed, shown.Visible)
	}
	if len(shown.Rows) != len(want) {
		t.Fatalf("the panel shows %d rows of latency, the text table %d", len(shown.Rows), len(want))
	}
	for i := range want {
		if strings.Join(shown.Rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d: the panel shows %q, the text table %q", i, shown.Rows[i], want[i])
		}
	}
	pg.Check(onlyItself(url))
}
