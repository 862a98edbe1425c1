package render

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/inert"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/model"
)

// DiagramOptions says how a Diagram looks.
type DiagramOptions struct {
	// Color draws values, error names and warnings in ANSI colours. The caller decides (a
	// terminal, NO_COLOR unset); the diagram never looks at the environment.
	Color bool
	// Hex adds a column with each leaf's raw bytes and a hex dump of each message.
	Hex bool
	// MaxBytes cuts byte and string values longer than this many bytes (0: never).
	MaxBytes int
	// Time is how headings show times (TimeDefault: date and time of day, UTC).
	Time TimeFormat
	// Explain adds, under each field whose encoding has parts, a row per part: a length or
	// count prefix and the content, a varint's bytes and zigzag step, a bit field's bits; and
	// a note on why the header has its version (see explain.go).
	Explain bool
}

// Diagram writes each message as a wire diagram: one line per field in depth-first order with
// its offset from the size prefix, its size, wire type, name and value, as DESIGN.md draws it.
//
// Rows are made in place in the grid's buffers (strconv's appends, no string per cell) and
// written straight out, so that the cost of a message is its bytes, not its allocations.
type Diagram struct {
	w     *bufio.Writer
	opt   DiagramOptions
	clock clock
	// msg is the message being written; scratch holds the records it expands as they are
	// written (codec.Message.EachRecord); grid lines up its fields (each message measures
	// anew), holding up to hold bytes of them; buf and line make the lines around them.
	msg     *codec.Message
	scratch codec.Nodes
	grid    grid
	hold    int
	buf     []byte
	line    []byte
}

// holdLimit is how many bytes of rows a diagram holds to write a message's fields in one pass;
// a message with more is written in two passes, which hold none.
const holdLimit = 4 << 20

// NewDiagram writes to w.
func NewDiagram(w io.Writer, opt DiagramOptions) *Diagram {
	d := &Diagram{w: bufio.NewWriterSize(w, 64<<10), opt: opt, clock: clock{format: opt.Time}, hold: holdLimit}
	if d.clock.format == TimeDefault {
		d.clock.format = TimeAbsDate
	}
	// The diagram's columns: offset, size, [bytes,] type, field, value.
	d.grid = grid{color: opt.Color, cols: []column{{}, {sep: " ", right: true}}}
	if opt.Hex {
		d.grid.cols = append(d.grid.cols, column{sep: " "})
	}
	d.grid.cols = append(d.grid.cols, column{sep: " "}, column{sep: "  "}, column{sep: "  "})
	return d
}

// SetStart sets the time that relative times count from (the capture's first packet), if it is
// not set yet.
func (d *Diagram) SetStart(t time.Time) { d.clock.setStart(t) }

// appendHeading appends "#13  2026-11-29 10:00:01.234567 UTC  src -> dst", the time as -t says,
// with microseconds as pcap timestamps have. Entries without a time (kdissect decode) show none.
func (d *Diagram) appendHeading(b []byte, frame int, t time.Time, src, dst string) []byte {
	b = strconv.AppendInt(append(b, '#'), int64(frame), 10)
	b = append(b, "  "...)
	if !t.IsZero() {
		b = append(d.clock.appendTime(b, t, true), "  "...)
	}
	b = append(append(append(b, src...), " -> "...), dst...)
	return b
}

// Message writes one message: heading, title, the fields, warnings and, with Hex, a hex dump.
func (d *Diagram) Message(e *model.Entry) error {
	b := d.appendHeading(d.buf[:0], e.Frame, e.Time, e.Src, e.Dst)
	if !e.Time.IsZero() { // decoded frames have no stream
		b = strconv.AppendInt(append(b, "  stream "...), int64(e.Stream), 10)
	}
	if e.TLS != "" {
		b = append(append(b, "  "...), e.TLS...)
	}
	d.buf = b
	d.writeLine(d.buf, "")
	m := e.Msg
	d.buf = appendTitle(d.buf[:0], e)
	d.writeLine(d.buf, styleBold)
	if e.Session != nil {
		d.buf = appendSession(append(d.buf[:0], "fetch "...), e.Session, true)
		d.writeLine(d.buf, "")
	}
	// Secrets are masked in the raw bytes too.
	frame := e.Redacted()
	// The fields once, held, and written in the widths they need. Or, if they are many, twice:
	// once to measure the columns, once to write them, row by row (records expanded each
	// time), so that a big message is never held as rows.
	g := &d.grid
	g.holdUpTo(d.hold)
	d.fields(g, frame, m)
	if g.holding() {
		g.err = g.write(d.w)
	} else {
		g.stream(d.w)
		d.fields(g, frame, m)
	}
	if g.err != nil {
		return g.err
	}
	// The warnings come after the fields: expanding records adds theirs.
	for _, w := range m.Warnings {
		d.buf = append(append(d.buf[:0], "! "...), w.String()...)
		d.writeLine(d.buf, styleWarn)
	}
	if d.opt.Hex && len(frame) > 0 {
		d.w.WriteByte('\n')
		d.hexDump(frame)
	}
	d.trim()
	return d.w.WriteByte('\n')
}

// hexDump writes frame's hex dump 4 KiB of frame at a time, so that a big frame's is never
// held whole.
func (d *Diagram) hexDump(frame []byte) {
	const chunk = 4 << 10 // a multiple of 16, the bytes a line shows
	for off := 0; off < len(frame); off += chunk {
		d.line = appendHexDump(d.line[:0], frame[off:min(off+chunk, len(frame))], off)
		d.w.Write(d.line)
	}
}

// trim lets go of buffers that a very long line (a big value with --max-bytes 0) grew, so that
// they are not kept for the rest of the run.
func (d *Diagram) trim() {
	const keep = 1 << 20
	if cap(d.buf) > keep {
		d.buf = nil
	}
	if cap(d.line) > keep {
		d.line = nil
	}
	d.grid.trim(keep, 2*d.hold)
}

// appendTitle appends "DescribeGroups Response v6  correlation_id 7  218 bytes  answers #12
// after 1.204 ms".
func appendTitle(b []byte, e *model.Entry) []byte {
	m := e.Msg
	b = append(b, m.APIName...)
	if m.Response {
		b = append(b, " Response"...)
	} else {
		b = append(b, " Request"...)
	}
	if m.APIKey >= 0 {
		b = strconv.AppendInt(append(b, " v"...), int64(m.Version), 10)
	}
	b = strconv.AppendInt(append(b, "  correlation_id "...), int64(m.CorrelationID), 10)
	b = append(strconv.AppendInt(append(b, "  "...), int64(m.Size), 10), " bytes"...)
	switch {
	case !m.Response:
		if m.ClientID != nil {
			b = inert.AppendQuote(append(b, "  client_id "...), *m.ClientID)
		}
		if e.NoResponse {
			b = append(b, "  no response expected"...)
		}
	case e.RequestFrame > 0:
		b = strconv.AppendInt(append(b, "  answers #"...), int64(e.RequestFrame), 10)
		b = appendLatency(append(b, " after "...), e.Latency)
	default:
		b = append(b, "  request not captured"...)
	}
	return b
}

// title is the title line of e (appendTitle).
func title(e *model.Entry) string { return string(appendTitle(nil, e)) }

// Notice writes "#N  time  src -> dst  ! text".
func (d *Diagram) Notice(n *model.Notice) error {
	d.buf = d.appendHeading(d.buf[:0], n.Frame, n.Time, n.Src, n.Dst)
	d.line = append(inert.Append(d.line[:0], d.buf), "  "...)
	d.w.Write(d.line)
	d.buf = append(append(d.buf[:0], "! "...), n.Text...)
	d.writeLine(d.buf, styleWarn)
	return d.w.WriteByte('\n')
}

// File writes a header line saying that the messages that follow come from the named capture
// file. kdissect calls it when it reads several files.
func (d *Diagram) File(name string) error {
	d.clock.newFile()
	_, err := d.w.Write(fileHeader(nil, name))
	return err
}

// Flush writes out what is buffered.
func (d *Diagram) Flush() error { return d.w.Flush() }

// Close flushes.
func (d *Diagram) Close() error { return d.w.Flush() }

// writeLine writes s and a newline, in style when colours are on. Like the grid's cells, s is
// shown under package inert's rule.
func (d *Diagram) writeLine(s []byte, style string) {
	b := d.line[:0]
	colored := d.opt.Color && style != ""
	if colored {
		b = append(b, style...)
	}
	b = inert.Append(b, s)
	if colored {
		b = append(b, styleReset...)
	}
	d.line = append(b, '\n')
	d.w.Write(d.line)
}

// head adds the row of column names.
func (d *Diagram) head(g *grid) {
	for _, name := range [...]string{"offset", "size", "bytes", "type", "field", "value"} {
		if name == "bytes" && !d.opt.Hex {
			continue
		}
		g.row.text = append(g.row.text, name...)
		g.endCell(styleDim)
	}
	g.endRow()
}

// fieldCol is the index of the field column, where notes between the fields start.
func (d *Diagram) fieldCol() int {
	if d.opt.Hex {
		return 4
	}
	return 3
}

// fields adds the column names and the rows of m's fields.
func (d *Diagram) fields(g *grid, frame []byte, m *codec.Message) {
	d.head(g)
	d.msg = m
	for i, n := range m.Fields {
		if d.opt.Explain && i == 1 && i < m.HeaderFields {
			if why := m.HeaderReason(); why != "" {
				g.note(d.fieldCol(), why, styleNote)
			}
		}
		d.walk(g, frame, n, 0, nil, i < m.HeaderFields)
	}
	d.msg = nil
}

// walk adds n and its children in depth-first order.
func (d *Diagram) walk(g *grid, frame []byte, n *codec.Node, depth int, parent *codec.Node, header bool) {
	d.fieldRow(g, frame, n, depth, parent, header)
	if d.opt.Explain {
		d.explain(g, frame, n, parent, depth)
	}
	if n.Type == wire.CompressedRecords && len(n.Children) > 0 && n.Children[0].Decompressed {
		g.emptyCells(d.fieldCol())
		g.row.text = appendIndent(g.row.text, depth+1)
		g.row.text = fmt.Appendf(g.row.text, "(offsets marked d count from the start of the decompressed data: %v)", n.Value)
		g.endCell(styleNote)
		g.endNote(styleNote)
	}
	if d.msg != nil && n.Unexpanded() {
		// One record batch at a time (codec.Message.EachRecord).
		d.msg.EachRecord(n, &d.scratch, func(c *codec.Node) { d.walk(g, frame, c, depth+1, n, header) })
		return
	}
	for _, c := range n.Children {
		d.walk(g, frame, c, depth+1, n, header)
	}
}

func indent(depth int) string { return string(appendIndent(nil, depth)) }

// appendIndent appends two spaces a level.
func appendIndent(b []byte, depth int) []byte { return appendSpaces(b, 2*depth) }

// appendOffset appends an offset as "0x002a", or "d0x002a" inside decompressed data.
func appendOffset(b []byte, off int, decompressed bool) []byte {
	if decompressed {
		b = append(b, 'd')
	}
	return appendHex4(append(b, "0x"...), int64(off))
}

// appendHex4 appends v in hex, at least four digits, as fmt's %04x does.
func appendHex4(b []byte, v int64) []byte {
	if v < 0 {
		return fmt.Appendf(b, "%04x", v) // a sign, rare
	}
	for d := int64(0x1000); d > 1 && v < d; d >>= 4 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, v, 16)
}

// fieldRow adds one field's row.
func (d *Diagram) fieldRow(g *grid, frame []byte, n *codec.Node, depth int, parent *codec.Node, header bool) {
	g.row.text = appendOffset(g.row.text, n.Offset, n.Decompressed)
	g.endCell("")
	if h := n.Head(); h != 0 {
		g.row.text = strconv.AppendInt(g.row.text, int64(h), 10)
	}
	g.endCell("")
	if d.opt.Hex {
		g.row.text = d.appendRawHex(g.row.text, frame, n)
		g.endCell("")
	}
	g.row.text = append(g.row.text, n.Type.String()...)
	g.endCell("")
	g.row.text = appendIndent(g.row.text, depth)
	if parent != nil && strings.HasPrefix(n.Name, "[") && parent.Type.IsArray() {
		g.row.text = append(g.row.text, parent.Name...) // Groups[0]
	}
	g.row.text = append(g.row.text, n.Name...)
	nameStyle := ""
	if header {
		nameStyle = styleDim
	}
	g.endCell(nameStyle)
	style := ""
	if !g.measuring() { // the value is the last column, which widens nothing
		g.row.text, style = d.appendValue(g.row.text, n, parent)
	}
	g.endCell(style)
	g.endRow()
}

// appendRawHex appends a leaf's bytes in hex, cut after 16 bytes; nothing for containers and
// for nodes inside decompressed data, whose bytes are not in the frame.
func (d *Diagram) appendRawHex(b, frame []byte, n *codec.Node) []byte {
	if n.Decompressed || ((len(n.Children) > 0 || n.Unexpanded()) && n.Type != wire.CompressedRecords) {
		return b
	}
	end := n.Offset + n.Size
	if n.Offset < 0 || end > len(frame) || n.Size <= 0 {
		return b
	}
	if n.Size > 16 {
		return append(hex.AppendEncode(b, frame[n.Offset:n.Offset+16]), "…"...)
	}
	return hex.AppendEncode(b, frame[n.Offset:end])
}

// appendValue appends the text of a node's value, with the node's note after it, and returns
// its style.
func (d *Diagram) appendValue(b []byte, n *codec.Node, parent *codec.Node) ([]byte, string) {
	b, style := d.appendBareValue(b, n, parent)
	if n.Note != "" && !noteInValue(n, parent) {
		b = append(append(append(b, "  ["...), n.Note...), ']')
	}
	return b, style
}

func (d *Diagram) appendBareValue(b []byte, n *codec.Node, parent *codec.Node) ([]byte, string) {
	if n.Type == wire.TaggedField {
		for _, c := range n.Children {
			if c.Name == "tag" {
				return appendAny(append(b, "tag "...), c.Value), styleNumber
			}
		}
	}
	switch v := n.Value.(type) {
	case nil:
		switch {
		case n.Type == wire.NullableStruct && len(n.Children) > 0 && isNegative(n.Children[0].Value):
			return append(b, "null"...), styleNumber
		case n.Type.IsString(), n.Type.IsBytes(), n.Type.IsArray(), n.Type.IsRecords():
			return append(b, "null"...), styleNumber
		}
		return b, ""
	case int64:
		return appendInt(b, n, parent, v)
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64), styleNumber
	case bool:
		return strconv.AppendBool(b, v), styleNumber
	case string:
		if n.Secret || holdsNote(n.Type) {
			return append(b, v...), styleNote
		}
		return appendText(b, v, true, d.opt.MaxBytes), styleString
	case []byte:
		if len(n.Children) > 0 {
			// Bytes decoded as a structure of their own (a consumer protocol subscription, a
			// control record's key): the rows below show them, as a records field's do.
			return append(strconv.AppendInt(b, int64(len(v)), 10), " bytes"...), styleNumber
		}
		return appendText(b, v, codec.Printable(v), d.opt.MaxBytes), styleString
	case codec.UUID:
		return fmt.Appendf(b, "%s (%s)", v, v.Hex()), styleString
	}
	return fmt.Append(b, n.Value), ""
}

// appendInt appends the text of an integer value and returns its style: an error code with
// its name, a count, a batch's attributes, a checked CRC, a timestamp with its date.
func appendInt(b []byte, n, parent *codec.Node, v int64) ([]byte, string) {
	switch {
	case codec.IsErrorCode(n):
		b = append(strconv.AppendInt(b, v, 10), ' ')
		b = append(b, codec.ErrorName(int16(v))...)
		if v == 0 {
			return b, styleNumber
		}
		return b, styleError
	case n.Type.IsArray():
		return plural.AppendCount(b, v, "item"), styleNumber
	case n.Type.IsRecords():
		return plural.AppendCount(b, v, "byte"), styleNumber
	case n.Bits == wire.BatchAttributes:
		return appendBatchAttributes(b, v), styleNumber
	case n.Note != "" && noteInValue(n, parent):
		// The batch's CRC checked ("ok", "mismatch (computed X)"), an API key named: the
		// note is part of the value.
		style := styleNumber
		if n.Name == "crc" && n.Note != crcOK {
			style = styleError
		}
		return append(append(strconv.AppendInt(b, v, 10), ' '), n.Note...), style
	case n.Type == wire.Int64 && isTimestampName(n.Name):
		return appendTimestamp(b, v), styleNumber
	}
	return strconv.AppendInt(b, v, 10), styleNumber
}

// value is the text of a node's value and its style, with the node's note after it (the page
// shows it).
func (d *Diagram) value(n *codec.Node, parent *codec.Node) (string, string) {
	b, style := d.appendValue(nil, n, parent)
	return string(b), style
}

// appendAny appends v as fmt's %v does, without fmt for the usual integer.
func appendAny(b []byte, v any) []byte {
	if i, ok := v.(int64); ok {
		return strconv.AppendInt(b, i, 10)
	}
	return fmt.Append(b, v)
}

// crcOK is the note of a CRC that matches its bytes.
const crcOK = "ok"

// noteInValue reports whether bareValue shows n's note as part of its value, not after it.
func noteInValue(n, parent *codec.Node) bool {
	_, isInt := n.Value.(int64)
	return isInt && (n.Name == "crc" && parent != nil && (parent.Type == wire.RecordBatch || parent.Type == wire.Message) ||
		n.Name == "ApiKey" && n.Type == wire.Int16)
}

// holdsNote reports whether nodes of type t hold a string Value that is a note, not bytes of the
// frame: a record's absolute offset and timestamp, a compressed payload's codec.
func holdsNote(t wire.Type) bool {
	switch t {
	case wire.Record, wire.Message, wire.RecordBatch, wire.CompressedRecords:
		return true
	}
	return false
}

func isNegative(v any) bool {
	i, ok := v.(int64)
	return ok && i < 0
}

// appendText appends s quoted when it is printable text and in hex otherwise, cut at limit
// bytes (0: never).
func appendText[T string | []byte](b []byte, s T, printable bool, limit int) []byte {
	cut := limit > 0 && len(s) > limit
	show := s
	if cut {
		show = s[:limit]
		if printable {
			for len(show) > 0 && !validUTF8(show) {
				show = show[:len(show)-1] // do not split a character
			}
		}
	}
	if printable {
		b = inert.AppendQuote(b, show)
	} else {
		b = hex.AppendEncode(b, []byte(show))
	}
	if cut {
		b = plural.AppendCount(append(b, "… ("...), len(s), "byte")
		b = append(b, ')')
	}
	return b
}

// validUTF8 is utf8.Valid or utf8.ValidString, as s is.
func validUTF8[T string | []byte](s T) bool {
	switch s := any(s).(type) {
	case string:
		return utf8.ValidString(s)
	case []byte:
		return utf8.Valid(s)
	}
	return false
}

// isTimestampName reports whether an int64 field holds epoch milliseconds by its name:
// ...Timestamp, ...TimestampMs, ...TimeMs, and the record format's baseTimestamp, maxTimestamp
// and timestamp.
func isTimestampName(name string) bool {
	switch name {
	case "baseTimestamp", "maxTimestamp", "timestamp":
		return true
	}
	if strings.HasSuffix(name, "TimeoutMs") {
		return false
	}
	return strings.HasSuffix(name, "Timestamp") || strings.HasSuffix(name, "TimestampMs") || strings.HasSuffix(name, "TimeMs")
}

// appendTimestamp appends epoch milliseconds with their UTC date when they fall in the years
// 2000 to 2100, and as a plain number otherwise (-1, 0, durations).
func appendTimestamp(b []byte, ms int64) []byte {
	b = strconv.AppendInt(b, ms, 10)
	t := time.UnixMilli(ms).UTC()
	if t.Year() < 2000 || t.Year() > 2100 {
		return b
	}
	b = t.AppendFormat(append(b, " ("...), "2006-01-02 15:04:05.000")
	return append(b, " UTC)"...)
}

// appendBatchAttributes appends a record batch's attributes and their bits: compression codec
// (bits 0-2), timestamp type (bit 3), transactional (bit 4) and control (bit 5).
func appendBatchAttributes(b []byte, v int64) []byte {
	a := wire.Attributes(v)
	b = append(appendHex4(append(b, "0x"...), v), " codec="...)
	if a.Codec().Known() {
		b = append(b, a.Codec().String()...)
	} else {
		b = fmt.Appendf(b, "unknown(%d)", a.Codec())
	}
	if a.Has(wire.LogAppendTime) {
		b = append(b, " timestamp=log-append"...)
	} else {
		b = append(b, " timestamp=create"...)
	}
	if a.Has(wire.Transactional) {
		b = append(b, " transactional"...)
	}
	if a.Has(wire.Control) {
		b = append(b, " control"...)
	}
	return b
}

// appendHexDump appends b as tshark -x shows it: offset (of b's first byte, base, and on), 16
// bytes in hex, the same bytes as ASCII.
func appendHexDump(out, b []byte, base int) []byte {
	const digits = "0123456789abcdef"
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		out = append(appendHex4(out, int64(base+off)), "  "...)
		for i := range 16 {
			if i < len(line) {
				out = append(out, digits[line[i]>>4], digits[line[i]&0xf], ' ')
			} else {
				out = append(out, "   "...)
			}
		}
		out = append(out, "  "...)
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			out = append(out, c)
		}
		out = append(out, '\n')
	}
	return out
}
