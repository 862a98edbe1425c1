package records

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
)

const t0 = 1795946401234 // 2026-11-29T10:00:01.234Z

// plainRecords are n records with keys, values and increasing timestamps.
func plainRecords(n int) []kmsg.Record {
	rs := make([]kmsg.Record, n)
	for i := range rs {
		rs[i] = kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i) * 7,
			Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, "value %d %s", i, strings.Repeat("x", i%50))}
	}
	return rs
}

func headerRecords() []kmsg.Record {
	return []kmsg.Record{
		{OffsetDelta: 0, Key: []byte("k"), Value: []byte("v"), Headers: []kmsg.Header{
			{Key: "trace-id", Value: []byte("abc123")}, {Key: "empty", Value: []byte{}}, {Key: "null", Value: nil}}},
		{OffsetDelta: 1, TimestampDelta64: 1000, Key: []byte{0, 1, 2, 0xff}, Value: []byte("binary key"),
			Headers: []kmsg.Header{{Key: "", Value: []byte("empty key")}}},
		{OffsetDelta: 2, TimestampDelta64: 1 << 40, Value: bytes.Repeat([]byte("long "), 100)},
	}
}

func nullRecords() []kmsg.Record {
	return []kmsg.Record{
		{OffsetDelta: 0, Key: nil, Value: []byte("null key")},
		{OffsetDelta: 1, Key: []byte("null value"), Value: nil},
		{OffsetDelta: 2, Key: nil, Value: nil},
		{OffsetDelta: 3, Key: []byte{}, Value: []byte{}},
		{OffsetDelta: 5, TimestampDelta64: -5, Key: []byte("gap in offsets, negative delta"), Value: []byte("x")},
	}
}

// marker is a transaction control record: key (version 0, type), value (version 0, epoch).
func marker(offsetDelta int32, commit bool) kmsg.Record {
	typ := byte(0)
	if commit {
		typ = 1
	}
	return kmsg.Record{OffsetDelta: offsetDelta, Key: []byte{0, 0, 0, typ}, Value: []byte{0, 0, 0, 0, 0, 9}}
}

var allCodecs = []string{"none", "gzip", "snappy", "xerial", "lz4", "zstd"}

// TestBatches: batches of every codec and shape decode to exactly what was encoded.
func TestBatches(t *testing.T) {
	shapes := []struct {
		name string
		spec batchSpec
	}{
		{"plain", batchSpec{baseOffset: 1000, baseTimestamp: t0, records: plainRecords(5)}},
		{"headers", batchSpec{baseOffset: 7, baseTimestamp: t0, records: headerRecords()}},
		{"nulls", batchSpec{baseOffset: 0, baseTimestamp: t0, records: nullRecords()}},
		{"transactional", batchSpec{baseOffset: 1 << 40, baseTimestamp: t0, attrs: 0x10, producerID: 4242, producerEpoch: 3, baseSequence: 17, records: plainRecords(3)}},
		{"log append time", batchSpec{baseOffset: 50, baseTimestamp: t0, attrs: 0x08, records: plainRecords(4)}},
		{"empty", batchSpec{baseOffset: 3, baseTimestamp: t0}},
		{"large", batchSpec{baseOffset: 99, baseTimestamp: t0, records: benchRecords(1000)}},
	}
	for _, c := range allCodecs {
		for _, sh := range shapes {
			t.Run(c+"/"+sh.name, func(t *testing.T) {
				spec := sh.spec
				spec.codec = c
				data, wants := spec.build(t)
				nodes, ws := decode(t, New(Options{}), data)
				if len(ws) > 0 {
					t.Fatalf("warnings:\n%s\n%s", warnings(ws), dump(nodes))
				}
				sameRecords(t, collect(t, nodes), wants)
				checkBatchFields(t, nodes[0], spec, c)
			})
		}
	}
}

// checkBatchFields checks the batch node's children: names, types, sizes and a few values.
func checkBatchFields(t *testing.T, b *codec.Node, spec batchSpec, codecName string) {
	t.Helper()
	if b.Name != "batch" || b.Type != wire.RecordBatch {
		t.Fatalf("batch node is %s %s", b.Name, b.Type)
	}
	fields := []struct {
		name, typ string
		size      int
	}{{"baseOffset", "int64", 8}, {"batchLength", "int32", 4}, {"partitionLeaderEpoch", "int32", 4},
		{"magic", "int8", 1}, {"crc", "uint32", 4}, {"attributes", "int16", 2}, {"lastOffsetDelta", "int32", 4},
		{"baseTimestamp", "int64", 8}, {"maxTimestamp", "int64", 8}, {"producerId", "int64", 8},
		{"producerEpoch", "int16", 2}, {"baseSequence", "int32", 4}, {"recordsCount", "int32", 4},
		{"records", "compressed_records", b.Size - 61}}
	if codecName == "none" {
		fields[len(fields)-1].typ = "record_data"
	}
	if len(b.Children) != len(fields) {
		t.Fatalf("batch has %d children, want %d:\n%s", len(b.Children), len(fields), dump([]*codec.Node{b}))
	}
	for i, f := range fields {
		n := b.Children[i]
		if n.Name != f.name || n.Type.String() != f.typ || n.Size != f.size {
			t.Errorf("batch field %d: %s %s %d, want %s %s %d", i, n.Name, n.Type, n.Size, f.name, f.typ, f.size)
		}
	}
	if v := find(b, "baseOffset").Value; v != spec.baseOffset {
		t.Errorf("baseOffset %v, want %d", v, spec.baseOffset)
	}
	if v := find(b, "attributes").Value; v != int64(spec.attrs|codecIDs[codecName]) {
		t.Errorf("attributes %v", v)
	}
	if v := find(b, "recordsCount").Value; v != int64(len(spec.records)) {
		t.Errorf("recordsCount %v, want %d", v, len(spec.records))
	}
	recs := find(b, "records")
	if codecName == "none" {
		if len(recs.Children) != len(spec.records) || recs.Head() != 0 && len(spec.records) > 0 {
			t.Errorf("records: %d, head %d", len(recs.Children), recs.Head())
		}
	} else if want := map[string]string{"xerial": "snappy"}[codecName]; recs.Value != codecName && recs.Value != want {
		t.Errorf("compressed records value %v", recs.Value)
	}
	for i, r := range recs.Children {
		if r.Type != wire.Record || r.Name != fmt.Sprintf("[%d]", i) {
			t.Errorf("record %d is %s %s", i, r.Name, r.Type)
		}
	}
}

// TestRecordFields checks one record's nodes in detail: varint sizes, key/value coverage,
// headers.
func TestRecordFields(t *testing.T) {
	rec := kmsg.Record{OffsetDelta: 300, TimestampDelta64: -1, Key: nil, Value: bytes.Repeat([]byte("v"), 70),
		Headers: []kmsg.Header{{Key: "h", Value: []byte("1")}}}
	data, _ := batchSpec{baseOffset: 10, baseTimestamp: t0, codec: "none", records: []kmsg.Record{rec}}.build(t)
	nodes, ws := decode(t, New(Options{}), data)
	if len(ws) > 0 {
		t.Fatal(warnings(ws))
	}
	r := find(find(nodes[0], "records"), "[0]")
	want := []struct {
		name, typ string
		size      int
		value     any
	}{
		{"length", "varint", 2, int64(r.Size - 2)}, {"attributes", "int8", 1, int64(0)},
		{"timestampDelta", "varlong", 1, int64(-1)}, {"offsetDelta", "varint", 2, int64(300)},
		{"key", "varint_bytes", 1, nil}, {"value", "varint_bytes", 2 + 70, nil}, {"headers", "varint_array", 1 + 1 + 1 + 1 + 1, int64(1)},
	}
	for i, w := range want {
		n := r.Children[i]
		if n.Name != w.name || n.Type.String() != w.typ || n.Size != w.size {
			t.Errorf("child %d: %s %s %d, want %s %s %d", i, n.Name, n.Type, n.Size, w.name, w.typ, w.size)
		}
		if w.value != nil && n.Value != w.value {
			t.Errorf("%s = %v, want %v", w.name, n.Value, w.value)
		}
	}
	if v := find(r, "key").Value; v != nil {
		t.Errorf("null key has value %#v", v)
	}
	h := find(find(r, "headers"), "[0]")
	if h.Type != wire.Header || find(h, "headerKey").Type != wire.VarintString || find(h, "headerKey").Value != "h" {
		t.Errorf("header:\n%s", dump([]*codec.Node{h}))
	}
	if r.Value != "offset 310, timestamp 2026-11-29T10:00:01.233Z" {
		t.Errorf("record value %q", r.Value)
	}
}

// TestControlBatches: commit and abort markers are decoded into their fields.
func TestControlBatches(t *testing.T) {
	for _, c := range []string{"none", "gzip", "zstd"} {
		t.Run(c, func(t *testing.T) {
			spec := batchSpec{baseOffset: 500, baseTimestamp: t0, attrs: 0x30, codec: c, producerID: 77, producerEpoch: 2,
				records: []kmsg.Record{marker(0, true)}}
			commit, wc := spec.build(t)
			spec.baseOffset, spec.records = 501, []kmsg.Record{marker(0, false)}
			abort, wa := spec.build(t)
			nodes, ws := decode(t, New(Options{}), append(commit, abort...))
			if len(ws) > 0 {
				t.Fatal(warnings(ws))
			}
			sameRecords(t, collect(t, nodes), append(wc, wa...))
			// Each key keeps its 4 bytes as its value (a record's key is never shown as null
			// when it is not) and names its type.
			var types []string
			codec.Walk(nodes, func(n *codec.Node, _ int) bool {
				if n.Name != "key" {
					return true
				}
				b, _ := n.Value.([]byte)
				if len(n.Children) != 2 || n.Children[0].Name != "version" || n.Children[1].Name != "type" ||
					len(b) != 4 || n.Head() != 1 || n.Size != 5 || n.Children[1].Value != int64(b[3]) {
					t.Errorf("control key:\n%s", dump([]*codec.Node{n}))
				}
				types = append(types, n.Children[1].Note)
				return false
			})
			if strings.Join(types, " ") != "COMMIT ABORT" {
				t.Errorf("control types named %q, want COMMIT ABORT", types)
			}
			val := codec.Find(nodes, "coordinatorEpoch")
			if val == nil || val.Value != int64(9) || val.Type != wire.Int32 {
				t.Errorf("coordinatorEpoch: %+v", val)
			}
			if v := codec.Find(nodes, "value"); v == nil || fmt.Sprintf("%x", v.Value) != "000000000009" {
				t.Errorf("control value: %+v", v)
			}
		})
	}
}

// TestLegacy: magic 0 and 1 message sets, plain and in compressed wrappers, decode to exactly
// what was encoded, absolute offsets included.
func TestLegacy(t *testing.T) {
	msgs := []kv{{[]byte("k0"), []byte("first")}, {nil, []byte("null key")}, {[]byte("null value"), nil},
		{[]byte{}, []byte{}}, {[]byte("k4"), bytes.Repeat([]byte("abc"), 200)}}
	for _, magic := range []int8{0, 1} {
		for _, c := range []string{"none", "gzip", "snappy", "xerial", "lz4"} {
			for _, attrs := range []int8{0, 0x08} {
				if attrs != 0 && magic == 0 {
					continue
				}
				t.Run(fmt.Sprintf("v%d/%s/attrs%d", magic, c, attrs), func(t *testing.T) {
					data, wants := messageSet(t, magic, c, 1000, t0, attrs, msgs)
					nodes, ws := decode(t, New(Options{}), data)
					if len(ws) > 0 {
						t.Fatalf("warnings:\n%s\n%s", warnings(ws), dump(nodes))
					}
					sameRecords(t, collect(t, nodes), wants)
					m := nodes[0]
					if m.Type != wire.Message {
						t.Fatalf("entry type %s", m.Type)
					}
					names := []string{"offset", "messageSize", "crc", "magic", "attributes", "timestamp", "key", "value"}
					if magic == 0 {
						names = append(names[:5], "key", "value")
					}
					for i, n := range names {
						if m.Children[i].Name != n {
							t.Errorf("child %d is %s, want %s", i, m.Children[i].Name, n)
						}
					}
				})
			}
		}
	}
}

// TestMixed: several batches and message sets of different magics in one field.
func TestMixed(t *testing.T) {
	var data []byte
	var wants []want
	add := func(b []byte, w []want) { data, wants = append(data, b...), append(wants, w...) }
	add(messageSet(t, 0, "gzip", 0, 0, 0, []kv{{nil, []byte("v0 a")}, {nil, []byte("v0 b")}}))
	add(messageSet(t, 1, "snappy", 2, t0, 0, []kv{{nil, []byte("v1 a")}}))
	add(messageSet(t, 1, "none", 3, t0, 0, []kv{{[]byte("k"), []byte("v1 plain")}}))
	add(batchSpec{baseOffset: 4, baseTimestamp: t0, codec: "lz4", records: plainRecords(3)}.build(t))
	add(batchSpec{baseOffset: 7, baseTimestamp: t0, codec: "none", records: headerRecords()}.build(t))
	add(batchSpec{baseOffset: 10, baseTimestamp: t0, codec: "zstd", attrs: 0x30, records: []kmsg.Record{marker(0, true)}}.build(t))
	nodes, ws := decode(t, New(Options{}), data)
	if len(ws) > 0 {
		t.Fatal(warnings(ws))
	}
	if len(nodes) != 6 {
		t.Fatalf("%d entries", len(nodes))
	}
	sameRecords(t, collect(t, nodes), wants)
}

// TestOldKafkaLZ4: Kafka before 0.10 wrote lz4 frames whose descriptor checksum also covered
// the magic number; they decode anyway. A checksum wrong in any other way is still refused.
func TestOldKafkaLZ4(t *testing.T) {
	data, wants := kafka09LZ4(t)
	nodes, ws := decode(t, New(Options{}), data)
	if len(ws) > 0 {
		t.Fatal(warnings(ws))
	}
	sameRecords(t, collect(t, nodes), wants)

	data[26+6]++ // the checksum byte of the lz4 frame
	sealMessage(data)
	_, ws = decode(t, New(Options{}), data)
	if len(ws) != 1 || !strings.Contains(ws[0].Msg, "checksum") {
		t.Fatalf("a wrong lz4 header checksum: %v", ws)
	}
}

// kafka09LZ4 is a magic 0 message set in an lz4 wrapper as Kafka 0.9 wrote it: the frame
// descriptor checksum computed over the magic number too.
func kafka09LZ4(t testing.TB) ([]byte, []want) {
	t.Helper()
	data, wants := messageSet(t, 0, "lz4", 20, 0, 0, []kv{{nil, []byte("from kafka 0.9")}, {[]byte("k"), []byte("v")}})
	// The lz4 frame starts after the message header (22 bytes with the null key) and the
	// value's length; pierrec writes no content size, so the checksum is its byte 6.
	frame := data[26:]
	if frame[4]&0x09 != 0 || frame[6] != byte(xxh32(frame[4:6])>>8) {
		t.Fatalf("unexpected lz4 frame descriptor, or xxh32 disagrees with pierrec's checksum")
	}
	frame[6] = byte(xxh32(frame[:6]) >> 8)
	return sealMessage(data), wants
}

func TestXXH32(t *testing.T) {
	for in, want := range map[string]uint32{"": 0x02cc5d05, "a": 0x550d7456, "abc": 0x32d153ff,
		"Nobody inspects the spammish repetition": 0xe2293b2f} {
		if got := xxh32([]byte(in)); got != want {
			t.Errorf("xxh32(%q) = %08x, want %08x", in, got, want)
		}
	}
}

// TestPartial: a batch cut at the end of the data (as Fetch responses do) is a "partial batch"
// node, not a warning.
func TestPartial(t *testing.T) {
	one, wants := batchSpec{baseOffset: 1, baseTimestamp: t0, codec: "none", records: plainRecords(3)}.build(t)
	two, _ := batchSpec{baseOffset: 4, baseTimestamp: t0, codec: "gzip", records: plainRecords(3)}.build(t)
	v1, _ := messageSet(t, 1, "none", 8, t0, 0, []kv{{nil, []byte("x")}})
	for _, cut := range []int{1, 11, 12, 16, 17, 40, 61, len(two) - 1} {
		for name, tail := range map[string][]byte{"batch": two, "message": v1} {
			if cut >= len(tail) {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", name, cut), func(t *testing.T) {
				nodes, ws := decode(t, New(Options{}), append(append([]byte{}, one...), tail[:cut]...))
				if len(ws) > 0 {
					t.Fatal(warnings(ws))
				}
				last := nodes[len(nodes)-1]
				if len(nodes) != 2 || last.Name != "partial batch" || last.Type != wire.Bytes || last.Size != cut {
					t.Fatalf("\n%s", dump(nodes))
				}
				if s, _ := last.Value.(string); !strings.HasPrefix(s, "truncated") {
					t.Errorf("partial batch value %q", s)
				}
				sameRecords(t, collect(t, nodes), wants)
			})
		}
	}
}

// TestCorruptCRC: a wrong CRC is one warning naming both values; the batch still decodes.
func TestCorruptCRC(t *testing.T) {
	data, wants := batchSpec{baseOffset: 1, baseTimestamp: t0, codec: "gzip", records: plainRecords(3)}.build(t)
	good := binary.BigEndian.Uint32(data[17:])
	data[17] ^= 0xff
	nodes, ws := decode(t, New(Options{}), data)
	want := fmt.Sprintf("batch at offset 100: crc 0x%08x does not match computed 0x%08x", good^0xff000000, good)
	if len(ws) != 1 || ws[0].Msg != want || ws[0].Offset != 117 {
		t.Fatalf("warnings %v, want %q", ws, want)
	}
	sameRecords(t, collect(t, nodes), wants)

	// A flipped bit in a record is caught too.
	data, _ = batchSpec{baseOffset: 1, baseTimestamp: t0, codec: "none", records: plainRecords(3)}.build(t)
	data[len(data)-2] ^= 1
	if _, ws = decode(t, New(Options{}), data); len(ws) != 1 || !strings.Contains(ws[0].Msg, "does not match computed") {
		t.Fatalf("warnings %v", ws)
	}

	msg, _ := messageSet(t, 1, "none", 5, t0, 0, []kv{{nil, []byte("x")}})
	msg[len(msg)-1] ^= 1
	if _, ws = decode(t, New(Options{}), msg); len(ws) != 1 || !strings.HasPrefix(ws[0].Msg, "message at offset 100: crc 0x") {
		t.Fatalf("warnings %v", ws)
	}
}

// TestTruncatedPayload: a compressed payload cut short (the batch itself complete and its CRC
// right) is a warning, the payload a childless compressed_records node.
func TestTruncatedPayload(t *testing.T) {
	for _, c := range allCodecs[1:] {
		t.Run(c, func(t *testing.T) {
			data, _ := batchSpec{baseOffset: 1, baseTimestamp: t0, codec: c, records: plainRecords(20)}.build(t)
			data = sealBatch(data[:61+(len(data)-61)/2])
			nodes, ws := decode(t, New(Options{}), data)
			if len(ws) != 1 || !strings.Contains(ws[0].Msg, "records left compressed") {
				t.Fatalf("warnings: %v", ws)
			}
			t.Log(ws[0])
			if r := find(nodes[0], "records"); r.Type != wire.CompressedRecords || len(r.Children) != 0 {
				t.Fatalf("\n%s", dump(nodes))
			}
		})
	}
}

// TestImpossibleCounts: record and header counts that the bytes cannot hold, and lengths that
// run past their record, are warnings over "undecoded" bytes, and allocate nothing by the count.
func TestImpossibleCounts(t *testing.T) {
	batch := func(c string, count uint32, recs []kmsg.Record) []byte {
		data, _ := batchSpec{baseOffset: 1, baseTimestamp: t0, codec: c, records: recs}.build(t)
		binary.BigEndian.PutUint32(data[57:], count)
		return sealBatch(data)
	}
	hdr, _ := batchSpec{baseOffset: 1, baseTimestamp: t0, codec: "none", records: []kmsg.Record{{Value: []byte("v"), Headers: []kmsg.Header{{Key: "a"}}}}}.build(t)
	// Header count: zigzag varint 0xfe 0xff 0xff 0xff 0x0f = 2^31-1, in place of the count 1.
	i := bytes.LastIndex(hdr, []byte{2, 2, 'a'})
	hdrHuge := sealBatch(append(append(append([]byte{}, hdr[:i]...), 0xfe, 0xff, 0xff, 0xff, 0x0f), hdr[i+1:]...))
	binary.BigEndian.PutUint32(hdrHuge[8:], uint32(len(hdrHuge)-12))
	hdrHuge = fixRecordLength(t, hdrHuge, 4)
	cases := map[string][]byte{
		"record count":            batch("none", 0x7fffffff, plainRecords(3)),
		"negative count":          batch("none", 0x80000000, plainRecords(3)),
		"count over decompressed": batch("gzip", 0x7fffffff, plainRecords(3)),
		"header count":            hdrHuge,
		"count too small":         batch("none", 2, plainRecords(3)),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			d := New(Options{})
			var nodes []*codec.Node
			var ws []codec.Warning
			allocated := measure(func() { nodes, ws = d.DecodeRecords(data, 100, nil) })
			if err := checkTiling(nodes, 100, 100+len(data), false); err != nil {
				t.Fatal(err)
			}
			if len(ws) == 0 {
				t.Fatalf("no warning:\n%s", dump(nodes))
			}
			t.Log(warnings(ws))
			if codec.Find(nodes, "undecoded") == nil {
				t.Errorf("no undecoded node:\n%s", dump(nodes))
			}
			// A gzip reader takes about 60 KiB; 2^31 records would take far more.
			if allocated > 256<<10 {
				t.Errorf("decoding allocated %d bytes", allocated)
			}
		})
	}
}

// TestCountOneTooMany: a count of one more record than the batch holds is a warning.
func TestCountOneTooMany(t *testing.T) {
	data, wants := batchSpec{baseOffset: 1, baseTimestamp: t0, codec: "none", records: plainRecords(3)}.build(t)
	binary.BigEndian.PutUint32(data[57:], 4)
	nodes, ws := decode(t, New(Options{}), sealBatch(data))
	if len(ws) != 1 || !strings.Contains(ws[0].Msg, "record [3]") {
		t.Fatalf("warnings: %v", ws)
	}
	sameRecords(t, collect(t, nodes), wants)
}

// fixRecordLength rewrites the length varint of the only record of an uncompressed batch to
// cover the rest of the batch (delta bytes were inserted into it).
func fixRecordLength(t *testing.T, b []byte, delta int) []byte {
	t.Helper()
	old := int64(b[61] >> 1) // a one-byte zigzag varint
	n := old + int64(delta)
	if n > 63 {
		t.Fatal("record too long for this helper")
	}
	b[61] = byte(n << 1)
	return sealBatch(b)
}

// measure returns the bytes fn allocated.
func measure(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestMalformed: garbage of several kinds: warnings and tiling, no panic.
func TestMalformed(t *testing.T) {
	good, _ := batchSpec{baseOffset: 1, baseTimestamp: t0, codec: "none", records: plainRecords(2)}.build(t)
	badMagic := append([]byte{}, good...)
	badMagic[16] = 7
	shortLen := append([]byte{}, good...)
	binary.BigEndian.PutUint32(shortLen[8:], 20)
	recLen := append([]byte{}, good...)
	recLen[61] = 0x7e // record length 63: past the batch
	unknownCodec := append([]byte{}, good...)
	unknownCodec[22] |= 6
	cases := map[string][]byte{
		"bad magic": badMagic, "short length": shortLen, "record length": sealBatch(recLen),
		"unknown codec": sealBatch(unknownCodec), "trailing bytes": sealBatch(append(append([]byte{}, good...), 1, 2, 3)),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			nodes, ws := decode(t, New(Options{}), data)
			if len(ws) == 0 {
				t.Fatalf("no warning:\n%s", dump(nodes))
			}
			t.Log(warnings(ws))
		})
	}
}

// TestCRCsMatchKafkaDefinitions pins the checksums to their definitions: CRC-32C for batches
// (Castagnoli) and CRC-32 (IEEE) for legacy messages, with a known vector each.
func TestCRCsMatchKafkaDefinitions(t *testing.T) {
	if c := crc32.Checksum([]byte("123456789"), castagnoli); c != 0xe3069283 {
		t.Errorf("crc32c check value %08x", c)
	}
	if c := crc32.ChecksumIEEE([]byte("123456789")); c != 0xcbf43926 {
		t.Errorf("crc32 check value %08x", c)
	}
}
