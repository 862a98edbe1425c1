// Package records decodes the contents of Kafka's records fields: record batches (magic 2) and
// legacy message sets (magic 0 and 1), decompressing gzip, snappy, lz4 and zstd, and checking CRCs.
package records

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/plural"
)

// DefaultMaxDecompressed is the cap on the decompressed size of one batch or wrapper message
// when Options.MaxDecompressed is not set.
const DefaultMaxDecompressed = 64 << 20

// Options tune a Decoder.
type Options struct {
	// MaxDecompressed caps the decompressed size of one batch or wrapper message (default 64 MiB);
	// over it: a warning, the payload shown compressed, no crash, no unbounded allocation.
	MaxDecompressed int64
	// HeadersOnly stops at each record batch's header: its records stay one "record_data"
	// node whose value is the batch's record count, and nothing is decompressed. Legacy
	// message sets are still decoded whole.
	HeadersOnly bool
	// CountsOnly, with HeadersOnly, keeps only what record counts need: a batch's node holds
	// its attributes and its record_data. The other header fields are read and the CRC is
	// checked, with the same warnings, but they get no node. For outputs that show no field
	// tree (summaries, statistics).
	CountsOnly bool
	// BatchFields, with CountsOnly, names header fields (BatchHeaderField) that still get a
	// node, besides the attributes and the record count: those that who reads the tree reads.
	BatchFields []string
}

// BatchHeaderField reports whether name is a field of a record batch's header that a decode
// with CountsOnly gives no node unless BatchFields names it: one that who reads batch headers
// must not go without.
func BatchHeaderField(name string) bool {
	switch name {
	case "baseOffset", "batchLength", "partitionLeaderEpoch", "magic", "crc", "lastOffsetDelta",
		"baseTimestamp", "maxTimestamp", "producerId", "producerEpoch", "baseSequence":
		return true
	}
	return false
}

// Decoder decodes records fields. It is safe for concurrent use.
type Decoder struct {
	opt Options
	// batchKept has bit i set when CountsOnly gives batchFields[i] a node.
	batchKept uint16
	// counts decodes for CountRecords: headers only, counts only (itself, when opt says so).
	counts *Decoder
	// Decompressors are reused: building one (zstd above all) costs more than a small batch.
	gzipPool, zstdPool sync.Pool
	// fields holds the fieldSpaces of records fields decoded, for the next: a summary decodes
	// one for every partition of every fetch.
	fields sync.Pool
}

// New returns a Decoder with the given options.
func New(opt Options) *Decoder {
	if opt.MaxDecompressed <= 0 {
		opt.MaxDecompressed = DefaultMaxDecompressed
	}
	opt.MaxDecompressed = min(opt.MaxDecompressed, 1<<40) // keeps the sums below from overflowing
	d := &Decoder{opt: opt, batchKept: batchKept(opt.BatchFields)}
	d.counts = d
	if !opt.HeadersOnly || !opt.CountsOnly {
		opt.HeadersOnly, opt.CountsOnly, opt.BatchFields = true, true, nil
		d.counts = &Decoder{opt: opt, batchKept: batchKept(nil)}
		d.counts.counts = d.counts
	}
	return d
}

// CountRecords implements codec.RecordsCounter: the nodes of a decode with HeadersOnly and
// CountsOnly, for the record counts of a field that is decoded whole later (its warnings come
// then, and are not returned here).
func (d *Decoder) CountRecords(data []byte, base int, nodes *codec.Nodes) []*codec.Node {
	out, _ := d.counts.DecodeRecords(data, base, nodes)
	return out
}

// DecodeRecords implements codec.RecordsDecoder.
func (d *Decoder) DecodeRecords(data []byte, base int, nodes *codec.Nodes) ([]*codec.Node, []codec.Warning) {
	f := d.field(data, base, nodes)
	out, _ := f.top.entries()
	ws := f.ws
	d.done(f)
	return out, ws
}

// field starts the decode of the records field data, whose first byte is at offset base, into
// nodes (new ones when nil).
func (d *Decoder) field(data []byte, base int, nodes *codec.Nodes) *fieldSpace {
	if nodes == nil {
		nodes = &codec.Nodes{}
	}
	f, _ := d.fields.Get().(*fieldSpace)
	if f == nil {
		f = new(fieldSpace)
	}
	*f = fieldSpace{budget: fieldBudget * d.opt.MaxDecompressed, times: f.times}
	f.top = space{d: d, b: data, base: base, ws: &f.ws, nodes: nodes, times: &f.times, budget: &f.budget}
	return f
}

// done gives back the space of a records field decoded, its warnings taken.
func (d *Decoder) done(f *fieldSpace) {
	f.top, f.ws = space{}, nil // nothing of the field's is kept
	d.fields.Put(f)
}

// EachRecord decodes data as DecodeRecords does, but hands each top-level entry (a record
// batch or a legacy message, with its subtree) to fn as soon as it is decoded, and keeps none:
// fn may give the nodes back (Nodes.Reset) before it returns. It returns the warnings of all.
func (d *Decoder) EachRecord(data []byte, base int, nodes *codec.Nodes, fn func(*codec.Node)) []codec.Warning {
	f := d.field(data, base, nodes)
	f.top.each(fn)
	ws := f.ws
	d.done(f)
	return ws
}

// Wire sizes.
const (
	batchHeader = 61 // baseOffset .. record count
	batchCRCEnd = 21 // the batch CRC covers attributes (offset 21) to the end
	minRecord   = 7  // length, attributes, timestampDelta, offsetDelta, key, value, header count
	minHeader   = 2  // key length and value length
)

// minLength is the smallest length field (batchLength or messageSize) of each magic.
var minLength = [3]int64{
	0: 4 + 1 + 1 + 4 + 4,     // crc, magic, attributes, key, value
	1: 4 + 1 + 1 + 8 + 4 + 4, // ... and the timestamp
	2: batchHeader - 12,
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// space is one buffer being decoded: the frame's records field, or the decompressed contents of
// one compressed batch or wrapper message.
type space struct {
	d    *Decoder
	b    []byte
	base int // frame offset of b[0]; 0 inside decompressed data
	dec  bool
	// anchor is the frame offset of the compressed payload that b came from: warnings about
	// decompressed bytes point there, and say where in the decompressed data they are.
	anchor int
	depth  int // 0 for the frame's own bytes, 1 inside decompressed data
	ws     *[]codec.Warning
	nodes  *codec.Nodes
	times  *timeCache
	budget *int64 // decompressed bytes still allowed in this records field
}

// fieldSpace is what the spaces of one records field share: one allocation for all of it.
type fieldSpace struct {
	top    space
	ws     []codec.Warning
	times  timeCache
	budget int64
}

func (s *space) warn(off int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if s.dec {
		*s.ws = append(*s.ws, codec.Warning{Offset: s.anchor, Msg: fmt.Sprintf("decompressed data at 0x%04x: %s", off, msg)})
		return
	}
	*s.ws = append(*s.ws, codec.Warning{Offset: s.base + off, Msg: msg})
}

// node makes a node at buffer offset off.
func (s *space) node(name string, typ wire.Type, off, size int, v any) *codec.Node {
	return s.nodes.Add(codec.Node{Name: name, Type: typ, Offset: s.base + off, Size: size, Value: v, Decompressed: s.dec})
}

func (s *space) undecoded(p, end int) *codec.Node {
	return s.node("undecoded", wire.Bytes, p, end-p, s.b[p:end])
}

// timeCache keeps the last second appendTime formatted: the records of a batch mostly share it.
type timeCache struct {
	lastSecond int64
	second     []byte
}

// msgInfo is what a message set's wrapper needs to state its inner messages' absolute offsets.
type msgInfo struct {
	node      *codec.Node
	offset    int64
	timestamp int64
	magic     int8
}

// entries decodes the whole buffer as a sequence of batches and messages. It also returns the
// legacy messages it found, for a wrapper message to complete.
func (s *space) entries() ([]*codec.Node, []msgInfo) {
	// Gathered on the stack, then put in a list of the tree's nodes (Nodes.List) of the right
	// size: most records fields hold a batch or a few.
	var few [8]*codec.Node
	out := few[:0]
	msgs := s.each(func(n *codec.Node) { out = append(out, n) })
	if len(out) == 0 {
		return nil, msgs
	}
	return append(s.nodes.List(len(out)), out...), msgs
}

// each decodes the buffer as entries does, handing each entry to emit as it is decoded.
func (s *space) each(emit func(*codec.Node)) []msgInfo {
	var msgs []msgInfo
	b := s.b
	for p := 0; p < len(b); {
		rem := len(b) - p
		if rem < 17 {
			emit(s.partial(p, -1, -1))
			break
		}
		length := int64(int32(binary.BigEndian.Uint32(b[p+8:])))
		magic := int8(b[p+16])
		if magic < 0 || magic > 2 {
			s.warn(p, "entry at offset %d: unknown magic %d", s.base+p, magic)
			emit(s.undecoded(p, len(b)))
			break
		}
		if length < minLength[magic] {
			s.warn(p+8, "entry at offset %d: length %d is less than the %d bytes of a magic %d header", s.base+p, length, minLength[magic], magic)
			emit(s.undecoded(p, len(b)))
			break
		}
		if 12+length > int64(rem) {
			emit(s.partial(p, magic, length))
			break
		}
		end := p + 12 + int(length)
		if magic == 2 {
			if s.dec {
				s.warn(p, "a magic 2 batch inside a compressed message set")
				emit(s.undecoded(p, len(b)))
				break
			}
			emit(s.batch(p, end))
		} else {
			n, m := s.message(p, end, magic)
			emit(n)
			msgs = append(msgs, m)
		}
		p = end
	}
	return msgs
}

// partial is the last entry of the data when it is cut short: normal at the end of a Fetch
// response (the broker stops at the size limit), so no warning there.
func (s *space) partial(p int, magic int8, length int64) *codec.Node {
	have := len(s.b) - p
	var v string
	if magic < 0 {
		v = fmt.Sprintf("truncated: %s, too few for a batch header", plural.Count(have, "byte"))
	} else {
		v = fmt.Sprintf("truncated: %d of the %d bytes of a magic %d entry", have, 12+length, magic)
	}
	if s.dec {
		s.warn(p, "%s", v)
	}
	return s.node("partial batch", wire.Bytes, p, have, v)
}

// batchInfo is what each record needs from its batch.
type batchInfo struct {
	baseOffset, baseTimestamp, maxTimestamp int64
	logAppendTime, control                  bool
}

// batch decodes a record batch (magic 2) at b[p:end]; end-p is at least batchHeader.
func (s *space) batch(p, end int) *codec.Node {
	n := s.node("batch", wire.RecordBatch, p, end-p, nil)
	if s.d.opt.HeadersOnly && s.d.opt.CountsOnly {
		return s.batchCounts(n, p, end)
	}
	r := reader{s: s, pos: p, end: end, kids: s.nodes.List(14)}
	var bi batchInfo
	bi.baseOffset = r.int("baseOffset", wire.Int64)
	r.int("batchLength", wire.Int32)
	r.int("partitionLeaderEpoch", wire.Int32)
	r.int("magic", wire.Int8)
	crc := uint32(r.int("crc", wire.Uint32))
	crcNode := r.last("crc")
	attrs := r.bits("attributes", wire.Int16, wire.BatchAttributes)
	r.int("lastOffsetDelta", wire.Int32)
	bi.baseTimestamp = r.int("baseTimestamp", wire.Int64)
	bi.maxTimestamp = r.int("maxTimestamp", wire.Int64)
	r.int("producerId", wire.Int64)
	r.int("producerEpoch", wire.Int16)
	r.int("baseSequence", wire.Int32)
	bi.logAppendTime = wire.Attributes(attrs).Has(wire.LogAppendTime)
	bi.control = wire.Attributes(attrs).Has(wire.Control)
	c := crc32.Checksum(s.b[p+batchCRCEnd:end], castagnoli)
	if crcNode != nil {
		crcNode.Note = crcVerdict(crc, c)
	}
	if c != crc {
		s.warn(p+17, "batch at offset %d: crc 0x%08x does not match computed 0x%08x", s.base+p, crc, c)
	}
	// The count is a field of its own, before the records whether they are compressed or not,
	// as Kafka's record-format documentation writes it: one name in every output.
	count := r.int("recordsCount", wire.Int32)
	if s.d.opt.HeadersOnly {
		// The batch header says all a summary needs: the records are neither decompressed
		// nor walked.
		r.kids = append(r.kids, s.node("records", wire.RecordData, r.pos, end-r.pos, nil))
		n.Children = r.kids
		return n
	}
	if id := wire.Attributes(attrs).Codec(); id == wire.NoCompression {
		recs := s.node("records", wire.RecordData, r.pos, end-r.pos, nil)
		recs.Children = s.records(r.pos, end, count, &bi)
		r.kids = append(r.kids, recs)
	} else {
		what := fmt.Sprintf("batch at offset %d", s.base+p)
		r.kids = append(r.kids, s.compressed(r.pos, end, id, what, func(in *space) []*codec.Node {
			return in.records(0, len(in.b), count, &bi)
		}))
	}
	n.Children = r.kids
	return n
}

// crcVerdict is the note beside a CRC: "ok", or "mismatch (computed X)".
func crcVerdict(crc, computed uint32) string {
	if crc == computed {
		return "ok"
	}
	return fmt.Sprintf("mismatch (computed %d)", computed)
}

// Offsets in a batch header (magic 2).
const (
	batchCRCAt   = 17
	batchAttrsAt = 21
	batchCountAt = 57
)

// batchCounts is batch for Options.CountsOnly: n gets the batch's attributes, its record
// count and the fields Options.BatchFields names, and its records undecoded.
func (s *space) batchCounts(n *codec.Node, p, end int) *codec.Node {
	crc := binary.BigEndian.Uint32(s.b[p+batchCRCAt:])
	c := crc32.Checksum(s.b[p+batchCRCEnd:end], castagnoli)
	if c != crc {
		s.warn(p+batchCRCAt, "batch at offset %d: crc 0x%08x does not match computed 0x%08x", s.base+p, crc, c)
	}
	kids := s.nodes.List(3 + len(s.d.opt.BatchFields))
	// Only the fields kept, in order, by the bits set: a summary's batches keep two of them.
	for kept := s.d.batchKept; kept != 0; kept &= kept - 1 {
		f := &batchFields[bits.TrailingZeros16(kept)]
		k := s.node(f.name, f.typ, p+f.at, f.size, f.value(s.b[p+f.at:]))
		switch f.name {
		case "attributes":
			withBits(k, wire.BatchAttributes)
		case "crc":
			k.Note = crcVerdict(crc, c)
		}
		kids = append(kids, k)
	}
	records := p + batchCountAt + 4
	n.Children = append(kids, s.node("records", wire.RecordData, records, end-records, nil))
	return n
}

// batchField is a field of a batch header (magic 2): its name and type, and where it lies.
type batchField struct {
	name     string
	typ      wire.Type
	at, size int
}

// batchFields are the fields of a batch header, in order, as batch reads them.
var batchFields = [...]batchField{
	{"baseOffset", wire.Int64, 0, 8}, {"batchLength", wire.Int32, 8, 4},
	{"partitionLeaderEpoch", wire.Int32, 12, 4}, {"magic", wire.Int8, 16, 1},
	{"crc", wire.Uint32, batchCRCAt, 4}, {"attributes", wire.Int16, batchAttrsAt, 2},
	{"lastOffsetDelta", wire.Int32, 23, 4}, {"baseTimestamp", wire.Int64, 27, 8},
	{"maxTimestamp", wire.Int64, 35, 8}, {"producerId", wire.Int64, 43, 8},
	{"producerEpoch", wire.Int16, 51, 2}, {"baseSequence", wire.Int32, 53, 4},
	{"recordsCount", wire.Int32, batchCountAt, 4},
}

// batchKept is Decoder.batchKept for Options.BatchFields fields.
func batchKept(fields []string) uint16 {
	var kept uint16
	for i, f := range batchFields {
		if f.name == "attributes" || f.name == "recordsCount" || slices.Contains(fields, f.name) {
			kept |= 1 << i
		}
	}
	return kept
}

// value is the field's value at the start of b, as reader.int reads it.
func (f batchField) value(b []byte) int64 {
	switch f.typ {
	case wire.Int8:
		return int64(int8(b[0]))
	case wire.Int16:
		return int64(int16(binary.BigEndian.Uint16(b)))
	case wire.Int32:
		return int64(int32(binary.BigEndian.Uint32(b)))
	case wire.Uint32:
		return int64(binary.BigEndian.Uint32(b))
	}
	return int64(binary.BigEndian.Uint64(b))
}

// records decodes count records filling b[p:end].
func (s *space) records(p, end int, count int64, bi *batchInfo) []*codec.Node {
	if count < 0 || count*minRecord > int64(end-p) {
		s.warn(p, "record count %d cannot fit in the %s left (a record takes at least %d)", count, plural.Count(end-p, "byte"), minRecord)
		if p < end {
			return []*codec.Node{s.undecoded(p, end)}
		}
		return nil
	}
	out := make([]*codec.Node, 0, count+1)
	for i := 0; i < int(count); i++ {
		rec, next := s.record(p, end, i, bi)
		if rec == nil {
			break
		}
		out = append(out, rec)
		p = next
	}
	if p < end {
		if len(out) == int(count) {
			s.warn(p, "%s after the last of %s", plural.Count(end-p, "byte"), plural.Count(count, "record"))
		}
		out = append(out, s.undecoded(p, end))
	}
	return out
}

// controlTypes names the types of control records' keys.
var controlTypes = []string{"ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER", "KRAFT_VERSION", "KRAFT_VOTERS"}

// record decodes record i at b[p:end]. It returns nil when not even the record's length can be
// trusted (with a warning); a record whose contents do not fit its length ends in "undecoded".
func (s *space) record(p, end, i int, bi *batchInfo) (*codec.Node, int) {
	r := reader{s: s, pos: p, end: end, kids: s.nodes.List(7)}
	length := r.varint("length", false)
	if r.bad != "" || length < 0 || length > int64(end-r.pos) {
		if r.bad == "" {
			r.bad = fmt.Sprintf("length %d with %s left", length, plural.Count(end-r.pos, "byte"))
		}
		s.warn(p, "record [%d]: %s", i, r.bad)
		return nil, p
	}
	r.end = r.pos + int(length)
	rec := s.node(wire.IndexName(i), wire.Record, p, r.end-p, nil)
	r.bits("attributes", wire.Int8, wire.RecordAttributes)
	tsDelta := r.varint("timestampDelta", true)
	offDelta := r.varint("offsetDelta", false)
	key, kb := r.varBytes("key", wire.VarintBytes)
	val, vb := r.varBytes("value", wire.VarintBytes)
	if r.bad == "" {
		r.headers()
	}
	if r.bad == "" {
		ctrl := ""
		if bi.control {
			ctrl = s.control(p, i, key, kb, val, vb)
		}
		ts := bi.baseTimestamp + tsDelta
		if bi.logAppendTime {
			ts = bi.maxTimestamp
		}
		rec.Value = s.times.describe(bi.baseOffset+int64(offDelta), ts, true, ctrl)
	}
	if !r.done() {
		r.finish(fmt.Sprintf("record [%d]", i))
	}
	rec.Children = r.kids
	return rec, r.end
}

// headers decodes a record's header array.
func (r *reader) headers() {
	s := r.s
	start := r.pos
	count, size, over := r.rawVarint(false)
	if r.bad != "" {
		return
	}
	if count < 0 || count*minHeader > int64(r.end-r.pos-size) {
		r.bad = fmt.Sprintf("header count %d cannot fit in the %s left", count, plural.Count(r.end-r.pos-size, "byte"))
		return
	}
	h := s.node("headers", wire.VarintArray, start, 0, count)
	h.PrefixSize, h.Overflow = uint8(size), over
	r.pos += size
	outer := r.kids
	h.Children = s.nodes.List(int(count))
	for i := 0; i < int(count) && r.bad == ""; i++ {
		hs := r.pos
		r.kids = s.nodes.List(2)
		r.varBytes("headerKey", wire.VarintString)
		r.varBytes("value", wire.VarintBytes)
		if len(r.kids) > 0 {
			hn := s.node(wire.IndexName(i), wire.Header, hs, r.pos-hs, nil)
			hn.Children = r.kids
			h.Children = append(h.Children, hn)
		}
	}
	h.Size = r.pos - start
	r.kids = append(outer, h)
}

// control decodes the key and value of a control record (a transaction marker) in place and
// returns the record's type name.
func (s *space) control(p, i int, key *codec.Node, kb []byte, val *codec.Node, vb []byte) string {
	if len(kb) < 4 {
		s.warn(p, "record [%d]: a control record key needs 4 bytes, has %d", i, len(kb))
		return "control record"
	}
	// The key and value keep their bytes as their value; their fields are their children.
	kp := key.Offset - s.base + key.Size - len(kb)
	typ := int64(int16(binary.BigEndian.Uint16(kb[2:])))
	key.Children = s.fields(kp, kp+len(kb), []field{{"version", wire.Int16}, {"type", wire.Int16}})
	name := fmt.Sprintf("control type %d", typ)
	if typ >= 0 && typ < int64(len(controlTypes)) {
		name = controlTypes[typ]
		key.Children[1].Note = name
	}
	if (typ == 0 || typ == 1) && len(vb) >= 6 {
		vp := val.Offset - s.base + val.Size - len(vb)
		val.Children = s.fields(vp, vp+len(vb), []field{{"version", wire.Int16}, {"coordinatorEpoch", wire.Int32}})
	}
	return name
}

type field struct {
	name string
	typ  wire.Type
}

// fields decodes fixed-size fields from b[p:end] (which holds them all), then any rest as
// "undecoded".
func (s *space) fields(p, end int, fs []field) []*codec.Node {
	r := reader{s: s, pos: p, end: end, kids: s.nodes.List(len(fs) + 1)}
	for _, f := range fs {
		r.int(f.name, f.typ)
	}
	if r.pos < end {
		r.kids = append(r.kids, s.undecoded(r.pos, end))
	}
	return r.kids
}

// describe is the Value of a record or message: its absolute offset and timestamp.
func (a *timeCache) describe(offset, ts int64, hasTS bool, extra string) string {
	var buf [80]byte
	b := append(buf[:0], "offset "...)
	b = strconv.AppendInt(b, offset, 10)
	if hasTS {
		if ts == -1 {
			b = append(b, ", no timestamp"...)
		} else {
			b = append(b, ", timestamp "...)
			b = a.appendTime(b, ts)
		}
	}
	if extra != "" {
		b = append(append(b, ", "...), extra...)
	}
	return string(b)
}

// appendTime formats a millisecond timestamp in UTC with millisecond precision. The records of
// a batch mostly share their second, whose formatting is kept.
func (a *timeCache) appendTime(b []byte, ms int64) []byte {
	sec, milli := ms/1000, ms%1000
	if milli < 0 {
		sec, milli = sec-1, milli+1000
	}
	if a.second == nil || sec != a.lastSecond {
		a.lastSecond = sec
		a.second = time.Unix(sec, 0).UTC().AppendFormat(a.second[:0], "2006-01-02T15:04:05.")
	}
	b = append(b, a.second...)
	return append(b, byte('0'+milli/100), byte('0'+milli/10%10), byte('0'+milli%10), 'Z')
}

// reader walks fields within b[pos:end], appending a node per field to kids. At the first field
// that does not fit it stops and says why in bad; finish then turns the rest into "undecoded".
type reader struct {
	s        *space
	pos, end int
	kids     []*codec.Node
	bad      string
}

// int reads a fixed-size integer of type typ.
// last returns the node read last if it is named name, else nil.
func (r *reader) last(name string) *codec.Node {
	if n := len(r.kids); n > 0 && r.kids[n-1].Name == name {
		return r.kids[n-1]
	}
	return nil
}

func (r *reader) int(name string, typ wire.Type) int64 {
	if r.bad != "" {
		return 0
	}
	var size int
	switch typ {
	case wire.Int8:
		size = 1
	case wire.Int16:
		size = 2
	case wire.Int32, wire.Uint32:
		size = 4
	case wire.Int64:
		size = 8
	}
	if r.end-r.pos < size {
		r.bad = fmt.Sprintf("%s (%s) needs %s, %d left", name, typ, plural.Count(size, "byte"), r.end-r.pos)
		return 0
	}
	b := r.s.b[r.pos : r.pos+size]
	var v int64
	switch typ {
	case wire.Int8:
		v = int64(int8(b[0]))
	case wire.Int16:
		v = int64(int16(binary.BigEndian.Uint16(b)))
	case wire.Int32:
		v = int64(int32(binary.BigEndian.Uint32(b)))
	case wire.Uint32:
		v = int64(binary.BigEndian.Uint32(b))
	case wire.Int64:
		v = int64(binary.BigEndian.Uint64(b))
	}
	r.kids = append(r.kids, r.s.node(name, typ, r.pos, size, v))
	r.pos += size
	return v
}

// rawVarint reads a zigzag varint (at most 5 bytes) or varlong (at most 10) at pos without
// moving or making a node. As Kafka does, it keeps the low 32 (or 64) bits of what the bytes
// carry before undoing the zigzag; over returns the bits above them (Node.Overflow).
func (r *reader) rawVarint(long bool) (v int64, size int, over uint8) {
	max := 5
	if long {
		max = 10
	}
	var u uint64
	for i := 0; i < max; i++ {
		if r.pos+i >= r.end {
			r.bad = "varint runs past the end"
			return 0, 0, 0
		}
		c := r.s.b[r.pos+i]
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if long {
				if i == 9 {
					over = c >> 1
				}
				return wire.ZigzagDecode(u), i + 1, over
			}
			return int64(int32(wire.ZigzagDecode(uint64(uint32(u))))), i + 1, uint8(u >> 32)
		}
	}
	r.bad = fmt.Sprintf("varint longer than %d bytes", max)
	return 0, 0, 0
}

// varint reads a varint (or varlong) field.
func (r *reader) varint(name string, long bool) int64 {
	if r.bad != "" {
		return 0
	}
	v, size, over := r.rawVarint(long)
	if r.bad != "" {
		r.bad = name + ": " + r.bad
		return 0
	}
	typ := wire.Varint
	if long {
		typ = wire.Varlong
	}
	n := r.s.node(name, typ, r.pos, size, v)
	n.Overflow = over
	r.kids = append(r.kids, n)
	r.pos += size
	return v
}

// varBytes reads varint-length-prefixed bytes (typ varint_bytes) or a string (varint_string):
// one node covering the length and the data, with a nil Value for null (length -1).
func (r *reader) varBytes(name string, typ wire.Type) (*codec.Node, []byte) {
	if r.bad != "" {
		return nil, nil
	}
	length, size, over := r.rawVarint(false)
	if r.bad != "" {
		r.bad = name + ": " + r.bad
		return nil, nil
	}
	prefix := size
	left := r.end - r.pos - size
	if length < -1 || length > int64(left) {
		r.bad = fmt.Sprintf("%s: length %d with %s left", name, length, plural.Count(left, "byte"))
		return nil, nil
	}
	var v any
	var data []byte
	if length >= 0 {
		data = r.s.b[r.pos+size : r.pos+size+int(length)]
		if typ == wire.VarintString {
			v = string(data)
		} else {
			v = data
		}
		size += int(length)
	}
	n := r.s.node(name, typ, r.pos, size, v)
	n.PrefixSize, n.Overflow = uint8(prefix), over
	r.kids = append(r.kids, n)
	r.pos += size
	return n, data
}

// bytes32 reads int32-length-prefixed nullable bytes.
func (r *reader) bytes32(name string) (*codec.Node, []byte, bool) {
	if r.bad != "" {
		return nil, nil, false
	}
	if r.end-r.pos < 4 {
		r.bad = fmt.Sprintf("%s (nullable_bytes) needs 4 bytes, %d left", name, r.end-r.pos)
		return nil, nil, false
	}
	length := int64(int32(binary.BigEndian.Uint32(r.s.b[r.pos:])))
	left := r.end - r.pos - 4
	if length < -1 || length > int64(left) {
		r.bad = fmt.Sprintf("%s: length %d with %s left", name, length, plural.Count(left, "byte"))
		return nil, nil, false
	}
	n := r.s.node(name, wire.NullableBytes, r.pos, 4, nil)
	n.PrefixSize = 4
	var data []byte
	if length >= 0 {
		data = r.s.b[r.pos+4 : r.pos+4+int(length)]
		n.Value = data
		n.Size += int(length)
	}
	r.kids = append(r.kids, n)
	r.pos += n.Size
	return n, data, length >= 0
}

// bits reads a fixed-size integer whose bits are named as f says.
func (r *reader) bits(name string, typ wire.Type, f wire.BitField) int64 {
	v := r.int(name, typ)
	if r.bad == "" {
		withBits(r.kids[len(r.kids)-1], f)
	}
	return v
}

// withBits marks n as bit field f and returns it.
func withBits(n *codec.Node, f wire.BitField) *codec.Node {
	n.Bits = f
	return n
}

// done reports that the reader read all its bytes without a problem.
func (r *reader) done() bool { return r.bad == "" && r.pos == r.end }

// finish warns about whatever stopped the reader or was left over, and covers it.
func (r *reader) finish(what string) {
	switch {
	case r.bad != "":
		r.s.warn(r.pos, "%s: %s", what, r.bad)
	case r.pos < r.end:
		r.s.warn(r.pos, "%s: %s left over", what, plural.Count(r.end-r.pos, "byte"))
	default:
		return
	}
	if r.pos < r.end {
		r.kids = append(r.kids, r.s.undecoded(r.pos, r.end))
	}
}
