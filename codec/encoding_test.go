package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
	"unsafe"

	"github.com/kdissect/kdissect/codec/wire"
)

// TestNodeSize: the prefix size, bit field and varint overflow live in what was padding; a
// Node costs what it did before them.
func TestNodeSize(t *testing.T) {
	if s := unsafe.Sizeof(Node{}); s != 104 {
		t.Errorf("a Node is %d bytes, want 104", s)
	}
}

// EncodingCounts says how many nodes CheckEncodings looked at, by kind.
type EncodingCounts struct {
	Prefixed, Nulls, Varints, VarintPrefixes, FromBytes, Decompressed, Bits int
}

func (c *EncodingCounts) Add(o EncodingCounts) {
	c.Prefixed += o.Prefixed
	c.Nulls += o.Nulls
	c.Varints += o.Varints
	c.VarintPrefixes += o.VarintPrefixes
	c.FromBytes += o.FromBytes
	c.Decompressed += o.Decompressed
	c.Bits += o.Bits
}

// CheckEncodings checks what the nodes say about their encodings against b, the bytes their
// offsets count in (the frame), and against themselves: for every node with a prefix, prefix
// offset + size is where the content (and the first child) starts, prefix size + content size
// is the node's size, the prefix's bytes in b hold its value, and a null prefix makes a null
// node; for every varint, AppendRaw is the bytes in b and decodes, by a decoder of this test's
// own, to the node's value. Nodes inside decompressed data, whose bytes are not in b, are
// checked against themselves. It returns the problems found.
func CheckEncodings(nodes []*Node, b []byte) (problems []string, c EncodingCounts) {
	bad := func(n *Node, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s (%s) at 0x%04x+%d: %s", n.Name, n.Type, n.Offset, n.Size, fmt.Sprintf(format, args...)))
	}
	inBytes := func(n *Node, off, size int) []byte {
		if n.Decompressed || off < 0 || size < 0 || off+size > len(b) {
			return nil
		}
		return b[off : off+size]
	}
	Walk(nodes, func(n *Node, _ int) bool {
		if n.Decompressed {
			c.Decompressed++
		}
		if n.Bits != wire.NoBits {
			c.Bits++
			if _, ok := n.Value.(int64); !ok || len(n.Bits.Bits(n.Value.(int64))) == 0 {
				bad(n, "bit field %s without bits", n.Bits)
			}
		}
		p, ok := n.Prefix()
		switch {
		case ok:
			c.Prefixed++
			start, size := n.Content()
			if p.Offset != n.Offset || p.Offset+p.Size != start || p.Size+size != n.Size || size < 0 {
				bad(n, "prefix at 0x%04x+%d, content at 0x%04x+%d", p.Offset, p.Size, start, size)
			}
			if len(n.Children) > 0 && n.Children[0].Offset != start && !n.Children[0].Decompressed {
				bad(n, "content starts at 0x%04x, the first child at 0x%04x", start, n.Children[0].Offset)
			}
			if p.Encoding == wire.NoPrefix {
				bad(n, "a prefix of no encoding")
			}
			if !p.Known {
				break
			}
			length, null := n.Type.Length(p.Value)
			if null {
				c.Nulls++
				if !n.Null() || n.Value != nil || size != 0 || len(n.Children) != 0 {
					bad(n, "null prefix %d, but value %v, %d content bytes, %d children", p.Value, n.Value, size, len(n.Children))
				}
			} else if !n.Type.IsArray() && n.Type != wire.TaggedFields && length != int64(size) {
				bad(n, "prefix %d says %d bytes, the content has %d", p.Value, length, size)
			}
			raw := n.AppendRaw(nil)
			if p.Encoding == wire.UvarintPrefix || p.Encoding == wire.VarintPrefix {
				c.VarintPrefixes++
				if v, k, ok := testVarint(raw, n.Type.Zigzag(), 32); !ok || k != p.Size || v != p.Value {
					bad(n, "prefix raw %x decodes to %d in %d bytes, want %d in %d", raw, v, k, p.Value, p.Size)
				}
			} else if len(raw) != 0 {
				bad(n, "raw %x for a fixed-size prefix", raw)
			}
			if on := inBytes(n, p.Offset, p.Size); on != nil {
				c.FromBytes++
				if pb := n.AppendPrefix(nil); !bytes.Equal(pb, on) {
					bad(n, "AppendPrefix gives %x, the bytes are %x", pb, on)
				}
				var v int64
				switch p.Encoding {
				case wire.Int16Prefix:
					v = int64(int16(binary.BigEndian.Uint16(on)))
				case wire.Int32Prefix:
					v = int64(int32(binary.BigEndian.Uint32(on)))
				default:
					if !bytes.Equal(raw, on) {
						bad(n, "prefix raw %x, the bytes are %x", raw, on)
					}
					v, _, _ = testVarint(on, n.Type.Zigzag(), 32)
				}
				if v != p.Value {
					bad(n, "prefix value %d, the bytes %x say %d", p.Value, on, v)
				}
			}
		case n.Type.Prefix() != wire.NoPrefix && n.Type != wire.Bytes:
			// Only bytes that kdissect cuts out of others (undecoded, unparsed, a token) have
			// a prefixed type and no prefix.
			bad(n, "no prefix")
		}
		if n.Type.IsVarint() {
			c.Varints++
			raw := n.AppendRaw(nil)
			width := 32
			if n.Type == wire.Varlong {
				width = 64
			}
			v, k, ok := testVarint(raw, n.Type.Zigzag(), width)
			if want, _ := n.Value.(int64); !ok || k != n.Size || v != want {
				bad(n, "raw %x decodes to %d in %d bytes, want %v", raw, v, k, n.Value)
			}
			if on := inBytes(n, n.Offset, n.Size); on != nil {
				c.FromBytes++
				if !bytes.Equal(raw, on) {
					bad(n, "raw %x, the bytes are %x", raw, on)
				}
			}
		}
		return true
	})
	return problems, c
}

// testVarint decodes a varint as Kafka does, independently of the code under test: unsigned
// (all 35 bits of five bytes kept: compact lengths) or zigzag, keeping the low width bits before
// undoing the zigzag. It returns the value and the bytes read.
func testVarint(b []byte, zigzag bool, width int) (int64, int, bool) {
	var u uint64
	for i, c := range b {
		if i < 10 {
			u |= uint64(c&0x7f) << (7 * uint(i))
		}
		if c&0x80 == 0 {
			if !zigzag {
				return int64(u), i + 1, true
			}
			if width == 32 {
				x := uint32(u)
				return int64(int32(x>>1) ^ -int32(x&1)), i + 1, true
			}
			return int64(u>>1) ^ -int64(u&1), i + 1, true
		}
	}
	return 0, len(b), false
}

// TestAppendRawOverflow: a varint written longer than it needs, and one whose fifth byte
// carries bits a 32-bit value drops, come back byte for byte.
func TestAppendRawOverflow(t *testing.T) {
	for _, tt := range []struct {
		n    Node
		want []byte
	}{
		{Node{Type: wire.Uvarint, Size: 1, Value: int64(11)}, []byte{0x0b}},
		{Node{Type: wire.Uvarint, Size: 2, Value: int64(11)}, []byte{0x8b, 0x00}},
		{Node{Type: wire.Uvarint, Size: 2, Value: int64(300)}, []byte{0xac, 0x02}},
		{Node{Type: wire.Varint, Size: 1, Value: int64(-10)}, []byte{0x13}},
		{Node{Type: wire.Varint, Size: 5, Value: int64(-1)}, []byte{0x81, 0x80, 0x80, 0x80, 0x00}},
		{Node{Type: wire.Varint, Size: 5, Value: int64(0), Overflow: 7}, []byte{0x80, 0x80, 0x80, 0x80, 0x70}},
		{Node{Type: wire.Varint, Size: 5, Value: int64(-2147483648)}, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
		{Node{Type: wire.Varlong, Size: 10, Value: int64(-9223372036854775808)}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{Node{Type: wire.Varlong, Size: 10, Value: int64(0), Overflow: 0x3f}, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7e}},
		// A varint-prefixed null and a compact string of 10 bytes.
		{Node{Type: wire.VarintBytes, Size: 1, PrefixSize: 1}, []byte{0x01}},
		{Node{Type: wire.CompactString, Size: 11, PrefixSize: 1, Value: "sarama-adm"}, []byte{0x0b}},
		{Node{Type: wire.CompactNullableString, Size: 1, PrefixSize: 1}, []byte{0x00}},
		{Node{Type: wire.String, Size: 2, PrefixSize: 2, Value: ""}, nil},
	} {
		if got := tt.n.AppendRaw(nil); !bytes.Equal(got, tt.want) {
			t.Errorf("%s %v size %d overflow %d: raw %x, want %x", tt.n.Type, tt.n.Value, tt.n.Size, tt.n.Overflow, got, tt.want)
		}
	}
}
