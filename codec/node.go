// Package codec is kdissect's Kafka protocol engine: one interpreter that walks a frame's bytes by
// the definitions of package schema and builds a tree of fields with their offsets and sizes; the
// request and response headers; the error-code table; and the per-connection state that pairs
// responses with requests. It knows nothing of packets or of output formats.
package codec

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
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
	Offset       int
	Size         int
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

// Head is the number of bytes of n that belong to no child: the length or count prefix of a
// string, array or tagged section, or all of n for a leaf.
func (n *Node) Head() int {
	if len(n.Children) == 0 || n.Type == wire.CompressedRecords {
		return n.Size
	}
	return n.Children[0].Offset - n.Offset
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
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' && r != '\r' {
			return false
		}
	}
	return true
}

// UUID is a Kafka UUID (topic ids, member ids).
type UUID [16]byte

// String is Kafka's own rendering: URL-safe base64 without padding.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

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
