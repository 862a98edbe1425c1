package records

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
)

// Codecs as the tests name them: "snappy" is raw snappy, "xerial" snappy in xerial framing.
var codecIDs = map[string]int16{"none": 0, "gzip": 1, "snappy": 2, "xerial": 2, "lz4": 3, "zstd": 4}

// compress compresses data as Kafka clients do, with the libraries the decoder uses.
func compress(t testing.TB, name string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch name {
	case "none":
		return data
	case "gzip":
		w := gzip.NewWriter(&buf)
		w.Write(data)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	case "snappy":
		return snappy.Encode(nil, data)
	case "xerial":
		return xerial.Encode(nil, data)
	case "lz4":
		w := lz4.NewWriter(&buf)
		w.Write(data)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	case "zstd":
		w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("unknown codec %q", name)
	}
	return buf.Bytes()
}

// want is one record or message as a consumer would see it.
type want struct {
	key, value []byte // nil for null
	headers    []kmsg.Header
	offset     int64
	timestamp  int64 // milliseconds; -1 for none (magic 0)
	control    string
}

// encodeRecord encodes r with its Length filled in.
func encodeRecord(r kmsg.Record) []byte {
	r.Length = 0
	r.Length = int32(len(r.AppendTo(nil)) - 1) // a zero length takes one byte
	return r.AppendTo(nil)
}

// batchSpec describes a record batch to build with kmsg.
type batchSpec struct {
	baseOffset, baseTimestamp int64
	attrs                     int16 // everything but the codec bits
	codec                     string
	producerID                int64
	producerEpoch             int16
	baseSequence              int32
	records                   []kmsg.Record
}

// build encodes the batch, compressed, with its length and CRC-32C filled in, and returns it
// with the records as a consumer must see them.
func (b batchSpec) build(t testing.TB) ([]byte, []want) {
	t.Helper()
	var raw []byte
	var wants []want
	var lastDelta int32
	maxTS := b.baseTimestamp
	for _, r := range b.records {
		raw = append(raw, encodeRecord(r)...)
		lastDelta = r.OffsetDelta
		maxTS = max(maxTS, b.baseTimestamp+r.TimestampDelta64)
	}
	for _, r := range b.records {
		w := want{key: r.Key, value: r.Value, headers: r.Headers, offset: b.baseOffset + int64(r.OffsetDelta),
			timestamp: b.baseTimestamp + r.TimestampDelta64}
		if b.attrs&0x08 != 0 {
			w.timestamp = maxTS
		}
		if b.attrs&0x20 != 0 {
			w.control = []string{"ABORT", "COMMIT"}[r.Key[3]]
			w.key, w.value = nil, nil
		}
		wants = append(wants, w)
	}
	producerID, epoch, seq := b.producerID, b.producerEpoch, b.baseSequence
	if producerID == 0 {
		producerID, epoch, seq = -1, -1, -1
	}
	rb := kmsg.RecordBatch{
		FirstOffset: b.baseOffset, PartitionLeaderEpoch: -1, Magic: 2,
		Attributes: b.attrs | codecIDs[b.codec], LastOffsetDelta: lastDelta,
		FirstTimestamp: b.baseTimestamp, MaxTimestamp: maxTS,
		ProducerID: producerID, ProducerEpoch: epoch, FirstSequence: seq,
		NumRecords: int32(len(b.records)), Records: compress(t, b.codec, raw),
	}
	out := rb.AppendTo(nil)
	return sealBatch(out), wants
}

// sealBatch fills in a batch's length and CRC-32C.
func sealBatch(b []byte) []byte {
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// message encodes one legacy message with kmsg, its size and CRC-32 filled in.
func message(magic int8, offset int64, attrs int8, ts int64, key, value []byte) []byte {
	var out []byte
	if magic == 0 {
		m := kmsg.MessageV0{Offset: offset, Magic: 0, Attributes: attrs, Key: key, Value: value}
		out = m.AppendTo(nil)
	} else {
		m := kmsg.MessageV1{Offset: offset, Magic: 1, Attributes: attrs, Timestamp: ts, Key: key, Value: value}
		out = m.AppendTo(nil)
	}
	return sealMessage(out)
}

func sealMessage(b []byte) []byte {
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

// kv is a legacy message's key and value.
type kv struct{ key, value []byte }

// messageSet builds a legacy message set of the given messages starting at offset base, either
// plain or wrapped in one compressed message as the clients of that magic did: in magic 1 the
// inner offsets are relative (0, 1, ...) and the wrapper holds the last absolute offset.
func messageSet(t testing.TB, magic int8, codecName string, base, ts int64, attrs int8, msgs []kv) ([]byte, []want) {
	t.Helper()
	var set []byte
	var wants []want
	for i, m := range msgs {
		w := want{key: m.key, value: m.value, offset: base + int64(i), timestamp: -1}
		if magic == 1 {
			w.timestamp = ts + int64(i)
			if attrs&0x08 != 0 && codecName != "none" {
				w.timestamp = ts
			}
		}
		wants = append(wants, w)
	}
	if codecName == "none" {
		for i, m := range msgs {
			set = append(set, message(magic, base+int64(i), attrs, ts+int64(i), m.key, m.value)...)
		}
		return set, wants
	}
	var inner []byte
	for i, m := range msgs {
		off := base + int64(i)
		if magic == 1 {
			off = int64(i)
		}
		inner = append(inner, message(magic, off, 0, ts+int64(i), m.key, m.value)...)
	}
	last := base + int64(len(msgs)-1)
	return message(magic, last, attrs|int8(codecIDs[codecName]), ts, nil, compress(t, codecName, inner)), wants
}

var describeRE = regexp.MustCompile(`^offset (-?\d+)(?:, timestamp (\S+)|, (no timestamp))?(?:, (.*))?$`)

// collect returns the records and messages found in nodes, as a consumer sees them.
func collect(t testing.TB, nodes []*codec.Node) []want {
	t.Helper()
	var out []want
	codec.Walk(nodes, func(n *codec.Node, _ int) bool {
		if n.Type != wire.Record && n.Type != wire.Message {
			return true
		}
		if v := find(n, "value"); n.Type == wire.Message && v != nil && v.Type == wire.Records {
			return true // a wrapper: its inner messages count
		}
		s, _ := n.Value.(string)
		m := describeRE.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("%s at %d: value %q does not state offset and timestamp", n.Name, n.Offset, s)
			return false
		}
		w := want{timestamp: -1}
		w.offset, _ = strconv.ParseInt(m[1], 10, 64)
		if m[2] != "" {
			tm, err := time.Parse("2006-01-02T15:04:05.000Z", m[2])
			if err != nil {
				t.Errorf("%s: %v", s, err)
			}
			w.timestamp = tm.UnixMilli()
		}
		if n.Type == wire.Record && m[2] == "" && m[3] == "" {
			t.Errorf("record %q has no timestamp", s)
		}
		if n.Type == wire.Message && !strings.Contains(m[4], "wrapper") {
			w.control = m[4]
		} else if n.Type == wire.Record {
			w.control = m[4]
		}
		if w.control == "" {
			w.key, _ = find(n, "key").Value.([]byte)
			w.value, _ = find(n, "value").Value.([]byte)
		}
		if h := find(n, "headers"); h != nil {
			for _, hn := range h.Children {
				k, _ := find(hn, "headerKey").Value.(string)
				v, _ := find(hn, "value").Value.([]byte)
				w.headers = append(w.headers, kmsg.Header{Key: k, Value: v})
			}
		}
		out = append(out, w)
		return false
	})
	return out
}

// find returns n's direct child named name.
func find(n *codec.Node, name string) *codec.Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// sameRecords requires got to be exactly want, null and empty kept apart.
func sameRecords(t testing.TB, got, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Fatalf("decoded %d records, want %d", len(got), len(wants))
	}
	eq := func(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
	for i, w := range wants {
		g := got[i]
		if !eq(g.key, w.key) || !eq(g.value, w.value) {
			t.Errorf("record %d: key %q value %q, want %q %q", i, g.key, g.value, w.key, w.value)
		}
		if g.offset != w.offset || g.timestamp != w.timestamp || g.control != w.control {
			t.Errorf("record %d: offset %d timestamp %d %q, want %d %d %q", i, g.offset, g.timestamp, g.control, w.offset, w.timestamp, w.control)
		}
		if len(g.headers) != len(w.headers) {
			t.Errorf("record %d: %d headers, want %d", i, len(g.headers), len(w.headers))
			continue
		}
		for j, h := range w.headers {
			if g.headers[j].Key != h.Key || !eq(g.headers[j].Value, h.Value) {
				t.Errorf("record %d header %d: %q=%q, want %q=%q", i, j, g.headers[j].Key, g.headers[j].Value, h.Key, h.Value)
			}
		}
	}
}

// checkTiling requires nodes to tile frame offsets [start, end) exactly, children to tile
// their parent after its prefix, and every node inside decompressed data (only there) to say
// so; decompressed children tile from 0.
func checkTiling(nodes []*codec.Node, start, end int, dec bool) error {
	pos := start
	for _, n := range nodes {
		if n.Offset != pos {
			return fmt.Errorf("%s (%s) starts at %d, want %d", n.Name, n.Type, n.Offset, pos)
		}
		if n.Size < 0 || n.Offset+n.Size > end {
			return fmt.Errorf("%s (%s) at %d+%d runs past %d", n.Name, n.Type, n.Offset, n.Size, end)
		}
		if n.Decompressed != dec {
			return fmt.Errorf("%s (%s) at %d: Decompressed=%v, want %v", n.Name, n.Type, n.Offset, n.Decompressed, dec)
		}
		if n.Type == wire.CompressedRecords {
			if err := checkTiling(n.Children, 0, 1<<40, true); err != nil && len(n.Children) > 0 {
				return fmt.Errorf("in %s at %d: %w", n.Name, n.Offset, err)
			}
		} else if len(n.Children) > 0 {
			if n.Head() < 0 {
				return fmt.Errorf("%s (%s): first child before the node", n.Name, n.Type)
			}
			if err := checkTiling(n.Children, n.Offset+n.Head(), n.Offset+n.Size, dec); err != nil {
				return fmt.Errorf("in %s: %w", n.Name, err)
			}
		}
		pos += n.Size
	}
	if end != 1<<40 && pos != end {
		return fmt.Errorf("nodes end at %d, want %d", pos, end)
	}
	return nil
}

// decode runs the decoder with a frame base of 100 and checks the tiling.
func decode(t testing.TB, d *Decoder, data []byte) ([]*codec.Node, []codec.Warning) {
	t.Helper()
	const base = 100
	nodes, ws := d.DecodeRecords(data, base, nil)
	if err := checkTiling(nodes, base, base+len(data), false); err != nil {
		t.Fatalf("tiling: %v\n%s", err, dump(nodes))
	}
	return nodes, ws
}

// dump renders nodes as the golden files show them.
func dump(nodes []*codec.Node) string {
	var b strings.Builder
	codec.Walk(nodes, func(n *codec.Node, depth int) bool {
		mark := " "
		if n.Decompressed {
			mark = "*"
		}
		v := n.Value
		if bs, ok := v.([]byte); ok {
			if len(bs) > 24 {
				v = fmt.Sprintf("%q...", bs[:24])
			} else {
				v = fmt.Sprintf("%q", bs)
			}
		}
		fmt.Fprintf(&b, "%s%5d %4d %-18s %s%s %v\n", mark, n.Offset, n.Size, n.Type, strings.Repeat("  ", depth), n.Name, v)
		return true
	})
	return b.String()
}

func warnings(ws []codec.Warning) string {
	var s []string
	for _, w := range ws {
		s = append(s, w.String())
	}
	return strings.Join(s, "\n")
}
