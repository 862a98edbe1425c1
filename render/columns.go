package render

import (
	"io"
	"strings"
	"unicode/utf8"
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
// spaces, so that output is stable for golden files.
type grid struct {
	cols  []column
	rows  []row
	color bool
}

func (g *grid) add(cells ...cell) { g.rows = append(g.rows, row{cells: cells}) }

func (g *grid) note(col int, text, style string, cells ...cell) {
	g.rows = append(g.rows, row{cells: cells, span: text, spanCol: col, style: style})
}

// write prints the grid. Widths count runes: the padded columns hold ASCII, names and types.
func (g *grid) write(w io.Writer) error {
	width := make([]int, len(g.cols))
	for _, r := range g.rows {
		for i, c := range r.cells {
			if i < len(width)-1 && (r.span == "" || i < r.spanCol) {
				width[i] = max(width[i], utf8.RuneCountInString(c.text))
			}
		}
	}
	var b strings.Builder
	for _, r := range g.rows {
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
				pad = strings.Repeat(" ", width[i]-utf8.RuneCountInString(c.text))
			}
			if g.cols[i].right {
				b.WriteString(pad)
			}
			g.paint(&b, c.text, c.style)
			if !g.cols[i].right {
				b.WriteString(pad)
			}
		}
		if r.span != "" {
			if last > 0 {
				b.WriteString(g.cols[last].sep)
			}
			g.paint(&b, r.span, r.style)
		}
		line := strings.TrimRight(b.String(), " ")
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			return err
		}
	}
	return nil
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
