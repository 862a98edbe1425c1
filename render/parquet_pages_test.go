package render

import (
	"bytes"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

// treePageEntries are a small message, one over parquetStreamOver, one over ParquetHoldsUpTo
// and two small ones; the trees of the two big ones hold random bytes (in hex), so that they
// are compressed into several pieces.
func treePageEntries() []*model.Entry {
	rng := rand.New(rand.NewPCG(5, 6))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	small := parquetEntries()[1]
	mid := &codec.Message{APIKey: 0, APIName: "Produce", Version: 9, Size: parquetStreamOver + 1, Fields: []*codec.Node{
		{Name: "Value", Type: wire.Bytes, Value: random(3 * parquetPieceBytes / 2)}}}
	big := &codec.Message{APIKey: 1, APIName: "Fetch", Response: true, Size: ParquetHoldsUpTo + 1, Fields: []*codec.Node{
		{Name: "Value", Type: wire.Bytes, Value: random(ParquetHoldsUpTo / 2)},
		{Name: "Name", Type: wire.String, Value: "after the bytes"}}}
	return []*model.Entry{small, {Frame: 8, FirstFrame: 8, Msg: mid}, {Frame: 9, FirstFrame: 9, Msg: big}, small, small}
}

// TestParquetTreePages: with every codec, the trees of messages over parquetStreamOver,
// compressed as they are written, are in pages of their own, in the row group of the rows
// around them; the rows come back with the trees as written whole.
func TestParquetTreePages(t *testing.T) {
	for _, name := range ParquetCompressions() {
		t.Run(name, func(t *testing.T) { treePages(t, name) })
	}
}

func treePages(t *testing.T, name string) {
	entries := treePageEntries()
	data := writeParquet(t, Options{Compression: name}, entries)
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.RowGroups()); n != 1 {
		t.Fatalf("%d row groups, want 1", n)
	}
	leaf, _ := f.Schema().Lookup("fields")
	index, err := f.RowGroups()[0].ColumnChunks()[leaf.ColumnIndex].OffsetIndex()
	if err != nil {
		t.Fatal(err)
	}
	var first []int64
	for i := range index.NumPages() {
		first = append(first, index.FirstRowIndex(i))
	}
	if !slices.Equal(first, []int64{0, 1, 2, 3}) { // small, mid, big, small small
		t.Errorf("pages of the fields column begin at rows %v, want [0 1 2 3]", first)
	}
	rows := readParquet(t, data)
	if len(rows) != len(entries) {
		t.Fatalf("%d rows, want %d", len(rows), len(entries))
	}
	w := fieldWriter{str: NewJSON(io.Discard)}
	for i, r := range rows {
		want := w.tree(nil, entries[i].Msg)
		if r.Frame != int64(entries[i].Frame) || !bytes.Equal(r.Fields, want) {
			t.Errorf("row %d: frame %d, %d bytes of fields; want frame %d, %d bytes", i, r.Frame, len(r.Fields),
				entries[i].Frame, len(want))
		}
	}
	if len(rows[2].Fields) < 2*parquetPieceBytes {
		t.Errorf("the big tree has %d bytes: too few for pieces", len(rows[2].Fields))
	}
}

// TestParquetTreePagesAsParquetGo: with every codec, the file is the one parquet-go writes
// when it is given the trees whole, with the same pages, but for the compression of the trees'
// pages (and so the offsets and sizes): the same metadata, statistics and page indexes, the
// same page headers, the same bytes once decompressed.
func TestParquetTreePagesAsParquetGo(t *testing.T) {
	for _, name := range ParquetCompressions() {
		t.Run(name, func(t *testing.T) { treePagesAsParquetGo(t, name) })
	}
}

func treePagesAsParquetGo(t *testing.T, name string) {
	data := writeParquet(t, Options{Compression: name}, treePageEntries())
	rows := readParquet(t, data)

	// The same rows, given to parquet-go whole, each tree of ours in a page of its own.
	codec, err := newPageCodec(name)
	if err != nil {
		t.Fatal(err)
	}
	var ref bytes.Buffer
	w := parquet.NewGenericWriter[parquetRow](&ref, parquetOptions(codec)...)
	leaf, _ := w.Schema().Lookup("fields")
	for i := range rows {
		own := i == 1 || i == 2
		if own {
			if err := w.ColumnWriters()[leaf.ColumnIndex].Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Write(rows[i : i+1]); err != nil {
			t.Fatal(err)
		}
		if own {
			if err := w.ColumnWriters()[leaf.ColumnIndex].Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	got, want := fileLayout(t, data, leaf.ColumnIndex, codec), fileLayout(t, ref.Bytes(), leaf.ColumnIndex, codec)
	if !reflect.DeepEqual(got.meta, want.meta) {
		t.Errorf("metadata:\n%+v\nwant\n%+v", got.meta, want.meta)
	}
	if !reflect.DeepEqual(got.indexes, want.indexes) {
		t.Errorf("column indexes:\n%+v\nwant\n%+v", got.indexes, want.indexes)
	}
	if !reflect.DeepEqual(got.offsets, want.offsets) {
		t.Errorf("offset indexes:\n%+v\nwant\n%+v", got.offsets, want.offsets)
	}
	if len(got.pages) != len(want.pages) {
		t.Fatalf("%d pages, want %d", len(got.pages), len(want.pages))
	}
	for i := range got.pages {
		g, w := got.pages[i], want.pages[i]
		if !reflect.DeepEqual(g.header, w.header) || !bytes.Equal(g.data, w.data) {
			t.Errorf("page %d: header %+v, %d bytes; want %+v, %d bytes", i, g.header, len(g.data), w.header, len(w.data))
		}
	}
}

// layout is what a Parquet file holds, but where it is and how big compressed: its footer,
// its page indexes and its pages (their headers and their bytes, decompressed), every offset
// and compressed size set to 0.
type layout struct {
	meta    format.FileMetaData
	indexes []format.ColumnIndex
	offsets []format.OffsetIndex
	pages   []layoutPage
}

type layoutPage struct {
	header format.PageHeader
	data   []byte
}

// fileLayout returns the layout of a file of one row group; the pages are those of the
// column of index fields (the other columns are written by parquet-go alone), decompressed by
// dec.
func fileLayout(t *testing.T, file []byte, fields int, dec pageCodec) layout {
	t.Helper()
	meta, _, err := parquetFooter(file)
	if err != nil {
		t.Fatal(err)
	}
	var l layout
	for i := range meta.RowGroups {
		rg := &meta.RowGroups[i]
		rg.FileOffset, rg.TotalCompressedSize = 0, 0
		for j := range rg.Columns {
			c := &rg.Columns[j]
			var ci format.ColumnIndex
			var oi format.OffsetIndex
			if _, err := unmarshalPrefix(slice(file, c.ColumnIndexOffset, int64(c.ColumnIndexLength)), &ci); err != nil {
				t.Fatalf("column %d: %v", j, err)
			}
			if _, err := unmarshalPrefix(slice(file, c.OffsetIndexOffset, int64(c.OffsetIndexLength)), &oi); err != nil {
				t.Fatalf("column %d: %v", j, err)
			}
			for k := range oi.PageLocations {
				loc := &oi.PageLocations[k]
				if j == fields {
					l.pages = append(l.pages, readPage(t, dec, slice(file, loc.Offset, int64(loc.CompressedPageSize))))
				}
				loc.Offset, loc.CompressedPageSize = 0, 0
			}
			l.indexes, l.offsets = append(l.indexes, ci), append(l.offsets, oi)
			c.FileOffset, c.ColumnIndexOffset, c.OffsetIndexOffset, c.OffsetIndexLength = 0, 0, 0, 0
			c.MetaData.DataPageOffset, c.MetaData.DictionaryPageOffset = 0, 0
			if j == fields {
				c.MetaData.TotalCompressedSize = 0
			}
		}
	}
	l.meta = *meta
	return l
}

// readPage returns the header of a data page (v2) and its bytes, the values decompressed.
func readPage(t *testing.T, dec pageCodec, page []byte) layoutPage {
	t.Helper()
	var p layoutPage
	n, err := unmarshalPrefix(page, &p.header)
	if err != nil {
		t.Fatal(err)
	}
	if crc := crc32.ChecksumIEEE(page[n:]); crc != uint32(p.header.CRC) {
		t.Errorf("page checksum %x, the header says %x", crc, uint32(p.header.CRC))
	}
	v2 := p.header.DataPageHeaderV2.V
	levels := n + int(v2.DefinitionLevelsByteLength+v2.RepetitionLevelsByteLength)
	values, err := dec.Decode(nil, page[levels:])
	if err != nil {
		t.Fatal(err)
	}
	p.data = append(slices.Clone(page[n:levels]), values...)
	p.header.CompressedPageSize, p.header.CRC = 0, 0
	return p
}
