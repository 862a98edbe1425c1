package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/plural"
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
	nodes    *Nodes
	show     bool // show secrets
	// lazyRecords, when set, receives the records fields instead of their decoding (see
	// Codec.LazyRecords).
	lazyRecords *[]lazyRecords
	// paged, when set, holds the frame: each records field's memory is given back once it is
	// decoded (a summary's checks read every byte of a big Fetch response once).
	paged Paged
	// sasl, when set, is set to true once a SASL token's nodes are made (Message.sasl).
	sasl *bool
	// values, when set, keeps the values of UUIDs and short strings across decodes.
	values *keptValues
}

// Nodes hands out the nodes and child lists of one message's tree from slabs, so that a large
// message does not cost an allocation per field. Everything that decodes a part of the message
// (the interpreter, its tagged fields, the records decoder) takes from the message's Nodes, and
// Codec.Release gives it back, slabs and all, for the trees decoded after. The zero value is
// ready to use.
type Nodes struct {
	nodes []Node
	ptrs  []*Node
	// full holds the slabs filled before the current ones; spare, the slabs of a released
	// message, cleared, to be filled again. (Uncleared, a pooled slab would keep from the
	// collector whatever its old nodes pointed to: whole frames, in a full decode.)
	fullNodes, spareNodes [][]Node
	fullPtrs, sparePtrs   [][]*Node
	// nodeSlab and ptrSlab are the sizes of the last slabs made: slabs grow from small (most
	// messages are) and keep growing after a release.
	nodeSlab, ptrSlab int
	// inflated holds the decompressed data of the compressed payloads among the nodes.
	inflated []Inflated
	// spare is the buffer of a payload decompressed for EachRecord, once its batch's nodes are
	// given back: the next payload is decompressed into it (InflateBuffer).
	spare []byte
}

// keptValues keeps the values of the UUIDs and short strings decoded lately, for the trees
// decoded after. A Codec lends one to each decode (Codec.values), rather than each tree
// holding one: a format that holds many trees would hold as many.
type keptValues struct {
	uuids   uuidValues
	strings stringValues
}

// uuidValue returns u as a node's value, kept in d.values when the decode has them.
func (d *decoder) uuidValue(u UUID) any {
	if d.values == nil {
		return u
	}
	return d.values.uuids.value(u)
}

// stringValue returns b as a string node's value, kept in d.values when the decode has them.
func (d *decoder) stringValue(b []byte) any {
	if d.values == nil {
		return string(b)
	}
	return d.values.strings.value(b)
}

// uuidValues keeps the values (Node.Value) of a few UUIDs: consumers and producers name the
// same few topic ids in every message, each made a value once rather than for each message.
// A value is never written, and may be shared by any number of trees. There are entries for
// dozens, so that the ids of a few topics seldom share one and take it from each other at
// every message.
type uuidValues [64]struct {
	id UUID
	v  any
}

// value returns u as a node's value.
func (c *uuidValues) value(u UUID) any {
	e := &c[u[15]&63] // ids are random: their bytes spread them over the entries
	if e.v == nil || e.id != u {
		e.id, e.v = u, u
	}
	return e.v
}

// stringValues keeps the values of short strings, and pointers to them: a connection's
// requests all carry its client id, a producer's the same topics. Neither is ever written.
// There are entries for the client ids of a hundred connections or so.
type stringValues [128]keptString

// keptString is a string kept by stringValues: its value as a node's, and a pointer to it once
// one is asked for.
type keptString struct {
	s string
	v any
	p *string
}

// maxKeptString is the longest string stringValues keeps.
const maxKeptString = 64

// slot is where stringValues keeps s: a hash of all its bytes (FNV-1a), as client ids often
// differ in one character anywhere ("producer-11-gzip", "producer-12-gzip").
func slot[T ~string | ~[]byte](s T) int {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return int(h & (uint32(len(stringValues{})) - 1))
}

// value returns b as a string node's value.
func (c *stringValues) value(b []byte) any {
	if len(b) == 0 || len(b) > maxKeptString {
		return string(b)
	}
	e := &c[slot(b)]
	if e.v == nil || e.s != string(b) { // compared without making a string
		s := string(b)
		*e = keptString{s: s, v: s}
	}
	return e.v
}

// pointer returns a pointer to s, one kept for it when s is a value kept.
func (c *stringValues) pointer(s string) *string {
	if len(s) == 0 || len(s) > maxKeptString {
		return newString(s)
	}
	e := &c[slot(s)]
	if e.v == nil || e.s != s {
		return newString(s)
	}
	if e.p == nil {
		e.p = newString(s)
	}
	return e.p
}

// newString returns a pointer to a new copy of s (a function of its own: the parameter it
// takes the address of goes to the heap, and pointer's would on every call).
func newString(s string) *string { return &s }

// InflateBuffer returns a buffer to decompress a payload into, which the caller then owns:
// one that EachRecord gave back, or nil. So a records field read a batch at a time costs one
// buffer, not one per batch (and the memory of each to clear and collect).
func (a *Nodes) InflateBuffer() []byte {
	if a == nil {
		return nil
	}
	b := a.spare
	a.spare = nil
	return b
}

// maxSpareInflated bounds the buffer a Nodes keeps for decompressed payloads, so that one large
// batch does not leave its memory held for the small ones after it.
const maxSpareInflated = 4 << 20

// recycleInflated keeps the largest buffer of the payloads decompressed into a, within
// maxSpareInflated, for InflateBuffer; it is called only once their nodes are given back.
func (a *Nodes) recycleInflated() {
	for _, in := range a.inflated {
		if c := cap(in.Data); c > cap(a.spare) && c <= maxSpareInflated {
			a.spare = in.Data
		}
	}
}

// Inflated is one compressed payload of a message (a node of type wire.CompressedRecords) and
// its decompressed bytes, to which the offsets of the payload's children count: what a hex dump
// of the decompressed records shows.
type Inflated struct {
	Node *Node
	Data []byte
}

// KeepInflated records that data is the decompressed form of the payload node n, for
// Message.Inflated. The records decoder calls it; data must not change afterwards.
func (a *Nodes) KeepInflated(n *Node, data []byte) {
	a.inflated = append(a.inflated, Inflated{Node: n, Data: data})
}

// Bounds on the spare slabs a Nodes keeps, so that one giant message does not leave its
// memory in the pool for the small ones after it; most trees of summaries have a few dozen.
const (
	maxSpareNodes = 1024
	maxSparePtrs  = 2048
)

// nextNodes starts a new node slab: a spare one if there is one.
func (a *Nodes) nextNodes() {
	if a.nodes != nil {
		a.fullNodes = append(a.fullNodes, a.nodes)
	}
	if n := len(a.spareNodes); n > 0 {
		a.nodes, a.spareNodes[n-1], a.spareNodes = a.spareNodes[n-1], nil, a.spareNodes[:n-1]
		return
	}
	a.nodeSlab = min(512, max(8, 2*a.nodeSlab))
	a.nodes = make([]Node, 0, a.nodeSlab)
}

// nextPtrs starts a new slab of child lists with room for at least n: a spare one if one is
// large enough.
func (a *Nodes) nextPtrs(n int) {
	if a.ptrs != nil {
		a.fullPtrs = append(a.fullPtrs, a.ptrs)
	}
	if k := len(a.sparePtrs); k > 0 && cap(a.sparePtrs[k-1]) >= n {
		a.ptrs, a.sparePtrs[k-1], a.sparePtrs = a.sparePtrs[k-1], nil, a.sparePtrs[:k-1]
		return
	}
	a.ptrSlab = min(1024, max(64, 2*a.ptrSlab))
	a.ptrs = make([]*Node, 0, a.ptrSlab)
}

// release clears the slabs and keeps them, within bounds, to be filled again.
func (a *Nodes) release() {
	if a.nodes != nil {
		a.fullNodes = append(a.fullNodes, a.nodes)
	}
	if a.ptrs != nil {
		a.fullPtrs = append(a.fullPtrs, a.ptrs)
	}
	a.spareNodes = keepSpare(a.spareNodes, a.fullNodes, maxSpareNodes)
	a.sparePtrs = keepSpare(a.sparePtrs, a.fullPtrs, maxSparePtrs)
	clear(a.fullNodes)
	clear(a.fullPtrs)
	clear(a.inflated)
	a.inflated = a.inflated[:0]
	a.fullNodes, a.fullPtrs, a.nodes, a.ptrs = a.fullNodes[:0], a.fullPtrs[:0], nil, nil
}

// used returns the number of nodes taken from a's slabs, and the number the slabs hold,
// spare ones included.
func (a *Nodes) used() (used, held int) {
	used, held = len(a.nodes), cap(a.nodes)
	for _, l := range [][][]Node{a.fullNodes, a.spareNodes} {
		for _, s := range l {
			used, held = used+len(s), held+cap(s)
		}
	}
	return used, held
}

// keepSpare clears the slabs and appends them to spare, as long as spare holds at most limit
// elements in all; the others are left to the collector.
func keepSpare[T any](spare, slabs [][]T, limit int) [][]T {
	kept := 0
	for _, s := range spare {
		kept += cap(s)
	}
	for _, s := range slabs {
		if kept+cap(s) <= limit {
			kept += cap(s)
			clear(s)
			spare = append(spare, s[:0])
		}
	}
	return spare
}

func (d *decoder) warn(off int, format string, args ...any) {
	*d.warnings = append(*d.warnings, Warning{Offset: off, Msg: fmt.Sprintf(format, args...)})
}

// fail records a fatal problem: decoding stops here.
func (d *decoder) fail(off int, format string, args ...any) {
	d.warn(off, format, args...)
	d.failed = true
}

// Add returns a pointer to a copy of n, taken from a slab.
func (a *Nodes) Add(n Node) *Node {
	p := a.next()
	*p = n
	return p
}

// next returns a zero node taken from a slab, for the caller to fill: the decoder's nodes are
// filled in place, which costs less than copying a whole Node in (Add). Slabs are zero beyond
// their length: made so, or cleared when given back.
func (a *Nodes) next() *Node {
	if len(a.nodes) == cap(a.nodes) {
		a.nextNodes()
	}
	a.nodes = a.nodes[:len(a.nodes)+1]
	return &a.nodes[len(a.nodes)-1]
}

// List returns an empty child list with room for n nodes, taken from a slab. Its capacity ends
// at n, so that appending more moves it rather than overwrite its neighbour's.
func (a *Nodes) List(n int) []*Node {
	if n > 64 {
		return make([]*Node, 0, n)
	}
	if cap(a.ptrs)-len(a.ptrs) < n {
		a.nextPtrs(n)
	}
	l := len(a.ptrs)
	a.ptrs = a.ptrs[:l+n]
	return a.ptrs[l : l : l+n]
}

func (d *decoder) node(n Node) *Node      { return d.nodes.Add(n) }
func (d *decoder) children(n int) []*Node { return d.nodes.List(n) }

func (d *decoder) left() int { return d.end - d.pos }

// need checks that n more bytes exist for the named field.
func (d *decoder) need(n int, name string, typ wire.Type) bool {
	if d.failed {
		return false
	}
	if n > d.left() {
		d.fail(d.pos, "%s (%s) needs %s, %d left", name, typ, plural.Count(n, "byte"), d.left())
		return false
	}
	return true
}

// uvarint reads an unsigned varint of at most 5 bytes (Kafka's lengths are 32-bit).
func (d *decoder) uvarint(name string) (uint64, int, bool) {
	if d.failed {
		return 0, 0, false
	}
	if p := d.pos; p < d.end && d.b[p] < 0x80 {
		d.pos = p + 1 // one byte, as most counts and lengths are
		return uint64(d.b[p]), 1, true
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
// versions, the struct's tagged fields, and appends their nodes to out. With a shallow plan p,
// only the fields p keeps get nodes; the others are skipped (see Codec.Shallow), those of fixed
// size in runs, at once, where the bytes hold them all.
func (d *decoder) structBody(s *schema.StructDef, p *shallowPlan, out []*Node) []*Node {
	return d.body(s, p, p.stepsAt(d.version), out)
}

// body is structBody with the steps of p at the decoder's version (nil: field by field), which
// an array finds once for all its elements.
func (d *decoder) body(s *schema.StructDef, p *shallowPlan, steps []planStep, out []*Node) []*Node {
	if steps != nil {
		for i := range steps {
			st := &steps[i] // not copied: a step is five words
			if d.failed {
				return out
			}
			switch {
			case st.skip > 0 && st.skip <= d.left():
				d.pos += st.skip
			case st.fixed > 0:
				// A kept value of fixed size: read as field reads it, without its checks of
				// the kinds that vary.
				f := s.Fields[st.first]
				if n := d.fixed(f.Kind, st.fixed, f.Name); n != nil {
					out = append(out, d.define(n, f, st.role))
				}
			case st.skip == 0:
				// A field kept or of variable size, in the body at this version.
				out = d.one(s.Fields[st.first], p, st.first, out)
			default:
				// A run cut short: field by field, for the warning of the one that does not
				// fit.
				out = d.fields(s, p, st.first, st.last, out)
			}
		}
	} else {
		out = d.fields(s, p, 0, len(s.Fields), out)
	}
	if d.flex && !d.failed {
		if n := d.taggedSection(s, p); n != nil {
			out = append(out, n)
		}
	}
	return out
}

// fields decodes the fields of s from first to last-1 that are present at the decoder's
// version, as structBody does, and appends their nodes to out.
func (d *decoder) fields(s *schema.StructDef, p *shallowPlan, first, last int, out []*Node) []*Node {
	for i := first; i < last; i++ {
		f := s.Fields[i]
		if d.failed {
			return out
		}
		if f.InBody(d.version) {
			out = d.one(f, p, i, out)
		}
	}
	return out
}

// one decodes field f, the i-th of its struct, present at the decoder's version, and appends
// its node to out; with a shallow plan p, only if p keeps it (else it is skipped).
func (d *decoder) one(f *schema.Field, p *shallowPlan, i int, out []*Node) []*Node {
	var sub *shallowPlan
	if p != nil {
		if !p.keep[i] {
			d.skip(f)
			return out
		}
		sub = p.sub[i]
	}
	if n := d.field(f, sub); n != nil {
		out = append(out, n)
	}
	return out
}

// bodyCap is the most nodes structBody makes for s with plan p: one per field kept, and one for
// the tagged fields.
func bodyCap(s *schema.StructDef, p *shallowPlan) int {
	if p != nil {
		return p.kept + 1
	}
	return len(s.Fields) + 1
}

// compact reports whether f uses the compact encodings at this version.
func (d *decoder) compact(f *schema.Field) bool { return f.Compact(d.version, d.flex) }

// field decodes one field (any kind), named by its definition. p is the shallow plan of a struct
// field's (or struct array's) definition, nil to decode all of it.
func (d *decoder) field(f *schema.Field, p *shallowPlan) *Node {
	n := d.value(f, p)
	if n == nil {
		return nil
	}
	d.define(n, f, roleOf(f, false))
	if f.Kind == schema.Bytes {
		switch {
		case secretFields[f.Name] && n.Value != nil && !d.show:
			redact(n)
		case f.Name == "AuthBytes":
			// SaslAuthenticate carries SASL tokens: the one place the protocol nests another.
			decodeSASL(n, d.show)
			if d.sasl != nil {
				*d.sasl = true
			}
		}
	}
	return n
}

// define notes that n was decoded by f, with its role in the facts (roleOf) and the names of
// its bits when it is an integer.
func (d *decoder) define(n *Node, f *schema.Field, role factRole) *Node {
	n.Def, n.role = f, role
	if _, isInt := n.Value.(int64); isInt {
		n.Bits = f.BitField
	}
	return n
}

func (d *decoder) value(f *schema.Field, p *shallowPlan) *Node {
	nullable := f.NullableVersions.Contains(d.version)
	switch f.Kind {
	case schema.Array:
		return d.array(f, nullable, p)
	case schema.Struct:
		start := d.pos
		n := d.node(Node{Name: f.Name, Type: wire.Struct, Offset: start})
		if nullable {
			if !d.need(1, f.Name, wire.Int8) {
				return nil
			}
			marker := int8(d.b[d.pos])
			d.pos++
			n.Type = wire.NullableStruct
			n.Children = append(d.children(1+bodyCap(f.Struct, p)), d.node(Node{Name: "present", Type: wire.Int8, Offset: start, Size: 1, Value: int64(marker)}))
			if marker < 0 {
				n.Size = 1
				return n
			}
		} else {
			n.Children = d.children(bodyCap(f.Struct, p))
		}
		n.Children = d.structBody(f.Struct, p, n.Children)
		n.Size = d.pos - start
		return n
	default:
		return d.scalar(f.Kind, f.Name, nullable, d.compact(f))
	}
}

// arrayHead reads an array's count and checks it against the bytes left. ok is false when the
// count could not be read; elems reports that count elements follow.
func (d *decoder) arrayHead(f *schema.Field, nullable bool) (typ wire.Type, count int64, ok, elems bool) {
	start := d.pos
	name := f.Name
	typ = f.WireType(d.version, d.flex)
	if typ == wire.CompactArray {
		u, _, ok := d.uvarint(name)
		if !ok {
			return typ, 0, false, false
		}
		count = int64(u) - 1
	} else {
		if !d.need(4, name, typ) {
			return typ, 0, false, false
		}
		count = int64(int32(binary.BigEndian.Uint32(d.b[d.pos:])))
		d.pos += 4
	}
	if count < 0 {
		if count < -1 {
			d.fail(start, "%s: negative array length %d", name, count)
		} else if !nullable {
			d.warn(start, "%s is null but the field is not nullable at v%d", name, d.version)
		}
		return typ, count, true, false
	}
	// Every element takes at least one byte: refuse counts the remaining bytes cannot hold
	// before looping or allocating anything.
	if min := int64(d.minSize(f)); count*min > int64(d.left()) {
		d.fail(start, "%s: array of %s cannot fit in the %s left", name, plural.Count(count, "element"), plural.Count(d.left(), "byte"))
		return typ, count, true, false
	}
	return typ, count, true, true
}

// array decodes an array field; p is the shallow plan of its struct elements.
func (d *decoder) array(f *schema.Field, nullable bool, p *shallowPlan) *Node {
	start := d.pos
	typ, count, ok, elems := d.arrayHead(f, nullable)
	if !ok {
		return nil
	}
	n := d.nodes.next()
	n.Name, n.Type, n.Offset, n.PrefixSize = f.Name, typ, start, uint8(d.pos-start)
	if count < -1 {
		n.flags |= badPrefix
	}
	if count >= 0 {
		n.Value = intValue(count)
	}
	if !elems {
		n.Size = d.pos - start
		return n
	}
	// Room for the elements, within reason: a count that the bytes left can hold may still be
	// garbage that fails at its first element.
	n.Children = d.children(int(min(count, 1024)))
	compact := d.compact(f)
	var steps []planStep
	role := roleNone // of each element
	if f.Elem == schema.Struct {
		steps = p.stepsAt(d.version)
	} else {
		role = roleOf(f, true)
	}
	for i := int64(0); i < count && !d.failed; i++ {
		var e *Node
		if f.Elem == schema.Struct {
			es := d.pos
			e = d.nodes.next()
			e.Name, e.Type, e.Offset = wire.IndexName(int(i)), wire.Struct, es
			e.Children = d.body(f.Struct, p, steps, d.children(bodyCap(f.Struct, p)))
			e.Size = d.pos - es
		} else {
			e = d.scalar(f.Elem, wire.IndexName(int(i)), false, compact)
		}
		if e != nil {
			e.Def, e.role = f, role
			n.Children = append(n.Children, e)
		}
	}
	n.Size = d.pos - start
	return n
}

// boxedInts holds the small integers most fields carry (-1 for "none", ids, counts, error
// codes) already in interfaces, so that storing one in Node.Value does not allocate. Go only
// does so itself for 0 to 255. It is filled once and never written again.
var boxedInts = func() []any {
	s := make([]any, boxedMax-boxedMin)
	for i := range s {
		s[i] = int64(i + boxedMin)
	}
	return s
}()

const boxedMin, boxedMax = -16, 4096

// intValue boxes an integer value.
func intValue(v int64) any {
	if v >= boxedMin && v < boxedMax {
		return boxedInts[v-boxedMin]
	}
	return v
}

// minSize is the fewest bytes one element of array field f can take (at least 1).
func (d *decoder) minSize(f *schema.Field) int {
	if s := f.Elem.FixedSize(); s > 0 {
		return s
	}
	return 1
}

// scalar decodes a non-struct, non-array value.
func (d *decoder) scalar(k schema.Kind, name string, nullable, compact bool) *Node {
	if size := k.FixedSize(); size > 0 {
		return d.fixed(k, size, name)
	}
	// Variable length: string, bytes, records.
	return d.variable(k, name, nullable, compact)
}

// fixed decodes a value of kind k, of fixed size size.
func (d *decoder) fixed(k schema.Kind, size int, name string) *Node {
	start := d.pos
	typ := k.Wire(false, false)
	if d.failed || size > d.end-start {
		d.need(size, name, typ) // the warning
		return nil
	}
	b := d.b[start : start+size]
	d.pos += size
	n := d.nodes.next()
	n.Name, n.Type, n.Offset, n.Size = name, typ, start, size
	switch k {
	case schema.Bool:
		n.Value = b[0] != 0
	case schema.Int8:
		n.Value = intValue(int64(int8(b[0])))
	case schema.Int16:
		n.Value = intValue(int64(int16(binary.BigEndian.Uint16(b))))
	case schema.Uint16:
		n.Value = intValue(int64(binary.BigEndian.Uint16(b)))
	case schema.Int32:
		n.Value = intValue(int64(int32(binary.BigEndian.Uint32(b))))
	case schema.Uint32:
		n.Value = intValue(int64(binary.BigEndian.Uint32(b)))
	case schema.Int64:
		n.Value = intValue(int64(binary.BigEndian.Uint64(b)))
	case schema.Float64:
		n.Value = math.Float64frombits(binary.BigEndian.Uint64(b))
	case schema.UUID:
		var u UUID
		copy(u[:], b)
		n.Value = d.uuidValue(u)
	}
	return n
}

// variable decodes a string, bytes or records value.
func (d *decoder) variable(k schema.Kind, name string, nullable, compact bool) *Node {
	start := d.pos
	typ, length, ok, data := d.varHead(k, name, nullable, compact)
	if !ok {
		return nil
	}
	n := d.nodes.next()
	n.Name, n.Type, n.Offset, n.PrefixSize = name, typ, start, uint8(d.pos-start)
	if !data {
		// A null, or a length the bytes cannot hold (decoding stops here).
		if length != -1 {
			n.flags |= badPrefix
		}
		n.Size = d.pos - start
		return n
	}
	b := d.b[d.pos : d.pos+int(length)]
	d.pos += int(length)
	n.Size = d.pos - start
	switch {
	case k == schema.String:
		n.Value = d.stringValue(b)
	case k == schema.Records && d.lazyRecords != nil && len(b) > 0:
		d.lazy(n, b)
		n.Value = intValue(int64(len(b)))
	case k == schema.Records && d.records != nil && len(b) > 0:
		var ws []Warning
		n.Children, ws = d.records.DecodeRecords(b, d.pos-len(b), d.nodes)
		*d.warnings = append(*d.warnings, ws...)
		if d.paged != nil {
			d.paged.Evict(b)
		}
		n.Value = intValue(int64(len(b)))
	default:
		n.Value = b
	}
	return n
}

// varHead reads the length prefix of a string, bytes or records value and checks the length
// against the bytes left. ok is false when the prefix could not be read; data reports that
// length bytes of data follow.
func (d *decoder) varHead(k schema.Kind, name string, nullable, compact bool) (typ wire.Type, length int64, ok, data bool) {
	start := d.pos
	typ = k.Wire(nullable, compact)
	if compact {
		u, _, ok := d.uvarint(name)
		if !ok {
			return typ, 0, false, false
		}
		length = int64(u) - 1
	} else if k == schema.String {
		if !d.need(2, name, typ) {
			return typ, 0, false, false
		}
		length = int64(int16(binary.BigEndian.Uint16(d.b[d.pos:])))
		d.pos += 2
	} else {
		if !d.need(4, name, typ) {
			return typ, 0, false, false
		}
		length = int64(int32(binary.BigEndian.Uint32(d.b[d.pos:])))
		d.pos += 4
	}
	if length < 0 {
		if length < -1 {
			d.fail(start, "%s: negative length %d", name, length)
		} else if !nullable && k != schema.Records {
			d.warn(start, "%s is null but the field is not nullable at v%d", name, d.version)
		}
		return typ, length, true, false
	}
	if length > int64(d.left()) {
		d.fail(start, "%s (%s) says %s, %d left", name, typ, plural.Count(length, "byte"), d.left())
		return typ, length, true, false
	}
	return typ, length, true, true
}

// The skip functions walk a field as field does and check it the same way, with the same
// warnings, but make no node and copy no value: they are how a shallow decode passes over the
// fields it does not keep.

// skip walks field f.
func (d *decoder) skip(f *schema.Field) {
	nullable := f.NullableVersions.Contains(d.version)
	switch f.Kind {
	case schema.Array:
		d.skipArray(f, nullable)
	case schema.Struct:
		if nullable {
			if !d.need(1, f.Name, wire.Int8) {
				return
			}
			marker := int8(d.b[d.pos])
			d.pos++
			if marker < 0 {
				return
			}
		}
		d.skipStruct(f.Struct)
	default:
		d.skipScalar(f.Kind, f.Name, nullable, d.compact(f))
	}
}

// skipStruct walks the fields of s present at the decoder's version and its tagged fields.
func (d *decoder) skipStruct(s *schema.StructDef) {
	for _, f := range s.Fields {
		if d.failed {
			return
		}
		if !f.InBody(d.version) {
			continue
		}
		d.skip(f)
	}
	if d.flex && !d.failed {
		d.taggedSection(s, &keepNothing)
	}
}

// skipArray walks an array field.
func (d *decoder) skipArray(f *schema.Field, nullable bool) {
	_, count, _, elems := d.arrayHead(f, nullable)
	if !elems {
		return
	}
	switch size := f.Elem.FixedSize(); {
	case f.Elem == schema.Struct:
		for i := int64(0); i < count && !d.failed; i++ {
			d.skipStruct(f.Struct)
		}
	case size > 0:
		// arrayHead made sure that they fit: no element can fail.
		d.pos += int(count) * size
	default:
		compact := d.compact(f)
		for i := int64(0); i < count && !d.failed; i++ {
			if !d.skipVar(f.Elem, false, compact) {
				// The slow way, to give the warning: elements are named by their index.
				d.skipScalar(f.Elem, wire.IndexName(int(i)), false, compact)
			}
		}
	}
}

// skipScalar walks a non-struct, non-array value.
func (d *decoder) skipScalar(k schema.Kind, name string, nullable, compact bool) {
	if size := k.FixedSize(); size > 0 {
		if d.need(size, name, k.Wire(false, false)) {
			d.pos += size
		}
		return
	}
	if d.skipVar(k, nullable, compact) {
		return
	}
	if _, length, _, data := d.varHead(k, name, nullable, compact); data {
		d.pos += int(length)
	}
}

// skipVar passes over a string, bytes or records value that decodes without a warning, and
// reports whether it did; otherwise it leaves the position as it was (varHead then gives the
// warning).
func (d *decoder) skipVar(k schema.Kind, nullable, compact bool) bool {
	if d.failed {
		return false
	}
	pos := d.pos
	var length int64
	switch {
	case compact:
		var u uint64
		i := 0
		for ; ; i++ {
			if i == 5 || pos+i >= d.end {
				return false
			}
			c := d.b[pos+i]
			u |= uint64(c&0x7f) << (7 * i)
			if c < 0x80 {
				break
			}
		}
		pos += i + 1
		length = int64(u) - 1
	case k == schema.String:
		if d.end-pos < 2 {
			return false
		}
		length = int64(int16(binary.BigEndian.Uint16(d.b[pos:])))
		pos += 2
	default:
		if d.end-pos < 4 {
			return false
		}
		length = int64(int32(binary.BigEndian.Uint32(d.b[pos:])))
		pos += 4
	}
	switch {
	case length == -1 && (nullable || k == schema.Records):
	case length < 0 || length > int64(d.end-pos):
		return false
	default:
		pos += int(length)
	}
	d.pos = pos
	return true
}

// taggedSection decodes a flexible struct's tagged fields: known tags by their definition,
// unknown ones as raw bytes. With a shallow plan p, only the tags p keeps get nodes (and the
// section a node only if one of them is there); the others are walked without.
func (d *decoder) taggedSection(s *schema.StructDef, p *shallowPlan) *Node {
	start := d.pos
	count, cl, ok := d.uvarint("_tagged_fields")
	if !ok || count == 0 && p != nil {
		return nil // most sections are empty, and a shallow decode makes no node for them
	}
	// The section's node; a shallow decode makes it at its first kept tag.
	var n *Node
	section := func() {
		n = d.node(Node{Name: "_tagged_fields", Type: wire.TaggedFields, Offset: start, PrefixSize: uint8(cl), Value: intValue(int64(count)), Children: d.children(int(min(count, 8)))})
	}
	if p == nil {
		section()
	}
	if count > uint64(d.left()) {
		d.fail(start, "_tagged_fields: %s cannot fit in the %s left", plural.Count(count, "tag"), plural.Count(d.left(), "byte"))
		if n != nil {
			n.Size = d.pos - start
		}
		return n
	}
	for i := uint64(0); i < count && !d.failed; i++ {
		tf, ok := d.taggedHeader()
		if !ok {
			break
		}
		var keep bool
		var sub *shallowPlan
		tf.def, keep, sub = taggedDef(s, p, d.version, tf.tag)
		// A known tag is decoded on its own bytes, as the flexible field it is: a failure
		// inside stops it, not the struct.
		end := d.pos + int(tf.size)
		var v *Node
		stop, failed := end, false
		if tf.def != nil {
			v, stop, failed = d.taggedValue(tf, keep, sub, end)
		}
		d.pos = end
		if !keep {
			continue
		}
		t := d.taggedNode(tf, end, v, stop, failed)
		if n == nil {
			section()
		}
		n.Children = append(n.Children, t)
	}
	if n != nil {
		n.Size = d.pos - start
	}
	return n
}

// taggedField is one tagged field's header as read: where it starts, its tag and size and
// the lengths of their uvarints, where its value starts, and its definition (nil: unknown).
type taggedField struct {
	start, tagLen, sizeLen, value int
	tag, size                     uint64
	def                           *schema.Field
}

// taggedHeader reads a tagged field's tag and size, failing the decode when the size is more
// than is left.
func (d *decoder) taggedHeader() (taggedField, bool) {
	tf := taggedField{start: d.pos}
	var ok bool
	if tf.tag, tf.tagLen, ok = d.uvarint("tag"); !ok {
		return tf, false
	}
	if tf.size, tf.sizeLen, ok = d.uvarint("tag size"); !ok {
		return tf, false
	}
	if tf.size > uint64(d.left()) {
		d.fail(tf.start, "tagged field %d says %s, %d left", tf.tag, plural.Count(tf.size, "byte"), d.left())
		return tf, false
	}
	tf.value = d.pos
	return tf, true
}

// taggedDef finds the field of s with the tag at version (nil: unknown), whether it gets a
// node (always without a shallow plan p) and its own plan.
func taggedDef(s *schema.StructDef, p *shallowPlan, version int16, tag uint64) (*schema.Field, bool, *shallowPlan) {
	keep := p == nil
	for j, c := range s.Fields {
		if c.Tagged(version) && uint64(c.Tag) == tag {
			if p != nil && j < len(p.keep) {
				return c, p.keep[j], p.sub[j]
			}
			return c, keep, nil
		}
	}
	return nil, keep, nil
}

// taggedValue decodes a known tagged field's value, bounded by end (a node only if keep). It
// returns where it stopped and whether it failed; the failure stays the field's.
func (d *decoder) taggedValue(tf taggedField, keep bool, sub *shallowPlan, end int) (v *Node, stop int, failed bool) {
	outerEnd, outerFlex := d.end, d.flex
	d.end, d.flex = end, true
	if keep {
		v = d.field(tf.def, sub)
	} else {
		d.skip(tf.def)
	}
	stop, failed = d.pos, d.failed
	d.end, d.flex, d.failed = outerEnd, outerFlex, false
	if !failed && stop != end {
		d.warn(stop, "tagged field %s: %d of its %s not decoded", tf.def.Name, end-stop, plural.Count(tf.size, "byte"))
	}
	return v, stop, failed
}

// taggedNode is a tagged field's node: its tag, its size, then its value v (an unknown tag's
// raw bytes), and the bytes after stop that a known one left undecoded.
func (d *decoder) taggedNode(tf taggedField, end int, v *Node, stop int, failed bool) *Node {
	ts, vs := tf.start, tf.value
	t := d.node(Node{Type: wire.TaggedField, Offset: ts, Size: end - ts, Children: d.children(4)})
	t.Children = append(t.Children,
		d.node(Node{Name: "tag", Type: wire.Uvarint, Offset: ts, Size: tf.tagLen, Value: intValue(int64(tf.tag))}),
		d.node(Node{Name: "size", Type: wire.Uvarint, Offset: ts + tf.tagLen, Size: tf.sizeLen, Value: intValue(int64(tf.size))}))
	if tf.def == nil {
		t.Name = "unknown tag " + strconv.FormatUint(tf.tag, 10)
		t.Children = append(t.Children, d.node(Node{Name: "value", Type: wire.Bytes, Offset: vs, Size: int(tf.size), Value: d.b[vs:end]}))
		return t
	}
	t.Name = tf.def.Name
	if v != nil {
		t.Children = append(t.Children, v)
	}
	if !failed && stop != end {
		t.Children = append(t.Children, d.node(Node{Name: "unparsed", Type: wire.Bytes, Offset: stop, Size: end - stop, Value: d.b[stop:end]}))
	}
	return t
}
