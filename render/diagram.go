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
type Diagram struct {
	w     *bufio.Writer
	opt   DiagramOptions
	clock clock
	// msg is the message being written; scratch holds the records it expands as they are
	// written (codec.Message.EachRecord).
	msg     *codec.Message
	scratch codec.Nodes
}

// NewDiagram writes to w.
func NewDiagram(w io.Writer, opt DiagramOptions) *Diagram {
	d := &Diagram{w: bufio.NewWriter(w), opt: opt, clock: clock{format: opt.Time}}
	if d.clock.format == TimeDefault {
		d.clock.format = TimeAbsDate
	}
	return d
}

// SetStart sets the time that relative times count from (the capture's first packet), if it is
// not set yet.
func (d *Diagram) SetStart(t time.Time) { d.clock.setStart(t) }

// heading is "#13  2026-11-29 10:00:01.234567 UTC  src -> dst", the time as -t says, with
// microseconds as pcap timestamps have. Entries without a time (kdissect decode) show none.
func (d *Diagram) heading(frame int, t time.Time, src, dst string) string {
	if t.IsZero() {
		return fmt.Sprintf("#%d  %s -> %s", frame, src, dst)
	}
	return fmt.Sprintf("#%d  %s  %s -> %s", frame, d.clock.appendTime(nil, t, true), src, dst)
}

// Message writes one message: heading, title, the fields, warnings and, with Hex, a hex dump.
func (d *Diagram) Message(e *model.Entry) error {
	h := d.heading(e.Frame, e.Time, e.Src, e.Dst)
	if !e.Time.IsZero() { // decoded frames have no stream
		h += fmt.Sprintf("  stream %d", e.Stream)
	}
	if e.TLS != "" {
		h += "  " + e.TLS
	}
	d.line(h, "")
	m := e.Msg
	d.line(title(e), styleBold)
	if e.Session != nil {
		d.line("fetch "+string(appendSession(nil, e.Session, true)), "")
	}
	// Secrets are masked in the raw bytes too.
	frame := e.Redacted()
	// The fields twice: once to measure the columns, once to write them, row by row (records
	// expanded each time), so that a big message is never held as rows.
	g := d.newGrid()
	g.measureHeld()
	d.fields(g, frame, m)
	g.stream(d.w)
	d.fields(g, frame, m)
	if g.err != nil {
		return g.err
	}
	// The warnings come after the fields: expanding records adds theirs.
	for _, w := range m.Warnings {
		d.line("! "+w.String(), styleWarn)
	}
	if d.opt.Hex && len(frame) > 0 {
		d.w.WriteString("\n")
		hexDump(d.w, frame)
	}
	_, err := d.w.WriteString("\n")
	return err
}

// title is "DescribeGroups Response v6  correlation_id 7  218 bytes  answers #12 after 1.204 ms".
func title(e *model.Entry) string {
	m := e.Msg
	kind := "Request"
	if m.Response {
		kind = "Response"
	}
	s := m.APIName + " " + kind
	if m.APIKey >= 0 {
		s += fmt.Sprintf(" v%d", m.Version)
	}
	s += fmt.Sprintf("  correlation_id %d  %d bytes", m.CorrelationID, m.Size)
	switch {
	case !m.Response:
		if m.ClientID != nil {
			s += "  client_id " + inert.Quote(*m.ClientID)
		}
		if e.NoResponse {
			s += "  no response expected"
		}
	case e.RequestFrame > 0:
		s += fmt.Sprintf("  answers #%d after %s", e.RequestFrame, FormatLatency(e.Latency))
	default:
		s += "  request not captured"
	}
	return s
}

// Notice writes "#N  time  src -> dst  ! text".
func (d *Diagram) Notice(n *model.Notice) error {
	d.w.WriteString(inert.String(d.heading(n.Frame, n.Time, n.Src, n.Dst)) + "  ")
	d.line("! "+n.Text, styleWarn)
	_, err := d.w.WriteString("\n")
	return err
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

// line writes s and a newline, in style when colours are on. Like the grid's cells, s is shown
// under package inert's rule.
func (d *Diagram) line(s, style string) {
	s = inert.String(s)
	if d.opt.Color && style != "" {
		s = style + s + styleReset
	}
	d.w.WriteString(s + "\n")
}

// The diagram's columns: offset, size, [bytes,] type, field, value.
func (d *Diagram) newGrid() *grid {
	g := &grid{color: d.opt.Color, cols: []column{{}, {sep: " ", right: true}}}
	head := []cell{{text: "offset"}, {text: "size"}}
	if d.opt.Hex {
		g.cols = append(g.cols, column{sep: " "})
		head = append(head, cell{text: "bytes"})
	}
	g.cols = append(g.cols, column{sep: " "}, column{sep: "  "}, column{sep: "  "})
	head = append(head, cell{text: "type"}, cell{text: "field"}, cell{text: "value"})
	for i := range head {
		head[i].style = styleDim
	}
	g.add(head...)
	return g
}

// fieldCol is the index of the field column, where notes between the fields start.
func (d *Diagram) fieldCol() int {
	if d.opt.Hex {
		return 4
	}
	return 3
}

// fields adds the rows of m's fields.
func (d *Diagram) fields(g *grid, frame []byte, m *codec.Message) {
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
	g.add(d.fieldCells(g, frame, n, depth, parent, header)...)
	if d.opt.Explain {
		d.explain(g, frame, n, parent, depth)
	}
	if n.Type == wire.CompressedRecords && len(n.Children) > 0 && n.Children[0].Decompressed {
		g.note(d.fieldCol(), fmt.Sprintf("%s(offsets marked d count from the start of the decompressed data: %v)",
			indent(depth+1), n.Value), styleNote)
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

func indent(depth int) string { return strings.Repeat("  ", depth) }

// fieldCells is one field's line.
func (d *Diagram) fieldCells(g *grid, frame []byte, n *codec.Node, depth int, parent *codec.Node, header bool) []cell {
	off := fmt.Sprintf("0x%04x", n.Offset)
	if n.Decompressed {
		off = "d" + off
	}
	size := ""
	if h := n.Head(); h != 0 {
		size = strconv.Itoa(h)
	}
	name := n.Name
	if parent != nil && strings.HasPrefix(name, "[") && parent.Type.IsArray() {
		name = parent.Name + name // Groups[0]
	}
	nameStyle := ""
	if header {
		nameStyle = styleDim
	}
	var value, style string
	if !g.measuring() { // the value is the last column, which widens nothing
		value, style = d.value(n, parent)
	}
	cells := []cell{{text: off}, {text: size}}
	if d.opt.Hex {
		cells = append(cells, cell{text: d.rawHex(frame, n)})
	}
	return append(cells, cell{text: n.Type.String()}, cell{text: indent(depth) + name, style: nameStyle}, cell{text: value, style: style})
}

// rawHex is a leaf's bytes in hex, cut after 16 bytes; empty for containers and for nodes inside
// decompressed data, whose bytes are not in the frame.
func (d *Diagram) rawHex(frame []byte, n *codec.Node) string {
	if n.Decompressed || ((len(n.Children) > 0 || n.Unexpanded()) && n.Type != wire.CompressedRecords) {
		return ""
	}
	end := n.Offset + n.Size
	if n.Offset < 0 || end > len(frame) || n.Size <= 0 {
		return ""
	}
	if n.Size > 16 {
		return hex.EncodeToString(frame[n.Offset:n.Offset+16]) + "…"
	}
	return hex.EncodeToString(frame[n.Offset:end])
}

// value is the text of a node's value and its style, with the node's note after it.
func (d *Diagram) value(n *codec.Node, parent *codec.Node) (string, string) {
	s, style := d.bareValue(n, parent)
	if n.Note != "" && !noteInValue(n, parent) {
		s += "  [" + n.Note + "]"
	}
	return s, style
}

func (d *Diagram) bareValue(n *codec.Node, parent *codec.Node) (string, string) {
	if n.Type == wire.TaggedField {
		for _, c := range n.Children {
			if c.Name == "tag" {
				return fmt.Sprintf("tag %v", c.Value), styleNumber
			}
		}
	}
	switch v := n.Value.(type) {
	case nil:
		switch {
		case n.Type == wire.NullableStruct && len(n.Children) > 0 && isNegative(n.Children[0].Value):
			return "null", styleNumber
		case n.Type.IsString(), n.Type.IsBytes(), n.Type.IsArray(), n.Type.IsRecords():
			return "null", styleNumber
		}
		return "", ""
	case int64:
		switch {
		case codec.IsErrorCode(n):
			if v == 0 {
				return "0 " + codec.ErrorName(0), styleNumber
			}
			return fmt.Sprintf("%d %s", v, codec.ErrorName(int16(v))), styleError
		case n.Type.IsArray():
			return plural.Count(v, "item"), styleNumber
		case n.Type.IsRecords():
			return plural.Count(v, "byte"), styleNumber
		case n.Bits == wire.BatchAttributes:
			return batchAttributes(v), styleNumber
		case n.Note != "" && noteInValue(n, parent):
			// The batch's CRC checked ("ok", "mismatch (computed X)"), an API key named: the
			// note is part of the value.
			style := styleNumber
			if n.Name == "crc" && n.Note != crcOK {
				style = styleError
			}
			return strconv.FormatInt(v, 10) + " " + n.Note, style
		case n.Type == wire.Int64 && isTimestampName(n.Name):
			return timestamp(v), styleNumber
		}
		return strconv.FormatInt(v, 10), styleNumber
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), styleNumber
	case bool:
		return strconv.FormatBool(v), styleNumber
	case string:
		if n.Secret || holdsNote(n.Type) {
			return v, styleNote
		}
		return d.text([]byte(v), true), styleString
	case []byte:
		if len(n.Children) > 0 {
			// Bytes decoded as a structure of their own (a consumer protocol subscription, a
			// control record's key): the rows below show them, as a records field's do.
			return fmt.Sprintf("%d bytes", len(v)), styleNumber
		}
		return d.text(v, codec.Printable(v)), styleString
	case codec.UUID:
		return fmt.Sprintf("%s (%s)", v, v.Hex()), styleString
	}
	return fmt.Sprint(n.Value), ""
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

// text shows b quoted when it is printable text and in hex otherwise, cut at MaxBytes.
func (d *Diagram) text(b []byte, printable bool) string {
	cut := d.opt.MaxBytes > 0 && len(b) > d.opt.MaxBytes
	show := b
	if cut {
		show = b[:d.opt.MaxBytes]
		if printable {
			for len(show) > 0 && !utf8.Valid(show) {
				show = show[:len(show)-1] // do not split a character
			}
		}
	}
	var s string
	if printable {
		s = inert.Quote(string(show))
	} else {
		s = hex.EncodeToString(show)
	}
	if cut {
		s += "… (" + plural.Count(len(b), "byte") + ")"
	}
	return s
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

// timestamp shows epoch milliseconds with their UTC date when they fall in the years 2000 to
// 2100, and as a plain number otherwise (-1, 0, durations).
func timestamp(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	if t.Year() < 2000 || t.Year() > 2100 {
		return strconv.FormatInt(ms, 10)
	}
	return fmt.Sprintf("%d (%s UTC)", ms, t.Format("2006-01-02 15:04:05.000"))
}

// batchAttributes shows a record batch's attributes and their bits: compression codec (bits
// 0-2), timestamp type (bit 3), transactional (bit 4) and control (bit 5).
func batchAttributes(v int64) string {
	a := wire.Attributes(v)
	c := a.Codec().String()
	if !a.Codec().Known() {
		c = fmt.Sprintf("unknown(%d)", a.Codec())
	}
	s := fmt.Sprintf("0x%04x codec=%s timestamp=", v, c)
	if a.Has(wire.LogAppendTime) {
		s += "log-append"
	} else {
		s += "create"
	}
	if a.Has(wire.Transactional) {
		s += " transactional"
	}
	if a.Has(wire.Control) {
		s += " control"
	}
	return s
}

// hexDump writes b as tshark -x does: offset, 16 bytes in hex, the same bytes as ASCII.
func hexDump(w *bufio.Writer, b []byte) {
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		fmt.Fprintf(w, "%04x  ", off)
		for i := 0; i < 16; i++ {
			if i < len(line) {
				fmt.Fprintf(w, "%02x ", line[i])
			} else {
				w.WriteString("   ")
			}
		}
		w.WriteString("  ")
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			w.WriteByte(c)
		}
		w.WriteString("\n")
	}
}
