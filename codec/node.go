// Package codec is kdissect's Kafka protocol engine: one interpreter that walks a frame's bytes by
// the definitions of package schema and builds a tree of fields with their offsets and sizes; the
// request and response headers; the error-code table; and the per-connection state that pairs
// responses with requests. It reads frames, not packets: where a frame lay in a capture comes
// from its caller, as opaque references (Conversation's Ref) or packet numbers it only carries
// (Place); it knows nothing of output formats.
package codec

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/ascii"
)

// Node is one field of a decoded message. Offsets count from the first byte of the frame's size
// prefix (or, inside decompressed records, from the start of the decompressed data).
type Node struct {
	Name string
	// Type is the wire type: int32, compact_string, nullable_bytes, compact_array, struct,
	// tagged_fields, uvarint, record_batch, ...
	Type wire.Type
	// Secret marks a redacted value (a password, a proof, an HMAC): its bytes must not be
	// shown either; see Message.Redact.
	Secret bool
	// Decompressed marks a node inside decompressed record data: its offset counts from the
	// start of the decompressed bytes, not from the frame. The compressed payload that holds
	// such nodes has type wire.CompressedRecords and counts as a leaf of the frame.
	Decompressed bool
	// PrefixSize is the number of bytes of the length or count that starts the node (a
	// string's, bytes', array's, records' or tagged section's), written as Type.Prefix() says;
	// 0 for a node without one. See Prefix.
	PrefixSize uint8
	// Bits says how the bits of an integer node are named (a batch's attributes, ACL
	// operations); wire.NoBits for plain numbers.
	Bits wire.BitField
	// Overflow holds the bits of the node's zigzag varint (its own, or its prefix's) above
	// those its value keeps: a 5-byte varint carries 35 bits and a 32-bit value keeps 32, a
	// 10-byte varlong 70 for 64 (Kafka drops the rest, as kdissect does). With them AppendRaw
	// gives back the bytes exactly.
	Overflow uint8
	// flags holds badPrefix and later.
	flags nodeFlags
	// role is what the node's value says to the facts (factRole), from its definition.
	role factRole
	// The small fields above fill what would otherwise be padding before Offset: a Node is
	// 104 bytes with or without them (TestNodeSize).
	Offset int
	Size   int
	// Value is int64 for integers (and array counts), float64, bool, string, []byte, UUID, or
	// nil for null values and for structs.
	Value    any
	Children []*Node
	// Def is the definition the node was decoded by (for an array's elements, the array's);
	// nil for headers' synthetic nodes and records.
	Def *schema.Field
	// Note is a remark to show beside the value (the topic name of a topic id).
	Note string
}

// nodeFlags are a node's marks that no output shows as such.
type nodeFlags uint8

const (
	// badPrefix marks a node whose prefix says something its content does not show: a length
	// beyond the bytes left, or below -1. Decoding stopped there.
	badPrefix nodeFlags = 1 << iota
	// later marks a records field whose records are decoded when shown (Unexpanded).
	later
)

// Head is the number of bytes of n that belong to no child: the length or count prefix of a
// string, array or tagged section, or all of n for a leaf.
func (n *Node) Head() int {
	if n.Unexpanded() {
		return int(n.PrefixSize) // its records start after the prefix
	}
	if len(n.Children) == 0 || n.Type == wire.CompressedRecords {
		return n.Size
	}
	return n.Children[0].Offset - n.Offset
}

// Unexpanded reports whether n is a records field whose records are decoded only when they are
// shown (Codec.LazyRecords): it has children, but they are not in Children; Message.ExpandRecords
// gives them.
func (n *Node) Unexpanded() bool { return n.flags&later != 0 }

// PrefixInfo describes the length or count at the start of a node.
type PrefixInfo struct {
	// Offset and Size are where the prefix is in the frame (or in the decompressed data): the
	// node's first Size bytes. Its content starts at Offset + Size.
	Offset, Size int
	Encoding     wire.Prefix
	// Value is the number as written: a compact string's length + 1, -1 for a classic null,
	// the signed value of a record-format varint.
	Value int64
	// Known is false when the node does not show the value: the prefix said more bytes than
	// were left, or a negative length (decoding stopped there, with a warning).
	Known bool
}

// Prefix returns the length or count prefix of n; ok is false for a node without one.
func (n *Node) Prefix() (p PrefixInfo, ok bool) {
	if n.PrefixSize == 0 {
		return PrefixInfo{}, false
	}
	p = PrefixInfo{Offset: n.Offset, Size: int(n.PrefixSize), Encoding: n.Type.Prefix(), Known: n.flags&badPrefix == 0}
	if !p.Known {
		return p, true
	}
	if n.Type.IsArray() || n.Type == wire.TaggedFields {
		// The count is the node's value; nil for a null array.
		c, isInt := n.Value.(int64)
		p.Value = n.Type.PrefixValue(c, !isInt)
		return p, true
	}
	content := int64(n.Size - p.Size)
	p.Value = n.Type.PrefixValue(content, n.Value == nil && content == 0)
	return p, true
}

// Content is where the node's content starts, after its prefix, and how many bytes it takes.
func (n *Node) Content() (offset, size int) {
	return n.Offset + int(n.PrefixSize), n.Size - int(n.PrefixSize)
}

// Null reports whether n is a null string, bytes, array or records value (its prefix says null
// and it has no value) or a null struct (its marker, its only child, is negative).
func (n *Node) Null() bool {
	if n.Type == wire.NullableStruct {
		if len(n.Children) != 1 {
			return false
		}
		marker, _ := n.Children[0].Value.(int64)
		return marker < 0
	}
	p, ok := n.Prefix()
	if !ok || !p.Known || n.Value != nil {
		return false
	}
	_, null := n.Type.Length(p.Value)
	return null
}

// AppendRaw appends the bytes of a varint node (wire.Uvarint, Varint, Varlong) as they were on
// the wire, or, for any other node, those of its varint prefix; it appends nothing for nodes
// with neither. The bytes are rebuilt from the value, the size and the bits the value drops,
// so they are exact even for varints written longer than they need.
func (n *Node) AppendRaw(b []byte) []byte {
	var u uint64
	size := n.Size
	switch {
	case n.Type.IsVarint():
		v, _ := n.Value.(int64)
		switch n.Type {
		case wire.Uvarint:
			u = uint64(v)
		case wire.Varint:
			u = uint64(uint32(wire.ZigzagEncode(v)))
		default:
			u = wire.ZigzagEncode(v)
		}
	case n.PrefixSize > 0 && n.flags&badPrefix == 0 && (n.Type.Prefix() == wire.UvarintPrefix || n.Type.Prefix() == wire.VarintPrefix):
		p, _ := n.Prefix()
		size = int(n.PrefixSize)
		u = uint64(p.Value)
		if n.Type.Zigzag() {
			u = uint64(uint32(wire.ZigzagEncode(p.Value)))
		}
	default:
		return b
	}
	return appendVarint(b, u, uint64(n.Overflow), size, n.Type == wire.Varlong)
}

// AppendPrefix appends the bytes of n's length or count prefix, whatever its encoding; it
// appends nothing when n has none, or when the node does not show the prefix's value
// (PrefixInfo.Known).
func (n *Node) AppendPrefix(b []byte) []byte {
	p, ok := n.Prefix()
	if !ok || !p.Known {
		return b
	}
	switch p.Encoding {
	case wire.Int16Prefix:
		return binary.BigEndian.AppendUint16(b, uint16(p.Value))
	case wire.Int32Prefix:
		return binary.BigEndian.AppendUint32(b, uint32(p.Value))
	}
	if n.Type.IsVarint() {
		return b
	}
	return n.AppendRaw(b)
}

// appendVarint appends the size bytes of a varint carrying u, and above it (from bit 32, or
// bit 64 for a varlong) the bits high.
func appendVarint(b []byte, u, high uint64, size int, long bool) []byte {
	for i := range size {
		var g uint64
		switch {
		case i < 9:
			g = u >> (7 * i)
		default:
			g = u >> 63 // the tenth byte of a varlong: bit 63, then high
		}
		if long && i == 9 {
			g |= high << 1
		} else if !long && i == 4 {
			g |= high << 4 // bits 32 to 34 sit above bit 28, where the fifth byte starts
		}
		c := byte(g & 0x7f)
		if i < size-1 {
			c |= 0x80
		}
		b = append(b, c)
	}
	return b
}

// Redact returns a copy of frame with the bytes of every secret node overwritten with '*', for
// hex dumps. The frame is returned as is when nothing is secret.
func (m *Message) Redact(frame []byte) []byte {
	out := frame
	Walk(m.Fields, func(n *Node, _ int) bool {
		if n.Secret && !n.Decompressed && n.Offset >= 0 && n.Offset+n.Size <= len(frame) {
			if &out[0] == &frame[0] {
				out = append([]byte(nil), frame...)
			}
			for i := n.Offset; i < n.Offset+n.Size; i++ {
				out[i] = '*'
			}
		}
		return true
	})
	return out
}

// Find returns the first node named name in a depth-first walk of nodes, or nil.
func Find(nodes []*Node, name string) *Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
		if c := Find(n.Children, name); c != nil {
			return c
		}
	}
	return nil
}

// topLevel returns the node named name among nodes, not below them, or nil: for a field that
// only the top of a header or body holds, cheaper than Find.
func topLevel(nodes []*Node, name string) *Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Walk calls fn for every node in depth-first order, with its depth; fn returning false skips
// the node's children.
func Walk(nodes []*Node, fn func(n *Node, depth int) bool) { walkFrom(nodes, 0, fn) }

func walkFrom(nodes []*Node, depth int, fn func(n *Node, depth int) bool) {
	for _, n := range nodes {
		if fn(n, depth) {
			walkFrom(n.Children, depth+1, fn)
		}
	}
}

// Printable reports whether b is valid UTF-8 made of printable characters (and ordinary white
// space): such bytes are shown as text, others as hex.
func Printable(b []byte) bool {
	for i := 0; i < len(b); {
		// Eight bytes at a time while they are all printable ASCII, as record values mostly are.
		if len(b)-i >= 8 && ascii.Unprintable(ascii.Word(b[i:])) == 0 {
			i += 8
			continue
		}
		// ASCII, almost all of it, without a rune decoded: printable from space to tilde.
		if c := b[i]; c < utf8.RuneSelf {
			if (c < ' ' || c > '~') && c != '\n' && c != '\t' && c != '\r' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 || !unicode.IsPrint(r) {
			return false
		}
		i += size
	}
	return true
}

// UUID is a Kafka UUID (topic ids, member ids).
type UUID [16]byte

// String is Kafka's own rendering: URL-safe base64 without padding.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// UUIDTextLen is the length of a UUID as Kafka prints it (UUID.String): 16 bytes in unpadded
// base64.
const UUIDTextLen = 22

// AppendText appends u.String() to b; it never fails (encoding.TextAppender).
func (u UUID) AppendText(b []byte) ([]byte, error) {
	return base64.RawURLEncoding.AppendEncode(b, u[:]), nil
}

// Hex is the UUID in the usual 8-4-4-4-12 hex form.
func (u UUID) Hex() string {
	h := hex.EncodeToString(u[:])
	return fmt.Sprintf("%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:])
}

// Warning is a decoding problem at a byte offset of the frame.
type Warning struct {
	Offset int
	Msg    string
}

func (w Warning) String() string { return fmt.Sprintf("offset 0x%04x: %s", w.Offset, w.Msg) }
