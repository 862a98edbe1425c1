package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/kdissect/kdissect/codec/schema"
)

// decoder walks bytes by definition. It stops at the first field that does not fit and records
// a warning; what was decoded before stays in the tree.
type decoder struct {
	records  RecordsDecoder
	b        []byte
	pos, end int
	version  int16
	flex     bool
	warnings *[]Warning
	failed   bool
	slab     *[]Node
	show     bool // show secrets
}

func (d *decoder) warn(off int, format string, args ...any) {
	*d.warnings = append(*d.warnings, Warning{Offset: off, Msg: fmt.Sprintf(format, args...)})
}

// fail records a fatal problem: decoding stops here.
func (d *decoder) fail(off int, format string, args ...any) {
	d.warn(off, format, args...)
	d.failed = true
}

// node returns a pointer to a copy of n, taken from a slab so that a large message does not
// cost one allocation per field.
func (d *decoder) node(n Node) *Node {
	if len(*d.slab) == cap(*d.slab) {
		*d.slab = make([]Node, 0, min(512, max(16, 2*cap(*d.slab))))
	}
	*d.slab = append(*d.slab, n)
	return &(*d.slab)[len(*d.slab)-1]
}

func (d *decoder) left() int { return d.end - d.pos }

// need checks that n more bytes exist for the named field.
func (d *decoder) need(n int, name, typ string) bool {
	if d.failed {
		return false
	}
	if n > d.left() {
		d.fail(d.pos, "%s (%s) needs %d bytes, %d left", name, typ, n, d.left())
		return false
	}
	return true
}

// uvarint reads an unsigned varint of at most 5 bytes (Kafka's lengths are 32-bit).
func (d *decoder) uvarint(name string) (uint64, int, bool) {
	if d.failed {
		return 0, 0, false
	}
	var v uint64
	for i := 0; i < 5; i++ {
		if d.pos+i >= d.end {
			d.fail(d.pos, "%s (uvarint) runs past the end of the data", name)
			return 0, 0, false
		}
		c := d.b[d.pos+i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			d.pos += i + 1
			return v, i + 1, true
		}
	}
	d.fail(d.pos, "%s (uvarint) is longer than 5 bytes", name)
	return 0, 0, false
}

// structBody decodes the fields of s present at the decoder's version, then, in flexible
// versions, the struct's tagged fields.
func (d *decoder) structBody(s *schema.StructDef) []*Node {
	var out []*Node
	for _, f := range s.Fields {
		if d.failed {
			return out
		}
		if !f.Versions.Contains(d.version) || f.Tagged(d.version) {
			continue
		}
		if n := d.field(f, f.Name); n != nil {
			out = append(out, n)
		}
	}
	if d.flex && !d.failed {
		if n := d.taggedSection(s); n != nil {
			out = append(out, n)
		}
	}
	return out
}

// compact reports whether f uses the compact encodings at this version.
func (d *decoder) compact(f *schema.Field) bool {
	if f.FlexibleVersions != nil {
		return f.FlexibleVersions.Contains(d.version)
	}
	return d.flex
}

// field decodes one field (any kind) named name.
func (d *decoder) field(f *schema.Field, name string) *Node {
	n := d.value(f, name)
	if n == nil {
		return nil
	}
	n.Def = f
	switch {
	case secretFields[f.Name] && f.Kind == schema.Bytes && n.Value != nil && !d.show:
		redact(n)
	case f.Name == "AuthBytes" && f.Kind == schema.Bytes:
		// SaslAuthenticate carries SASL tokens: the one place the protocol nests another.
		decodeSASL(n, d.show)
	}
	return n
}

func (d *decoder) value(f *schema.Field, name string) *Node {
	nullable := f.NullableVersions.Contains(d.version)
	switch f.Kind {
	case schema.Array:
		return d.array(f, name, nullable)
	case schema.Struct:
		start := d.pos
		n := d.node(Node{Name: name, Type: "struct", Offset: start})
		if nullable {
			if !d.need(1, name, "int8") {
				return nil
			}
			marker := int8(d.b[d.pos])
			d.pos++
			n.Type = "nullable_struct"
			n.Children = append(n.Children, d.node(Node{Name: "present", Type: "int8", Offset: start, Size: 1, Value: int64(marker)}))
			if marker < 0 {
				n.Size = 1
				return n
			}
		}
		n.Children = append(n.Children, d.structBody(f.Struct)...)
		n.Size = d.pos - start
		return n
	default:
		return d.scalar(f.Kind, name, nullable, d.compact(f))
	}
}

func (d *decoder) array(f *schema.Field, name string, nullable bool) *Node {
	start := d.pos
	typ := "array"
	var count int64
	if d.compact(f) {
		typ = "compact_array"
		u, _, ok := d.uvarint(name)
		if !ok {
			return nil
		}
		count = int64(u) - 1
	} else {
		if !d.need(4, name, typ) {
			return nil
		}
		count = int64(int32(binary.BigEndian.Uint32(d.b[d.pos:])))
		d.pos += 4
	}
	n := d.node(Node{Name: name, Type: typ, Offset: start})
	if count < 0 {
		n.Size = d.pos - start
		if count < -1 {
			d.fail(start, "%s: negative array length %d", name, count)
			return n
		}
		if !nullable {
			d.warn(start, "%s is null but the field is not nullable at v%d", name, d.version)
		}
		return n
	}
	n.Value = count
	// Every element takes at least one byte: refuse counts the remaining bytes cannot hold
	// before looping or allocating anything.
	if min := int64(d.minSize(f)); count*min > int64(d.left()) {
		d.fail(start, "%s: array of %d elements cannot fit in the %d bytes left", name, count, d.left())
		n.Size = d.pos - start
		return n
	}
	for i := int64(0); i < count && !d.failed; i++ {
		elemName := indexName(i)
		var e *Node
		if f.Elem == schema.Struct {
			es := d.pos
			e = d.node(Node{Name: elemName, Type: "struct", Offset: es})
			e.Children = d.structBody(f.Struct)
			e.Size = d.pos - es
		} else {
			e = d.scalar(f.Elem, elemName, false, d.compact(f))
		}
		if e != nil {
			e.Def = f
			n.Children = append(n.Children, e)
		}
	}
	n.Size = d.pos - start
	return n
}

// indexNames holds the names of the first array elements, so that decoding a large array does
// not format a name per element. It is filled once and never written again.
var indexNames = func() []string {
	s := make([]string, 1024)
	for i := range s {
		s[i] = "[" + strconv.Itoa(i) + "]"
	}
	return s
}()

func indexName(i int64) string {
	if i < int64(len(indexNames)) {
		return indexNames[i]
	}
	return "[" + strconv.FormatInt(i, 10) + "]"
}

// minSize is the fewest bytes one element of array field f can take (at least 1).
func (d *decoder) minSize(f *schema.Field) int {
	if s := f.Elem.FixedSize(); s > 0 {
		return s
	}
	return 1
}

// varTypeName names the wire type of a string, bytes or records field.
func varTypeName(k schema.Kind, nullable, compact bool) string {
	switch {
	case k == schema.Records && compact:
		return "compact_records"
	case k == schema.Records:
		return "records"
	case k == schema.String:
		return [2][2]string{{"string", "nullable_string"}, {"compact_string", "compact_nullable_string"}}[b2i(compact)][b2i(nullable)]
	default:
		return [2][2]string{{"bytes", "nullable_bytes"}, {"compact_bytes", "compact_nullable_bytes"}}[b2i(compact)][b2i(nullable)]
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var fixedNames = map[schema.Kind]string{
	schema.Bool: "bool", schema.Int8: "int8", schema.Int16: "int16", schema.Uint16: "uint16",
	schema.Int32: "int32", schema.Uint32: "uint32", schema.Int64: "int64", schema.Float64: "float64",
	schema.UUID: "uuid",
}

// scalar decodes a non-struct, non-array value.
func (d *decoder) scalar(k schema.Kind, name string, nullable, compact bool) *Node {
	start := d.pos
	if size := k.FixedSize(); size > 0 {
		typ := fixedNames[k]
		if !d.need(size, name, typ) {
			return nil
		}
		b := d.b[d.pos : d.pos+size]
		d.pos += size
		n := d.node(Node{Name: name, Type: typ, Offset: start, Size: size})
		switch k {
		case schema.Bool:
			n.Value = b[0] != 0
		case schema.Int8:
			n.Value = int64(int8(b[0]))
		case schema.Int16:
			n.Value = int64(int16(binary.BigEndian.Uint16(b)))
		case schema.Uint16:
			n.Value = int64(binary.BigEndian.Uint16(b))
		case schema.Int32:
			n.Value = int64(int32(binary.BigEndian.Uint32(b)))
		case schema.Uint32:
			n.Value = int64(binary.BigEndian.Uint32(b))
		case schema.Int64:
			n.Value = int64(binary.BigEndian.Uint64(b))
		case schema.Float64:
			n.Value = math.Float64frombits(binary.BigEndian.Uint64(b))
		case schema.UUID:
			var u UUID
			copy(u[:], b)
			n.Value = u
		}
		return n
	}
	// Variable length: string, bytes, records.
	typ := varTypeName(k, nullable, compact)
	var length int64
	if compact {
		u, _, ok := d.uvarint(name)
		if !ok {
			return nil
		}
		length = int64(u) - 1
	} else if k == schema.String {
		if !d.need(2, name, typ) {
			return nil
		}
		length = int64(int16(binary.BigEndian.Uint16(d.b[d.pos:])))
		d.pos += 2
	} else {
		if !d.need(4, name, typ) {
			return nil
		}
		length = int64(int32(binary.BigEndian.Uint32(d.b[d.pos:])))
		d.pos += 4
	}
	n := d.node(Node{Name: name, Type: typ, Offset: start})
	if length < 0 {
		n.Size = d.pos - start
		if length < -1 {
			d.fail(start, "%s: negative length %d", name, length)
		} else if !nullable && k != schema.Records {
			d.warn(start, "%s is null but the field is not nullable at v%d", name, d.version)
		}
		return n
	}
	if length > int64(d.left()) {
		d.fail(start, "%s (%s) says %d bytes, %d left", name, typ, length, d.left())
		n.Size = d.pos - start
		return n
	}
	data := d.b[d.pos : d.pos+int(length)]
	d.pos += int(length)
	n.Size = d.pos - start
	switch {
	case k == schema.String:
		n.Value = string(data)
	case k == schema.Records && d.records != nil && len(data) > 0:
		var ws []Warning
		n.Children, ws = d.records.DecodeRecords(data, d.pos-len(data))
		*d.warnings = append(*d.warnings, ws...)
		n.Value = int64(len(data))
	default:
		n.Value = data
	}
	return n
}

// taggedSection decodes a flexible struct's tagged fields: known tags by their definition,
// unknown ones as raw bytes.
func (d *decoder) taggedSection(s *schema.StructDef) *Node {
	start := d.pos
	count, _, ok := d.uvarint("_tagged_fields")
	if !ok {
		return nil
	}
	n := d.node(Node{Name: "_tagged_fields", Type: "tagged_fields", Offset: start, Value: int64(count)})
	if count > uint64(d.left()) {
		d.fail(start, "_tagged_fields: %d tags cannot fit in the %d bytes left", count, d.left())
		n.Size = d.pos - start
		return n
	}
	for i := uint64(0); i < count && !d.failed; i++ {
		ts := d.pos
		tag, tl, ok := d.uvarint("tag")
		if !ok {
			break
		}
		size, sl, ok := d.uvarint("tag size")
		if !ok {
			break
		}
		if size > uint64(d.left()) {
			d.fail(ts, "tagged field %d says %d bytes, %d left", tag, size, d.left())
			break
		}
		var f *schema.Field
		for _, c := range s.Fields {
			if c.Tagged(d.version) && uint64(c.Tag) == tag {
				f = c
				break
			}
		}
		name := fmt.Sprintf("unknown tag %d", tag)
		if f != nil {
			name = f.Name
		}
		t := d.node(Node{Name: name, Type: "tagged_field", Offset: ts, Children: []*Node{
			{Name: "tag", Type: "uvarint", Offset: ts, Size: tl, Value: int64(tag)},
			{Name: "size", Type: "uvarint", Offset: ts + tl, Size: sl, Value: int64(size)},
		}})
		end := d.pos + int(size)
		if f == nil {
			t.Children = append(t.Children, d.node(Node{Name: "value", Type: "bytes", Offset: d.pos, Size: int(size), Value: d.b[d.pos:end]}))
		} else {
			sub := decoder{show: d.show, slab: d.slab, records: d.records, b: d.b, pos: d.pos, end: end, version: d.version, flex: true, warnings: d.warnings}
			if v := sub.field(f, f.Name); v != nil {
				t.Children = append(t.Children, v)
			}
			if !sub.failed && sub.pos != end {
				d.warn(sub.pos, "tagged field %s: %d of its %d bytes not decoded", f.Name, end-sub.pos, size)
				t.Children = append(t.Children, d.node(Node{Name: "unparsed", Type: "bytes", Offset: sub.pos, Size: end - sub.pos, Value: d.b[sub.pos:end]}))
			}
		}
		d.pos = end
		t.Size = d.pos - ts
		n.Children = append(n.Children, t)
	}
	n.Size = d.pos - start
	return n
}
