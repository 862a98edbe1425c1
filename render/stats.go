package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/kdissect/kdissect/internal/inert"
	"github.com/kdissect/kdissect/model"
)

// The tables of --stats (package analysis makes them), as each output writes them: text tables
// (WriteTables), JSON lines (WriteTablesJSON), and a panel of the page (HTML.Tables).

// TableWidth is the width that tables written to a terminal fit in: a wider table is written
// row by row (see WriteTables).
const TableWidth = 120

// WriteTables writes tables as text, each under its title, a blank line between them. A table
// whose text is wider than width columns (0: any width) is written row by row instead, each
// row a block of "heading  value" lines, so that no cell is ever cut.
func WriteTables(w io.Writer, ts []model.Table, width int) error {
	first := true
	for _, t := range ts {
		if t.HideEmpty && len(t.Rows) == 0 {
			continue
		}
		if !first {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		first = false
		if err := writeTable(w, t, width); err != nil {
			return err
		}
	}
	return nil
}

// writeTable writes one table, bordered, or row by row when it is too wide.
func writeTable(w io.Writer, t model.Table, width int) error {
	heads, rows := textCells(t)
	var b bytes.Buffer
	b.WriteString(t.Title + "\n")
	titled := b.Len() // the title may wrap; the table's own lines must fit
	numeric := false
	if cols := textColumns(t); len(cols) > 0 {
		numeric = t.Columns[cols[0]].Kind == model.Int
	}
	tw := newTable(&b, len(heads), numeric)
	tw.Header(heads)
	for _, r := range rows {
		if err := tw.Append(r); err != nil {
			return err
		}
	}
	if err := tw.Render(); err != nil {
		return err
	}
	if width <= 0 || widest(b.String()[titled:]) <= width {
		_, err := w.Write(b.Bytes())
		return err
	}
	return writeByRow(w, t.Title, heads, rows)
}

// writeByRow writes a table as blocks, one per row, each line a heading and its cell.
func writeByRow(w io.Writer, title string, heads []string, rows [][]string) error {
	pad := 0
	for _, h := range heads {
		pad = max(pad, twwidth.Width(inertCells([]string{h})[0]))
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(title + "\n")
	if len(rows) == 0 {
		bw.WriteString("  (no rows)\n")
	}
	for i, r := range rows {
		fmt.Fprintf(bw, "-- row %d of %d\n", i+1, len(rows))
		r = inertCells(r)
		for j, h := range inertCells(heads) {
			bw.WriteString(strings.TrimRight(fmt.Sprintf("  %s%s  %s", h, strings.Repeat(" ", pad-twwidth.Width(h)), r[j]), " ") + "\n")
		}
	}
	return bw.Flush()
}

// widest is the width of the widest line of s, in terminal columns.
func widest(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, twwidth.Width(l))
	}
	return n
}

// textColumns are the indexes of the columns text shows.
func textColumns(t model.Table) []int {
	var cols []int
	for i, c := range t.Columns {
		if c.In(model.Text) {
			cols = append(cols, i)
		}
	}
	return cols
}

// textCells are a table's headings and cells as text shows them.
func textCells(t model.Table) (heads []string, rows [][]string) {
	cols := textColumns(t)
	for _, i := range cols {
		c := t.Columns[i]
		heads = append(heads, cmpOr(c.Head, c.Name))
	}
	for _, r := range t.Rows {
		cells := make([]string, 0, len(cols))
		for _, i := range cols {
			cells = append(cells, textCell(t.Columns[i], rowValue(r, i)))
		}
		rows = append(rows, cells)
	}
	return heads, rows
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// rowValue is value i of row r, nil past its end.
func rowValue(r []any, i int) any {
	if i < len(r) {
		return r[i]
	}
	return nil
}

// textCell shows one value in text: durations in milliseconds to the microsecond, times in
// UTC, lists joined by commas, nil as "-" (or nothing in an optional column).
func textCell(c model.Column, v any) string {
	switch v := v.(type) {
	case nil:
		if c.Optional {
			return ""
		}
		return "-"
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case int32:
		return strconv.Itoa(int(v))
	case int16:
		return strconv.Itoa(int(v))
	case float64:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case time.Duration:
		return strconv.FormatFloat(float64(v.Microseconds())/1000, 'f', 3, 64)
	case time.Time:
		return v.UTC().Format("2006-01-02 15:04:05.000000")
	case []string:
		return strings.Join(v, ", ")
	case bool:
		if v {
			return "yes"
		}
		return "no"
	}
	return fmt.Sprint(v)
}

// WriteTablesJSON writes tables as JSON lines: one object per row, {"kind": "stats", "table":
// NAME, then the row's values under their columns' names}, durations as integer microseconds,
// times in RFC 3339 in UTC.
func WriteTablesJSON(w io.Writer, ts []model.Table) error {
	bw := bufio.NewWriter(w)
	out := &inertJSON{w: bw}
	var line, val bytes.Buffer
	enc := json.NewEncoder(&val)
	enc.SetEscapeHTML(false)
	value := func(v any) error {
		val.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		line.Write(bytes.TrimSuffix(val.Bytes(), []byte("\n")))
		return nil
	}
	for _, t := range ts {
		for _, r := range t.Rows {
			line.Reset()
			line.WriteString(`{"kind":"stats","table":`)
			if err := value(t.Name); err != nil {
				return err
			}
			for i, c := range t.Columns {
				v := jsonValue(rowValue(r, i))
				if !c.In(model.JSON) || v == nil && c.Optional {
					continue
				}
				line.WriteString(",")
				value(c.Name)
				line.WriteString(":")
				if err := value(v); err != nil {
					return fmt.Errorf("table %s, column %s: %w", t.Name, c.Name, err)
				}
			}
			line.WriteString("}\n")
			if _, err := out.Write(line.Bytes()); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// jsonValue is a table's value as JSON writes it: durations as integer microseconds, times in
// UTC, lists as arrays even when empty.
func jsonValue(v any) any {
	switch v := v.(type) {
	case time.Duration:
		return v.Microseconds()
	case time.Time:
		return v.UTC()
	case []string:
		if v == nil {
			return []string{} // a list, empty
		}
	}
	return v
}

// A TablePage is an output that shows tables on its page rather than after it: it is given
// them before it is closed.
type TablePage interface {
	Renderer
	Tables(ts []model.Table)
}

// writeTablesPanel writes tables as a panel of the page (none for no tables): a details
// element, closed, below the messages, each table under its title as text shows it.
func writeTablesPanel(w *bufio.Writer, ts []model.Table) {
	if len(ts) == 0 {
		return
	}
	w.WriteString("<details id=\"stats\" class=\"notices\"><summary>statistics (--stats)</summary>\n")
	for _, t := range ts {
		if t.HideEmpty && len(t.Rows) == 0 {
			continue
		}
		heads, rows := textCells(t)
		fmt.Fprintf(w, "<h3>%s</h3>\n<table data-table=\"%s\"><thead><tr>", html.EscapeString(inert.String(t.Title)), html.EscapeString(t.Name))
		for _, h := range heads {
			w.WriteString("<th>" + html.EscapeString(inert.String(h)) + "</th>")
		}
		w.WriteString("</tr></thead><tbody>\n")
		for _, r := range rows {
			w.WriteString("<tr>")
			for _, c := range r {
				w.WriteString("<td>" + html.EscapeString(inert.String(c)) + "</td>")
			}
			w.WriteString("</tr>\n")
		}
		w.WriteString("</tbody></table>\n")
	}
	w.WriteString("</details>\n")
}
