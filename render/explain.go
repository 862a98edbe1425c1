package render

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/plural"
)

// The diagram's --explain rows: under each field whose encoding has parts, one row per part,
// with its offset, size and what its bytes mean. A length-prefixed value gets its prefix
// ("0x0b uvarint 11 → length 10", "0xffff int16 -1 → null") and then its content; a varint its
// bytes and, when signed, the zigzag step ("0x13 → zigzag 19 → -10"); a bit field its named
// bits. Everything comes from the node (codec.Node.Prefix, AppendRaw, Bits), so the rows
// inside decompressed data are as complete as the others.

// partMark starts the field cell of an explanation row, so that parts do not read as fields.
const partMark = "· "

// A step is one step of a field's encoding: the bytes at Offset (Size of them; 0 for a bit of
// a bit field, which lies in the field's own bytes), a label ("length", "content", "bytes",
// "bit 3"), what the bytes mean, and the rule that gives them that meaning (the page shows
// it; the diagram's rows, narrower, do not). The diagram's --explain rows and the page's
// explanation are both made of them.
type step struct {
	Offset, Size         int
	Label, Meaning, Rule string
}

// explain adds n's parts under its row.
func (d *Diagram) explain(g *grid, frame []byte, n, parent *codec.Node, depth int) {
	for _, p := range steps(frame, n, parent) {
		g.row.text = appendOffset(g.row.text, p.Offset, n.Decompressed)
		g.endCell("")
		if p.Size > 0 {
			g.row.text = strconv.AppendInt(g.row.text, int64(p.Size), 10)
		}
		g.endCell("")
		g.emptyCells(d.fieldCol()) // bytes and type
		g.row.text = append(appendIndent(g.row.text, depth+1), partMark...)
		g.row.text = append(g.row.text, p.Label...)
		g.endCell(styleDim)
		g.row.text = append(g.row.text, p.Meaning...)
		g.endCell(styleNote)
		g.endRow()
	}
}

// steps are the steps of n's encoding, in the order of its bytes: its length or count prefix
// and its content, a varint's bytes and zigzag step, a bit field's named bits. frame is the
// message's bytes, for a prefix the decode stopped at; parent is n's parent (nil at the top).
func steps(frame []byte, n, parent *codec.Node) []step {
	var out []step
	if p, ok := n.Prefix(); ok {
		label, meaning := prefixMeaning(frame, n, p)
		out = append(out, step{p.Offset, p.Size, label, meaning, prefixRule(n.Type, p.Encoding)})
		// The content of an array or a tagged section is its elements, rows of their own.
		leaf := !n.Type.IsArray() && n.Type != wire.TaggedFields && len(n.Children) == 0 && !n.Unexpanded()
		if start, size := n.Content(); leaf && !n.Null() && p.Known {
			out = append(out, step{start, size, "content", contentMeaning(n, size), ""})
		}
	}
	if n.Type.IsVarint() {
		meaning := varintMeaning(n.AppendRaw(nil), n.Type, n.Value)
		if v, ok := n.Value.(int64); ok && parent != nil && parent.Type == wire.TaggedField {
			// A tagged field starts with its tag and the size of its value.
			switch n.Name {
			case "tag":
				meaning += fmt.Sprintf(" → tag %d", v)
			case "size":
				meaning += " → " + plural.Count(v, "byte") + " of value"
			}
		}
		out = append(out, step{n.Offset, n.Size, "bytes", meaning, varintRule(n.Type)})
	}
	return append(out, bitSteps(n)...)
}

// bitSteps are the named bits of a bit field.
func bitSteps(n *codec.Node) []step {
	v, ok := n.Value.(int64)
	if !ok || n.Bits == wire.NoBits {
		return nil
	}
	var out []step
	for _, b := range n.Bits.Bits(v) {
		if n.Bits == wire.ACLOperations && b.Value == 0 {
			continue // a set of operations: the ones in it
		}
		label := fmt.Sprintf("bit %d", b.Low)
		if b.High > b.Low {
			label = fmt.Sprintf("bits %d-%d", b.Low, b.High)
		}
		meaning := fmt.Sprintf("%s = %d", b.Name, b.Value)
		if b.Meaning != "" {
			meaning += " (" + b.Meaning + ")"
		}
		out = append(out, step{n.Offset, 0, label, meaning, ""})
	}
	return out
}

// prefixRule says how a prefix of encoding e before a value of type t is read.
func prefixRule(t wire.Type, e wire.Prefix) string {
	what := "length in bytes"
	if t.IsArray() {
		what = "number of elements"
	}
	switch {
	case t == wire.TaggedFields:
		return "uvarint: the number of tagged fields that follow, each a tag, a size and a value"
	case e == wire.UvarintPrefix && t.PlusOne():
		return "compact: an unsigned varint of the " + what + " + 1, so 0 is null and 1 empty"
	case e == wire.VarintPrefix:
		return "record format: a zigzag varint of the " + what + ", -1 for null"
	}
	return e.String() + ", big-endian: the " + what + ", -1 for null"
}

// varintRule says how a varint of type t is read.
func varintRule(t wire.Type) string {
	const groups = "7 bits a byte, the lowest group first; a byte's top bit says another follows"
	if t.Zigzag() {
		return groups + "; then zigzag: even numbers are 0, 1, 2..., odd ones -1, -2..."
	}
	return groups
}

// hexBytes writes bytes as one hex number, as a teacher points at them: 0x0b, 0xffff.
func hexBytes(b []byte) string { return "0x" + hex.EncodeToString(b) }

// prefixMeaning is the label and the text of a prefix row: its bytes, its encoding and value,
// and what the value says.
func prefixMeaning(frame []byte, n *codec.Node, p codec.PrefixInfo) (label, meaning string) {
	label = "length"
	if n.Type.IsArray() || n.Type == wire.TaggedFields {
		label = "count"
	}
	if !p.Known {
		// The decode stopped at this prefix: show its bytes where the frame has them.
		s := p.Encoding.String()
		if !n.Decompressed && p.Offset >= 0 && p.Offset+p.Size <= len(frame) {
			s = hexBytes(frame[p.Offset:p.Offset+p.Size]) + " " + s
		}
		return label, s + " → more than the bytes left (see the warning)"
	}
	raw := n.AppendPrefix(nil)
	var b strings.Builder
	b.WriteString(hexBytes(raw))
	b.WriteString(" ")
	b.WriteString(p.Encoding.String())
	if p.Encoding == wire.VarintPrefix {
		fmt.Fprintf(&b, " → zigzag %d → %d", wire.ZigzagEncode(p.Value)&0xffffffff, p.Value)
	} else {
		fmt.Fprintf(&b, " %d", p.Value)
	}
	length, null := n.Type.Length(p.Value)
	switch {
	case null && n.Null():
		b.WriteString(" → null")
	case null:
		b.WriteString(" → not a count (see the warning)")
	case n.Type == wire.TaggedFields && length == 0:
		b.WriteString(" → no tagged fields")
	case n.Type == wire.TaggedFields:
		fmt.Fprintf(&b, " → %s", plural.Count(length, "tagged field"))
	case n.Type.IsArray():
		if n.Type.PlusOne() {
			fmt.Fprintf(&b, " → count %d", length)
		} else {
			fmt.Fprintf(&b, " → %s", plural.Count(length, "element"))
		}
	case n.Type.PlusOne():
		fmt.Fprintf(&b, " → length %d", length)
	default:
		fmt.Fprintf(&b, " → %s", plural.Count(length, "byte"))
	}
	return label, b.String()
}

// contentMeaning says what the content of a leaf with a prefix is.
func contentMeaning(n *codec.Node, size int) string {
	s := plural.Count(size, "byte")
	switch {
	case n.Secret:
		return s + ", redacted"
	case n.Type.IsString():
		return s + " of UTF-8"
	case n.Type.IsRecords():
		return s + " of record batches"
	}
	return s
}

// varintMeaning is the text of a varint's bytes row: the bytes, their 7-bit groups when there
// are several, and the unsigned number, or for a signed varint the zigzag step to its value.
func varintMeaning(raw []byte, t wire.Type, v any) string {
	groups := ""
	if len(raw) > 1 {
		var b strings.Builder
		b.WriteString(" (7-bit groups, low first:")
		for i, c := range raw {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %d", c&0x7f)
		}
		b.WriteString(")")
		groups = b.String()
	}
	value, _ := v.(int64)
	if !t.Zigzag() {
		return fmt.Sprintf("%s uvarint %d%s", hexBytes(raw), value, groups)
	}
	u := wire.ZigzagEncode(value)
	if t == wire.Varint {
		u &= 0xffffffff
	}
	return fmt.Sprintf("%s%s → zigzag %d → %d", hexBytes(raw), groups, u, value)
}
