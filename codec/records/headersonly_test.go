package records

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
)

// TestHeadersOnly: with HeadersOnly a batch is its header and one record_data node holding the
// record count; nothing is decompressed and the nodes still tile the data.
func TestHeadersOnly(t *testing.T) {
	data := []byte{}
	counts := map[string]int{"none": 3, "zstd": 5}
	for _, codecName := range []string{"none", "zstd"} {
		data = append(data, buildBatch(t, codecName, counts[codecName])...)
	}
	d := New(Options{HeadersOnly: true})
	nodes, ws := d.DecodeRecords(data, 100)
	if len(ws) > 0 {
		t.Fatal(ws)
	}
	if len(nodes) != 2 {
		t.Fatalf("%d nodes, want 2 batches", len(nodes))
	}
	pos := 100
	for i, n := range nodes {
		if n.Offset != pos {
			t.Fatalf("batch %d at %d, want %d", i, n.Offset, pos)
		}
		pos += n.Size
		last := n.Children[len(n.Children)-1]
		if last.Type != "record_data" || last.Offset+last.Size != n.Offset+n.Size {
			t.Errorf("batch %d ends with %s %s at %d+%d", i, last.Name, last.Type, last.Offset, last.Size)
		}
		want := counts[[]string{"none", "zstd"}[i]]
		if last.Value != int64(want) {
			t.Errorf("batch %d: record count %v, want %d", i, last.Value, want)
		}
		codec.Walk(n.Children, func(c *codec.Node, _ int) bool {
			if c.Decompressed || c.Type == "record" {
				t.Errorf("batch %d: %s %s decoded", i, c.Name, c.Type)
			}
			return true
		})
	}
}

func buildBatch(t *testing.T, codecName string, n int) []byte {
	spec := batchSpec{codec: codecName, baseTimestamp: 1767323045000}
	for i := 0; i < n; i++ {
		spec.records = append(spec.records, kmsg.Record{OffsetDelta: int32(i), Key: []byte("k"), Value: []byte("value")})
	}
	b, _ := spec.build(t)
	return b
}
