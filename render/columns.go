package render

import (
	"io"
	"strings"
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

// row is one line of a grid. A row with span set ignores the columns from spanCol on and prints
// span there instead, without widening any column (notes between the fields).
type row struct {
	cells   []cell
	span    string
	spanCol int
	style   string // the span's style
}

// grid lines up rows of cells in columns. The last column is never padded and no line ends in
// spaces, so that output is stable for golden files. Every cell and note is shown under
// package inert's rule: a value, a name from a definition file, a note, whatever its source.
//
// A grid holds its rows until write, unless it streams (measure, then stream): a caller that can
// make its rows twice gives them once to measure the columns and once to write them, each row
// written as it comes, so that a message of a million fields is never held as a million rows.
type grid struct {
	cols  []column
	rows  []row
	color bool
	// width is the columns' widths measured so far; mode says what add and note do; out and
	// err are where a streaming grid writes and its first error.
	width []int
	mode  gridMode
	out   io.Writer
	err   error
	line  strings.Builder
}

type gridMode uint8

const (
	gridHold    gridMode = iota // rows are kept until write
	gridMeasure                 // rows only widen the columns
	gridStream                  // rows are written at once, in the widths measured
)

func (g *grid) add(cells ...cell) { g.push(row{cells: cells}) }

func (g *grid) note(col int, text, style string, cells ...cell) {
	g.push(row{cells: cells, span: text, spanCol: col, style: style})
}

func (g *grid) push(r row) {
	for i := range r.cells {
		r.cells[i].text = inert.String(r.cells[i].text)
	}
	r.span = inert.String(r.span)
	switch g.mode {
	case gridMeasure:
		g.measure(r)
	case gridStream:
		if err := g.writeRow(g.out, r); err != nil && g.err == nil {
			g.err = err
		}
	default:
		g.rows = append(g.rows, r)
	}
}

// measuring reports whether rows given now only widen the columns: the last column's text
// (which widens nothing) need not be made.
func (g *grid) measuring() bool { return g.mode == gridMeasure }

// measure widens the columns to hold r. Widths count runes: the padded columns hold ASCII,
// names and types.
func (g *grid) measure(r row) {
	if g.width == nil {
		g.width = make([]int, len(g.cols))
	}
	for i, c := range r.cells {
		if i < len(g.width)-1 && (r.span == "" || i < r.spanCol) {
			g.width[i] = max(g.width[i], utf8.RuneCountInString(c.text))
		}
	}
}

// measureHeld measures the rows held so far and starts measuring the rows to come.
func (g *grid) measureHeld() {
	for _, r := range g.rows {
		g.measure(r)
	}
	g.mode = gridMeasure
}

// stream writes the rows held so far to w and then each row as it comes, in the widths
// measured; g.err is the first error.
func (g *grid) stream(w io.Writer) {
	g.mode, g.out = gridStream, w
	for _, r := range g.rows {
		g.push(r)
	}
	g.rows = nil
}

// write prints the rows held.
func (g *grid) write(w io.Writer) error {
	for _, r := range g.rows {
		g.measure(r)
	}
	for _, r := range g.rows {
		if err := g.writeRow(w, r); err != nil {
			return err
		}
	}
	return nil
}

// writeRow prints one row in the widths measured.
func (g *grid) writeRow(w io.Writer, r row) error {
	if g.width == nil {
		g.width = make([]int, len(g.cols))
	}
	width := g.width
	b := &g.line
	b.Reset()
	last := len(g.cols)
	if r.span != "" {
		last = r.spanCol
	}
	for i := 0; i < last; i++ {
		var c cell
		if i < len(r.cells) {
			c = r.cells[i]
		}
		if i > 0 {
			b.WriteString(g.cols[i].sep)
		}
		pad := ""
		if i < len(width)-1 {
			pad = strings.Repeat(" ", max(0, width[i]-utf8.RuneCountInString(c.text)))
		}
		if g.cols[i].right {
			b.WriteString(pad)
		}
		g.paint(b, c.text, c.style)
		if !g.cols[i].right {
			b.WriteString(pad)
		}
	}
	if r.span != "" {
		if last > 0 {
			b.WriteString(g.cols[last].sep)
		}
		g.paint(b, r.span, r.style)
	}
	line := strings.TrimRight(b.String(), " ")
	_, err := io.WriteString(w, line+"\n")
	return err
}

// paint writes s in style when colours are on.
func (g *grid) paint(b *strings.Builder, s, style string) {
	if g.color && style != "" && s != "" {
		b.WriteString(style)
		b.WriteString(s)
		b.WriteString(styleReset)
		return
	}
	b.WriteString(s)
}
