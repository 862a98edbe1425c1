package render

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/kdissect/kdissect/model"
)

// wideTable is a table of n rows whose cells are long enough that a bordered table of them is
// wider than TableWidth.
func wideTable(n int) model.Table {
	t := model.Table{Name: "wide", Title: "A wide table", Columns: []model.Column{
		{Name: "stream", Kind: model.Int}, {Name: "client_id", Head: "client id", Kind: model.String},
		{Name: "topics", Kind: model.Strings}, {Name: "latency_us", Head: "latency", Kind: model.Duration},
	}}
	for i := range n {
		t.AddRow(int64(i), strings.Repeat("client-", 6)+string(rune('a'+i)),
			[]string{"orders-" + strings.Repeat("x", 30), "payments-" + strings.Repeat("y", 30)}, time.Duration(i+1)*1500*time.Microsecond)
	}
	return t
}

// TestWriteTablesWidth: a table that fits is drawn bordered; one that does not is written row
// by row, every line within the width unless a single cell is wider, and every cell whole on
// one line.
func TestWriteTablesWidth(t *testing.T) {
	narrow := model.Table{Name: "narrow", Title: "A narrow table", Columns: []model.Column{{Name: "n", Kind: model.Int}}}
	narrow.AddRow(int64(7))
	titled := narrow
	titled.Title = strings.Repeat("A narrow table under a long title ", 5)
	tests := []struct {
		name     string
		table    model.Table
		width    int
		bordered bool
	}{
		{"narrow", narrow, TableWidth, true},
		{"narrow, long title", titled, TableWidth, true}, // the title wraps on its own
		{"wide, any width", wideTable(3), 0, true},
		{"wide", wideTable(3), TableWidth, false},
		{"wide, no row", wideTable(0), TableWidth, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteTables(&b, []model.Table{tt.table}, tt.width); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if got := strings.Contains(out, "┌"); got != tt.bordered {
				t.Fatalf("bordered %v, want %v:\n%s", got, tt.bordered, out)
			}
			heads, rows := textCells(tt.table)
			lines := strings.Split(out, "\n")
			for _, l := range lines[1:] { // the title wraps as text does
				if tt.width > 0 && twwidth.Width(l) > tt.width {
					t.Errorf("line of %d columns, wider than %d: %q", twwidth.Width(l), tt.width, l)
				}
			}
			if tt.bordered {
				return
			}
			for _, r := range rows {
				for j, c := range r {
					if !containsLine(lines, heads[j], c) {
						t.Errorf("cell %q of column %q not whole on a line of its own:\n%s", c, heads[j], out)
					}
				}
			}
		})
	}
}

// containsLine reports whether a line holds heading head and then cell, and nothing else.
func containsLine(lines []string, head, cell string) bool {
	for _, l := range lines {
		if h, c, ok := strings.Cut(strings.TrimSpace(l), "  "); ok && h == head && strings.TrimSpace(c) == cell {
			return true
		}
	}
	return false
}

// TestWriteTablesJSON: one line per row, the columns in order, durations in microseconds,
// optional nil values left out, unknown ones null, columns kept to text left out.
func TestWriteTablesJSON(t *testing.T) {
	tb := model.Table{Name: "t", Columns: []model.Column{
		{Name: "name", Kind: model.String}, {Name: "p50_us", Kind: model.Duration, Optional: true},
		{Name: "max_us", Kind: model.Duration}, {Name: "shown", Kind: model.String, Only: model.Text},
		{Name: "topics", Kind: model.Strings}, {Name: "at", Kind: model.Time, Only: model.JSON},
	}}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("x", 3600))
	tb.AddRow("a<b", 1500*time.Microsecond, 2*time.Millisecond, "1.500", []string{"x"}, at)
	tb.AddRow("c", nil, nil, "", []string(nil), at)
	var b bytes.Buffer
	if err := WriteTablesJSON(&b, []model.Table{tb}); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"kind": "stats", "table": "t", "name": "a<b", "p50_us": 1500.0, "max_us": 2000.0, "topics": []any{"x"}, "at": "2026-01-02T02:04:05.000006Z"},
		{"kind": "stats", "table": "t", "name": "c", "max_us": nil, "topics": []any{}, "at": "2026-01-02T02:04:05.000006Z"},
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, l := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatal(err)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want[i])
		if !bytes.Equal(g, w) {
			t.Errorf("line %d: %s, want %s", i, l, w)
		}
	}
	if !strings.HasPrefix(lines[0], `{"kind":"stats","table":"t","name":"a<b","p50_us":1500,`) {
		t.Errorf("not in column order, or HTML escaped: %s", lines[0])
	}
}

func ExampleWriteTables() {
	t := model.Table{Name: "latency", Title: "Latency per API (ms)", Columns: []model.Column{
		{Name: "api_name", Head: "API", Kind: model.String}, {Name: "count", Kind: model.Int},
		{Name: "latency_max_us", Head: "max", Kind: model.Duration},
	}}
	t.AddRow("Fetch", int64(8), 101379*time.Microsecond)
	t.AddRow("Produce", int64(1), 798*time.Microsecond)
	WriteTables(os.Stdout, []model.Table{t}, TableWidth)
	WriteTablesJSON(os.Stdout, []model.Table{t})
	// Output:
	// Latency per API (ms)
	// ┌─────────┬───────┬─────────┐
	// │ API     │ count │ max     │
	// ├─────────┼───────┼─────────┤
	// │ Fetch   │ 8     │ 101.379 │
	// │ Produce │ 1     │ 0.798   │
	// └─────────┴───────┴─────────┘
	// {"kind":"stats","table":"latency","api_name":"Fetch","count":8,"latency_max_us":101379}
	// {"kind":"stats","table":"latency","api_name":"Produce","count":1,"latency_max_us":798}
}
