package records

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
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
	nodes, ws := d.DecodeRecords(data, 100, nil)
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
		if last.Type != wire.RecordData || last.Offset+last.Size != n.Offset+n.Size {
			t.Errorf("batch %d ends with %s %s at %d+%d", i, last.Name, last.Type, last.Offset, last.Size)
		}
		want := counts[[]string{"none", "zstd"}[i]]
		if c := n.Children[len(n.Children)-2]; c.Name != "recordsCount" || c.Value != int64(want) {
			t.Errorf("batch %d: before the records %s %v, want recordsCount %d", i, c.Name, c.Value, want)
		}
		codec.Walk(n.Children, func(c *codec.Node, _ int) bool {
			if c.Decompressed || c.Type == wire.Record {
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

// TestCountsOnly: CountsOnly keeps, of each batch header, the attributes, the record count and
// the fields BatchFields names, with the same nodes and the same warnings (a damaged CRC, a
// cut batch) as HeadersOnly, in far fewer nodes.
func TestCountsOnly(t *testing.T) {
	good := append(buildBatch(t, "none", 3), buildBatch(t, "zstd", 5)...)
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-1] ^= 0xff
	cut := good[:len(good)-7]
	for _, fields := range [][]string{nil, {"producerId", "crc", "baseOffset", "lastOffsetDelta"}} {
		for name, data := range map[string][]byte{"good": good, "bad crc": badCRC, "cut": cut} {
			t.Run(fmt.Sprint(name, fields), func(t *testing.T) {
				testCountsOnly(t, data, fields, name == "bad crc", name == "good" && fields == nil)
			})
		}
	}
}

// testCountsOnly checks a CountsOnly decode of data, with fields, against a HeadersOnly one;
// few says it must take far fewer nodes.
func testCountsOnly(t *testing.T, data []byte, fields []string, badCRC, few bool) {
	full, fullWs := New(Options{HeadersOnly: true}).DecodeRecords(data, 100, nil)
	counts, countsWs := New(Options{HeadersOnly: true, CountsOnly: true, BatchFields: fields}).DecodeRecords(data, 100, nil)
	if badCRC && len(fullWs) == 0 {
		t.Error("no warning for a damaged CRC")
	}
	if !slices.Equal(fullWs, countsWs) {
		t.Errorf("warnings %v, want %v", countsWs, fullWs)
	}
	if len(counts) != len(full) {
		t.Fatalf("%d entries, want %d", len(counts), len(full))
	}
	nFull, nCounts := 0, 0
	codec.Walk(full, func(*codec.Node, int) bool { nFull++; return true })
	codec.Walk(counts, func(*codec.Node, int) bool { nCounts++; return true })
	text := func(k *codec.Node) string {
		return fmt.Sprintf("%s %s %d+%d %v %v %q", k.Name, k.Type, k.Offset, k.Size, k.Value, k.Bits, k.Note)
	}
	for i, c := range counts {
		f := full[i]
		if c.Name != f.Name || c.Type != f.Type || c.Offset != f.Offset || c.Size != f.Size {
			t.Errorf("entry %d: %s %s %d+%d, want %s %s %d+%d", i, c.Name, c.Type, c.Offset, c.Size, f.Name, f.Type, f.Offset, f.Size)
		}
		if f.Type != wire.RecordBatch {
			continue
		}
		var want, got []string
		for _, k := range f.Children {
			if k.Name == "attributes" || k.Name == "recordsCount" || k.Type == wire.RecordData || slices.Contains(fields, k.Name) {
				want = append(want, text(k))
			}
		}
		for _, k := range c.Children {
			got = append(got, text(k))
		}
		if len(want) != 3+len(fields) || !slices.Equal(got, want) {
			t.Errorf("batch %d: %q, want %q", i, got, want)
		}
	}
	if few && nCounts*3 > nFull {
		t.Errorf("%d nodes, against %d with HeadersOnly", nCounts, nFull)
	}
}
