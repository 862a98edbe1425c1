package codec_test

import (
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"testing"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
)

// sized puts the 4-byte size prefix before a frame's header and body.
func sized(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

func unhex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantPart is what one node's encoding must be: its prefix (encoding, size, value, null) or,
// for varints, its raw bytes.
type wantPart struct {
	name     string // found depth-first from the start of the message
	encoding wire.Prefix
	size     int
	value    int64
	null     bool
	raw      string // hex: a varint's bytes, or a varint prefix's
}

// checkParts checks the named nodes' encodings, and all the nodes with CheckEncodings.
func checkParts(t *testing.T, nodes []*codec.Node, b []byte, want []wantPart) {
	t.Helper()
	problems, _ := codec.CheckEncodings(nodes, b)
	for _, p := range problems {
		t.Error(p)
	}
	for _, w := range want {
		n := codec.Find(nodes, w.name)
		if n == nil {
			t.Errorf("no node %s", w.name)
			continue
		}
		if raw := hex.EncodeToString(n.AppendRaw(nil)); raw != w.raw {
			t.Errorf("%s: raw %s, want %s", w.name, raw, w.raw)
		}
		p, ok := n.Prefix()
		if w.encoding == wire.NoPrefix {
			if ok {
				t.Errorf("%s: prefix %+v, want none", w.name, p)
			}
			continue
		}
		if !ok || p.Encoding != w.encoding || p.Size != w.size || p.Value != w.value || !p.Known || n.Null() != w.null {
			t.Errorf("%s: prefix %+v (ok %v, null %v), want %s of %d bytes holding %d (null %v)", w.name, p, ok, n.Null(), w.encoding, w.size, w.value, w.null)
		}
	}
}

// TestEncodingsFlexibleAndNot: the same API (Metadata) at a classic version and at a flexible
// one, built by hand: classic int16 and int32 prefixes with -1 for null, compact uvarint
// prefixes with 0 for null and length + 1 otherwise, the flexible header's tagged section.
func TestEncodingsFlexibleAndNot(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(set)
	for _, tt := range []struct {
		name  string
		frame []byte
		want  []wantPart
	}{
		{"Metadata v8 (classic)", sized(
			unhex(t, "0003"+"0008"+"00000001"+"ffff"), // header v1: a null client id
			unhex(t, "ffffffff"+"01"+"00"+"00")),      // Topics null, then three bools
			[]wantPart{
				{name: "client_id", encoding: wire.Int16Prefix, size: 2, value: -1, null: true},
				{name: "Topics", encoding: wire.Int32Prefix, size: 4, value: -1, null: true},
				{name: "AllowAutoTopicCreation"},
			}},
		{"Metadata v9 (flexible)", sized(
			// header v2: client id (classic even here), a tagged section with unknown tag 5
			unhex(t, "0003"+"0009"+"00000001"+"000a"+hex.EncodeToString([]byte("sarama-adm"))+"01"+"05"+"02"+"abcd"),
			unhex(t, "02"+"02"+"74"+"00"+"01"+"00"+"00"+"00")), // one topic "t", its tags, three bools, tags
			[]wantPart{
				{name: "client_id", encoding: wire.Int16Prefix, size: 2, value: 10},
				{name: "_tagged_fields", encoding: wire.UvarintPrefix, size: 1, value: 1, raw: "01"},
				{name: "tag", raw: "05"},
				{name: "size", raw: "02"},
				{name: "Topics", encoding: wire.UvarintPrefix, size: 1, value: 2, raw: "02"},
				{name: "Name", encoding: wire.UvarintPrefix, size: 1, value: 2, raw: "02"},
			}},
		{"Metadata v9 (flexible, null topics)", sized(
			unhex(t, "0003"+"0009"+"00000001"+"ffff"+"00"),
			unhex(t, "00"+"01"+"00"+"00"+"00")),
			[]wantPart{
				{name: "client_id", encoding: wire.Int16Prefix, size: 2, value: -1, null: true},
				{name: "Topics", encoding: wire.UvarintPrefix, size: 1, value: 0, null: true, raw: "00"},
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := c.DecodeRequest(tt.frame)
			if len(m.Warnings) > 0 {
				t.Fatalf("warnings: %v", m.Warnings)
			}
			checkParts(t, m.Fields, tt.frame, tt.want)
		})
	}
}

// handBatch is an uncompressed record batch (magic 2) of one record built by hand: a
// timestampDelta of -10 (zigzag 19, the byte 0x13), the offsetDelta given, a null key, the
// value "hi" and one header "k" with a null value.
func handBatch(offsetDelta ...byte) []byte {
	rec := append([]byte{0x00, 0x13}, offsetDelta...)
	rec = append(rec, 0x01, 0x04, 'h', 'i', 0x02, 0x02, 'k', 0x01)
	rec = append([]byte{byte(len(rec) << 1)}, rec...)
	var b []byte
	b = binary.BigEndian.AppendUint64(b, 0)             // baseOffset
	b = binary.BigEndian.AppendUint32(b, 0)             // batchLength, below
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)    // partitionLeaderEpoch
	b = append(b, 2)                                    // magic
	b = binary.BigEndian.AppendUint32(b, 0)             // crc, below
	b = binary.BigEndian.AppendUint16(b, 0x0010)        // attributes: transactional
	b = binary.BigEndian.AppendUint32(b, 0)             // lastOffsetDelta
	b = binary.BigEndian.AppendUint64(b, 1767323045010) // baseTimestamp
	b = binary.BigEndian.AppendUint64(b, 1767323045000) // maxTimestamp
	b = binary.BigEndian.AppendUint64(b, 7)             // producerId
	b = binary.BigEndian.AppendUint16(b, 0)             // producerEpoch
	b = binary.BigEndian.AppendUint32(b, 0)             // baseSequence
	b = binary.BigEndian.AppendUint32(b, 1)             // recordsCount
	b = append(b, rec...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// TestEncodingsRecord: a record's zigzag varints, its varint-prefixed key, value and headers
// and its batch's attribute bits, on a batch built by hand.
func TestEncodingsRecord(t *testing.T) {
	b := handBatch(0x00)
	nodes, ws := records.New(records.Options{}).DecodeRecords(b, 0, nil)
	if len(ws) > 0 {
		t.Fatalf("warnings: %v", ws)
	}
	checkParts(t, nodes, b, []wantPart{
		{name: "length", raw: "16"},
		{name: "timestampDelta", raw: "13"},
		{name: "offsetDelta", raw: "00"},
		{name: "key", encoding: wire.VarintPrefix, size: 1, value: -1, null: true, raw: "01"},
		{name: "value", encoding: wire.VarintPrefix, size: 1, value: 2, raw: "04"},
		{name: "headers", encoding: wire.VarintPrefix, size: 1, value: 1, raw: "02"},
		{name: "headerKey", encoding: wire.VarintPrefix, size: 1, value: 1, raw: "02"},
	})
	if n := codec.Find(nodes, "recordsCount"); n == nil || n.Value != int64(1) || n.PrefixSize != 0 {
		t.Errorf("recordsCount %v, want 1, a field of its own", n)
	}
	if n := codec.Find(nodes, "timestampDelta"); n == nil || n.Value != int64(-10) {
		t.Errorf("timestampDelta %v, want -10", n)
	}
	attrs := codec.Find(nodes, "attributes")
	if attrs == nil || attrs.Bits != wire.BatchAttributes {
		t.Fatalf("batch attributes %+v", attrs)
	}
	got := map[string]int64{}
	for _, bit := range attrs.Bits.Bits(attrs.Value.(int64)) {
		got[bit.Name] = bit.Value
	}
	if got["isTransactional"] != 1 || got["compression"] != 0 || got["isControlBatch"] != 0 || len(got) != 6 {
		t.Errorf("batch attribute bits %v", got)
	}
}

// TestEncodingsLongVarint: an offsetDelta written in five bytes whose last carries bits above
// 32: the value keeps the low 32 bits, as Kafka's reader does, and the raw bytes come back whole.
func TestEncodingsLongVarint(t *testing.T) {
	b := handBatch(0x82, 0x80, 0x80, 0x80, 0x70)
	nodes, ws := records.New(records.Options{}).DecodeRecords(b, 0, nil)
	if len(ws) > 0 {
		t.Fatalf("warnings: %v", ws)
	}
	checkParts(t, nodes, b, []wantPart{{name: "offsetDelta", raw: "8280808070"}})
	if n := codec.Find(nodes, "offsetDelta"); n == nil || n.Value != int64(1) {
		t.Errorf("offsetDelta %v, want 1", n)
	}
}

// FuzzRecordEncodings feeds arbitrary records fields to the records decoder: every prefix and
// varint of what it decodes says what its bytes hold (CheckEncodings).
func FuzzRecordEncodings(f *testing.F) {
	f.Add(handBatch(0x00))
	f.Add(handBatch(0x82, 0x80, 0x80, 0x80, 0x70))
	d := records.New(records.Options{MaxDecompressed: 1 << 20})
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, _ := d.DecodeRecords(data, 0, nil)
		if problems, _ := codec.CheckEncodings(nodes, data); len(problems) > 0 {
			t.Fatalf("encodings: %v", problems)
		}
	})
}
