package records

import (
	"fmt"
	"hash/crc32"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
)

// message decodes a legacy message (magic 0 or 1) at b[p:end]. A compressed wrapper's value is
// itself a message set, decoded into the decompressed space.
func (s *space) message(p, end int, magic int8) (*codec.Node, msgInfo) {
	n := s.node("message", wire.Message, p, end-p, nil)
	r := reader{s: s, pos: p, end: end, kids: s.nodes.List(8)}
	offset := r.int("offset", wire.Int64)
	r.int("messageSize", wire.Int32)
	crc := uint32(r.int("crc", wire.Uint32))
	crcNode := r.last("crc")
	r.int("magic", wire.Int8)
	bits := wire.MessageAttributes
	if magic == 0 {
		bits = wire.MessageAttributesV0
	}
	attrs := r.bits("attributes", wire.Int8, bits)
	ts := int64(-1)
	if magic == 1 {
		ts = r.int("timestamp", wire.Int64)
	}
	what := func() string { return fmt.Sprintf("message at offset %d", s.base+p) }
	c := crc32.ChecksumIEEE(s.b[p+16 : end])
	if crcNode != nil {
		crcNode.Note = crcVerdict(crc, c)
	}
	if c != crc {
		s.warn(p+12, "%s: crc 0x%08x does not match computed 0x%08x", what(), crc, c)
	}
	r.bytes32("key")
	id := wire.Attributes(attrs).Codec()
	value, data, present := r.bytes32("value")
	extra := ""
	if id != wire.NoCompression && r.bad == "" {
		extra = codecName(id) + " wrapper"
		if !present {
			s.warn(value.Offset-s.base, "%s: compressed wrapper with a null value", what())
		} else {
			// The value holds a message set, like a records field: its length, then the
			// compressed payload.
			value.Type, value.Value = wire.Records, int64(len(data))
			value.Children = []*codec.Node{s.compressed(r.pos-len(data), r.pos, id, what(), func(in *space) []*codec.Node {
				nodes, inner := in.entries()
				setInnerOffsets(s.times, inner, magic, offset, ts, attrs)
				return nodes
			})}
		}
	}
	if !r.done() {
		r.finish(what())
	}
	n.Children = r.kids
	n.Value = s.times.describe(offset, ts, magic == 1, extra)
	return n, msgInfo{node: n, offset: offset, timestamp: ts, magic: magic}
}

// setInnerOffsets states the absolute offsets of the messages inside a compressed wrapper. In
// magic 1 the inner offsets are relative and the wrapper carries the offset of the last inner
// message; in magic 0 they are absolute. With log append time (attributes bit 3) the wrapper's
// timestamp is every inner message's.
func setInnerOffsets(a *timeCache, inner []msgInfo, magic int8, offset, ts, attrs int64) {
	if len(inner) == 0 {
		return
	}
	var shift int64
	if magic == 1 {
		shift = offset - inner[len(inner)-1].offset
	}
	for _, m := range inner {
		t := m.timestamp
		if magic == 1 && wire.Attributes(attrs).Has(wire.LogAppendTime) {
			t = ts
		}
		m.node.Value = a.describe(shift+m.offset, t, m.magic == 1, "")
	}
}
