package render

import (
	"io"
	"unicode/utf8"

	"github.com/kdissect/kdissect/internal/inert"
)

// ANSI styles. Only the diagram colours its output, and only when DiagramOptions.Color is set.
const (
	styleReset  = "\x1b[0m"
	styleBold   = "\x1b[1m"
	styleDim    = "\x1b[2m"
	styleNumber = "\x1b[36m"   // cyan
	styleString = "\x1b[32m"   // green
	styleError  = "\x1b[1;31m" // bold red
	styleWarn   = "\x1b[33m"   // yellow
	styleNote   = "\x1b[35m"   // magenta
)

// cell is one column of a row: text, and the style it is drawn in when colours are on.
type cell struct {
	text  string
	style string
}

// column describes one column of a grid: its separator from the previous column and whether it
// is right-aligned.
type column struct {
	sep   string
	right bool
}

// row is one line of a grid: its cells' texts one after another in text, cell i ending at
// ends[i] and drawn in styles[i]. A note row's last cell is a note: it starts at the column of
// its index, ignores the columns from there on and widens none (notes between the fields).
type row struct {
	text   []byte
	ends   []int
	styles []string
	note   bool
}

// cells is the number of cells in r.
func (r *row) cells() int { return len(r.ends) }

// cell is the text of cell i, as it was given (not yet under package inert's rule).
func (r *row) cell(i int) []byte {
	start := 0
	if i > 0 {
		start = r.ends[i-1]
	}
	return r.text[start:r.ends[i]]
}

func (r *row) reset() {
	r.text, r.ends, r.styles, r.note = r.text[:0], r.ends[:0], r.styles[:0], false
}

// grid lines up rows of cells in columns. The last column is never padded and no line ends in
// spaces, so that output is stable for golden files. Every cell and note is shown under
// package inert's rule: a value, a name from a definition file, a note, whatever its source.
//
// A row is made in place: its cells' texts are appended to g.row.text, each ended by endCell,
// and the row by endRow or endNote (add and note do all that for cells given as strings). No
// cell is a string of its own, and the buffers serve every row.
//
// A grid holds its rows until write. A caller that can make its rows twice can bound what is
// held: after holdUpTo, the grid holds rows up to a limit and then only measures them (those
// held too); if the limit was reached, the caller makes the rows again after stream, which
// writes each as it comes, in the widths measured. Few rows are so made once, and a message of a
// million fields is never held as a million rows.
type grid struct {
	cols  []column
	color bool
	// row is the row being made; held the rows held, up to limit bytes if limit is not 0;
	// width is the columns' widths measured so far; mode says what endRow does; out and err
	// are where a streaming grid writes and its first error; line and escaped are buffers for
	// writing a row.
	row     row
	held    heldRows
	limit   int
	width   []int
	mode    gridMode
	out     io.Writer
	err     error
	line    []byte
	escaped []byte
}

type gridMode uint8

const (
	gridHold    gridMode = iota // rows are kept until write
	gridMeasure                 // rows only widen the columns
	gridStream                  // rows are written at once, in the widths measured
)

// heldRows are rows one after another: their texts in text, their cells' ends (from the start
// of their row) and styles in ends and styles, and in rows where each row ends in text and in
// ends. Held so, rows cost no allocation of their own.
type heldRows struct {
	text   []byte
	ends   []int
	styles []string
	rows   []heldRow
}

type heldRow struct {
	text, cells int
	note        bool
}

func (h *heldRows) add(r *row) {
	h.text = append(h.text, r.text...)
	h.ends = append(h.ends, r.ends...)
	h.styles = append(h.styles, r.styles...)
	h.rows = append(h.rows, heldRow{len(h.text), len(h.ends), r.note})
}

// size is about the bytes h holds.
func (h *heldRows) size() int { return len(h.text) + len(h.ends)*24 }

// each calls fn with each row held, in a row that is only valid during the call.
func (h *heldRows) each(fn func(*row)) {
	var r row
	text, cells := 0, 0
	for _, e := range h.rows {
		r.text, r.ends, r.styles, r.note = h.text[text:e.text], h.ends[cells:e.cells], h.styles[cells:e.cells], e.note
		fn(&r)
		text, cells = e.text, e.cells
	}
}

func (h *heldRows) reset() {
	h.text, h.ends, h.styles, h.rows = h.text[:0], h.ends[:0], h.styles[:0], h.rows[:0]
}

// endCell ends the cell whose text was appended to g.row.text since the last one ended.
func (g *grid) endCell(style string) {
	g.row.ends = append(g.row.ends, len(g.row.text))
	g.row.styles = append(g.row.styles, style)
}

// emptyCells adds empty cells until the row has n.
func (g *grid) emptyCells(n int) {
	for g.row.cells() < n {
		g.endCell("")
	}
}

// endRow ends the row made.
func (g *grid) endRow() {
	g.push(&g.row)
	g.row.reset()
}

// endNote ends the row made, whose last cell is a note in style.
func (g *grid) endNote(style string) {
	g.row.styles[len(g.row.styles)-1] = style
	g.row.note = true
	g.endRow()
}

// add adds a row of cells.
func (g *grid) add(cells ...cell) {
	for _, c := range cells {
		g.row.text = append(g.row.text, c.text...)
		g.endCell(c.style)
	}
	g.endRow()
}

// note adds a row of cells, the ones before column col, and then text in style from column
// col on.
func (g *grid) note(col int, text, style string, cells ...cell) {
	for _, c := range cells[:min(col, len(cells))] {
		g.row.text = append(g.row.text, c.text...)
		g.endCell(c.style)
	}
	g.emptyCells(col)
	g.row.text = append(g.row.text, text...)
	g.endCell(style)
	g.endNote(style)
}

func (g *grid) push(r *row) {
	switch g.mode {
	case gridMeasure:
		g.measure(r)
	case gridStream:
		if err := g.writeRow(g.out, r); err != nil && g.err == nil {
			g.err = err
		}
	default:
		g.held.add(r)
		if g.limit > 0 && g.held.size() > g.limit {
			g.held.each(g.measure)
			g.held.reset()
			g.mode = gridMeasure
		}
	}
}

// holdUpTo forgets the widths measured and holds the rows to come until they take more than
// limit bytes, and from then on measures them (the rows held too).
func (g *grid) holdUpTo(limit int) {
	clear(g.width)
	g.held.reset()
	g.mode, g.limit = gridHold, limit
}

// holding reports whether the grid holds its rows (holdUpTo's limit was not reached).
func (g *grid) holding() bool { return g.mode == gridHold }

// measuring reports whether rows given now only widen the columns: the last column's text
// (which widens nothing) need not be made.
func (g *grid) measuring() bool { return g.mode == gridMeasure }

// measure widens the columns to hold r. Widths count runes: the padded columns hold ASCII,
// names and types.
func (g *grid) measure(r *row) {
	if len(g.width) != len(g.cols) {
		g.width = make([]int, len(g.cols))
	}
	n := r.cells()
	if r.note {
		n-- // a note widens nothing
	}
	for i := range min(n, len(g.width)-1) {
		_, w := g.shown(r.cell(i))
		g.width[i] = max(g.width[i], w)
	}
}

// shown is s as inert's rule shows it, and its width in runes: s itself when it is printable
// ASCII, as almost every cell is; otherwise a copy in g.escaped, valid until the next call.
func (g *grid) shown(s []byte) ([]byte, int) {
	for _, c := range s {
		if c < 0x20 || c >= 0x7f {
			g.escaped = inert.Append(g.escaped[:0], s)
			return g.escaped, utf8.RuneCount(g.escaped)
		}
	}
	return s, len(s)
}

// stream writes each row to come to w as it comes, in the widths measured; g.err is the first
// error.
func (g *grid) stream(w io.Writer) { g.mode, g.out, g.err = gridStream, w, nil }

// write prints the rows held, and holds none after.
func (g *grid) write(w io.Writer) error {
	g.held.each(g.measure)
	g.err = nil
	g.held.each(func(r *row) {
		if err := g.writeRow(w, r); err != nil && g.err == nil {
			g.err = err
		}
	})
	g.held.reset()
	return g.err
}

// trim lets go of the row and line buffers if they grew past row bytes, and of the rows held if
// they grew past held bytes (0: any size), so that one very long row does not keep its memory
// for the rest of the run.
func (g *grid) trim(row, held int) {
	if cap(g.row.text) > row {
		g.row.text = nil
	}
	if cap(g.line) > row {
		g.line = nil
	}
	if cap(g.escaped) > row {
		g.escaped = nil
	}
	if held > 0 && cap(g.held.text) > held {
		g.held.text = nil
	}
}

// writeRow prints one row in the widths measured.
func (g *grid) writeRow(w io.Writer, r *row) error {
	if len(g.width) != len(g.cols) {
		g.width = make([]int, len(g.cols))
	}
	b := g.line[:0]
	last := len(g.cols)
	if r.note {
		last = r.cells() - 1
	}
	for i := range last {
		var text []byte
		style := ""
		if i < r.cells() {
			text, style = r.cell(i), r.styles[i]
		}
		if i > 0 {
			b = append(b, g.cols[i].sep...)
		}
		text, width := g.shown(text)
		pad := 0
		if i < len(g.width)-1 {
			pad = max(0, g.width[i]-width)
		}
		if g.cols[i].right {
			b = appendSpaces(b, pad)
		}
		b = g.paint(b, text, style)
		if !g.cols[i].right {
			b = appendSpaces(b, pad)
		}
	}
	if r.note {
		if last > 0 {
			b = append(b, g.cols[last].sep...)
		}
		text, _ := g.shown(r.cell(last))
		b = g.paint(b, text, r.styles[last])
	}
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	b = append(b, '\n')
	g.line = b
	_, err := w.Write(b)
	return err
}

// paint appends s, as shown, in style when colours are on.
func (g *grid) paint(b, s []byte, style string) []byte {
	if g.color && style != "" && len(s) > 0 {
		b = append(b, style...)
		b = append(b, s...)
		return append(b, styleReset...)
	}
	return append(b, s...)
}

// appendSpaces appends n spaces (spaces is the summary's).
func appendSpaces(b []byte, n int) []byte {
	for n > len(spaces) {
		b, n = append(b, spaces...), n-len(spaces)
	}
	return append(b, spaces[:n]...)
}
