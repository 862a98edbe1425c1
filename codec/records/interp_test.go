package records

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
)

func interpreter(t *testing.T) *codec.Codec {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(set)
	c.Records = New(Options{})
	return c
}

// checkRecordsField requires the interpreter's records field to hold our nodes, tiling it.
func checkRecordsField(t *testing.T, fields []*codec.Node, wants []want) []*codec.Node {
	t.Helper()
	f := codec.Find(fields, "Records")
	if f == nil || len(f.Children) == 0 {
		t.Fatal("no decoded Records field")
	}
	if err := checkTiling(f.Children, f.Offset+f.Head(), f.Offset+f.Size, false); err != nil {
		t.Fatalf("tiling of the records field: %v", err)
	}
	sameRecords(t, collect(t, f.Children), wants)
	return f.Children
}

// TestProduceRequest decodes Produce requests built with kmsg through the interpreter: v9
// (flexible, compact records) with a zstd batch, and v2 with a magic 1 gzip message set.
func TestProduceRequest(t *testing.T) {
	c := interpreter(t)
	batch, wants := batchSpec{baseOffset: 0, baseTimestamp: t0, codec: "zstd", producerID: 12, producerEpoch: 1,
		records: append(headerRecords(), nullRecords()[0])}.build(t)
	set, setWants := messageSet(t, 1, "gzip", 0, t0, 0, []kv{{nil, []byte("one")}, {[]byte("k"), []byte("two")}})
	for _, tc := range []struct {
		version int16
		records []byte
		wants   []want
	}{{9, batch, wants}, {2, set, setWants}} {
		req := kmsg.ProduceRequest{Version: tc.version, Acks: -1, TimeoutMillis: 5000, Topics: []kmsg.ProduceRequestTopic{{
			Topic: "orders", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 3, Records: tc.records}}}}}
		frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kdissect")).AppendRequest(nil, &req, 7)
		m := c.DecodeRequest(frame)
		if len(m.Warnings) > 0 {
			t.Fatalf("v%d: %v", tc.version, m.Warnings)
		}
		checkRecordsField(t, m.Fields, tc.wants)
	}
}

// TestFetchResponse decodes a Fetch v11 response whose records end in a cut batch: no warning.
func TestFetchResponse(t *testing.T) {
	c := interpreter(t)
	one, wants := batchSpec{baseOffset: 40, baseTimestamp: t0, codec: "lz4", records: plainRecords(4)}.build(t)
	two, _ := batchSpec{baseOffset: 44, baseTimestamp: t0, codec: "none", records: plainRecords(4)}.build(t)
	resp := kmsg.FetchResponse{Version: 11, Topics: []kmsg.FetchResponseTopic{{Topic: "orders",
		Partitions: []kmsg.FetchResponseTopicPartition{{Partition: 0, HighWatermark: 48, LastStableOffset: 48,
			PreferredReadReplica: -1, RecordBatches: append(one, two[:50]...)}}}}}
	body := resp.AppendTo(nil)
	frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
	frame = binary.BigEndian.AppendUint32(frame, 9)
	frame = append(frame, body...)
	m := c.DecodeResponse(frame, 1, 11)
	if len(m.Warnings) > 0 {
		t.Fatal(m.Warnings)
	}
	nodes := checkRecordsField(t, m.Fields, wants)
	if last := nodes[len(nodes)-1]; last.Name != "partial batch" || last.Size != 50 {
		t.Fatalf("last node %s %d", last.Name, last.Size)
	}
}
