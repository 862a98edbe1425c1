package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/pieces"
	"github.com/kdissect/kdissect/model"
)

// TestSnappyStream: a tree compressed a chunk at a time, each chunk's elements copying from
// earlier in the chunk, after the prefix is one Snappy block that decodes to the value's
// length and the tree.
func TestSnappyStream(t *testing.T) {
	var tree []byte
	for i := range 3000 {
		tree = fmt.Appendf(tree, `"field %d":"a value, and a value like it %d",`, i%50, i%7)
	}
	var out pieces.Chain
	out.Pool = pieces.NewPool(1<<10, 4)
	s, err := snappyCodec{}.stream()
	if err != nil {
		t.Fatal(err)
	}
	s.Reset(&out)
	for rest := tree; len(rest) > 0; {
		n := min(len(rest), 20<<10)
		if _, err := s.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	length := []byte{1, 2, 3, 4}
	block := snappyCodec{}.prefix(length, len(tree))
	for _, p := range out.Pieces {
		block = append(block, p...)
	}
	if len(block) > len(tree)/4 {
		t.Errorf("%d bytes compressed into %d: the chunks copy too little", len(tree), len(block))
	}
	got, err := s2.Decode(nil, block)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(length, tree...); !bytes.Equal(got, want) {
		t.Errorf("decoded %d bytes, want %d", len(got), len(want))
	}
}

// TestParquetCompressions: the pages are compressed with the codec asked for, snappy unless
// asked; every codec's file has the same rows.
func TestParquetCompressions(t *testing.T) {
	entries := treeGoldenEntries()
	want := map[string]format.CompressionCodec{"": format.Snappy, "snappy": format.Snappy, "zstd": format.Zstd,
		"none": format.Uncompressed}
	first := readParquet(t, writeParquet(t, Options{}, entries))
	for name, codec := range want {
		data := writeParquet(t, Options{Compression: name}, entries)
		f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, rg := range f.Metadata().RowGroups {
			for _, c := range rg.Columns {
				if c.MetaData.Codec != codec {
					t.Errorf("%q: column %v compressed with %v, want %v", name, c.MetaData.PathInSchema, c.MetaData.Codec, codec)
				}
			}
		}
		rows := readParquet(t, data)
		if len(rows) != len(first) {
			t.Fatalf("%q: %d rows, want %d", name, len(rows), len(first))
		}
		for i := range rows {
			if rows[i].Frame != first[i].Frame || !bytes.Equal(rows[i].Fields, first[i].Fields) {
				t.Errorf("%q: row %d differs from the default's", name, i)
			}
		}
	}
}

// TestParquetCompressionUnknown: a codec that does not exist fails the file.
func TestParquetCompressionUnknown(t *testing.T) {
	p := NewParquet(&bytes.Buffer{}, true, "lzo")
	for _, e := range parquetEntries() {
		if err := p.Message(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err == nil || !strings.Contains(err.Error(), `"lzo"`) {
		t.Errorf("Close: %v, want an error naming lzo", err)
	}
}

// treeGoldenEntries are the messages of parquetEntries, then one over parquetStreamOver and
// one over ParquetHoldsUpTo (its tree written at once and compressed on a goroutine of its
// own), whose trees, of about 130 kB, are written in several chunks, then a small one.
func treeGoldenEntries() []*model.Entry {
	fields := func(tag string) []*codec.Node {
		var ns []*codec.Node
		for i := range 4000 {
			ns = append(ns, &codec.Node{Name: fmt.Sprintf("%s%d", tag, i), Type: wire.String, Value: strings.Repeat("ab", i%20)})
		}
		return ns
	}
	mid := &codec.Message{APIKey: 0, APIName: "Produce", Version: 9, Size: parquetStreamOver + 1, Fields: fields("m")}
	big := &codec.Message{APIKey: 1, APIName: "Fetch", Response: true, Size: ParquetHoldsUpTo + 1, Fields: fields("b")}
	entries := parquetEntries()
	return append(entries, &model.Entry{Frame: 10, FirstFrame: 10, Msg: mid}, &model.Entry{Frame: 11, FirstFrame: 11, Msg: big},
		entries[1])
}

// TestParquetTreesGolden: the files of every codec (testdata/trees-CODEC.parquet, which the
// test in test/duckdb reads back).
func TestParquetTreesGolden(t *testing.T) {
	for _, name := range ParquetCompressions() {
		golden(t, "trees-"+name+".parquet", writeParquet(t, Options{Compression: name, File: "trees.pcap"}, treeGoldenEntries()))
	}
}
