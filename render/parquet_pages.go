package render

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/internal/pieces"
)

// A field tree bigger than a page is compressed as it is written into a data page of its own
// (treePage): its JSON, tens of MB for a Fetch response of megabytes, is never held whole.
// parquet-go would take the tree as one value and copy it whole several times (into the
// column, into the page, growing each), and the collector, stalled by each copy, would run
// without end at the heap limit.
//
// So rows go to parquet-go a row group at a time (groupWriter): written first into a file of
// their own, with an empty tree in a page of its own where a tree was compressed, whose
// fields column chunk is then made again with the compressed pages in place of the empty ones
// (replacePages); parquet-go copies that file's row group into its own file as it is
// (parquet.Writer.WriteRowGroup), with its statistics and page index, without reading it.

// parquetStreamOver is the size of the biggest message whose field tree is written as a value
// of the fields column: the trees of bigger ones, some hundreds of kB of JSON and more, are
// compressed into pages of their own.
const parquetStreamOver = 64 << 10

// parquetPieceBytes is the size of the pieces a compressed tree is kept in: never grown nor
// copied whole, and kept (parquetSpare of them) for the trees to come.
const (
	parquetPieceBytes = 128 << 10
	parquetSpare      = 8
)

// treePage is the field tree of a row, compressed: the row's place, in its batch and then in
// its row group, the JSON compressed (in pieces, never grown nor copied whole), and its
// length.
type treePage struct {
	row        int
	compressed pieces.Chain
	size       int
}

// treeCompressor writes field trees compressed as they are written, a chunk at a time, into
// pieces from spare.
type treeCompressor struct {
	stream treeStream
	chunk  []byte
	spare  *pieces.Pool
	page   treePage
}

// newTreeCompressor returns a treeCompressor of codec; one that compresses in a goroutine of
// its own while the tree is written (concurrent) is for the trees written at once, on the
// goroutine showing messages, and is stopped once done with.
func newTreeCompressor(codec pageCodec, spare *pieces.Pool, concurrent bool) (*treeCompressor, error) {
	s, err := codec.stream()
	if err != nil {
		return nil, err
	}
	if concurrent {
		s = newAsyncStream(s)
	}
	return &treeCompressor{stream: s, spare: spare}, nil
}

func (c *treeCompressor) Write(b []byte) (int, error) {
	c.page.size += len(b)
	return c.stream.Write(b)
}

// compress writes the field tree of m with f, compressed.
func (c *treeCompressor) compress(f *fieldWriter, m *codec.Message) (treePage, error) {
	c.page = treePage{compressed: pieces.Chain{Pool: c.spare}}
	c.stream.Reset(&c.page.compressed)
	f.out, f.err = c, nil
	b := f.tree(c.chunk[:0], m)
	if _, err := c.Write(b); err != nil && f.err == nil {
		f.err = err
	}
	c.chunk = b[:0]
	err := f.err
	f.out, f.err = nil, nil
	if cerr := c.stream.Close(); err == nil {
		err = cerr
	}
	if err == nil && c.page.size > parquetMaxPage {
		err = fmt.Errorf("a field tree of %d bytes: more than a Parquet page holds", c.page.size)
	}
	page := c.page
	c.page = treePage{}
	return page, err
}

// stop ends the goroutine of a concurrent compressor.
func (c *treeCompressor) stop() {
	if a, ok := c.stream.(*asyncStream); ok {
		close(a.work)
	}
}

// asyncStream compresses the chunks written to it on a goroutine of its own, so that the
// goroutine writing the tree goes on meanwhile; a chunk is copied into one of two buffers,
// and Close waits for the last. Errors come back at Close.
type asyncStream struct {
	s    treeStream
	work chan asyncChunk
	free chan []byte
	done chan error
}

// asyncChunk is a chunk to compress, or the end of a tree.
type asyncChunk struct {
	b   []byte
	end bool
}

func newAsyncStream(s treeStream) *asyncStream {
	a := &asyncStream{s: s, work: make(chan asyncChunk, 2), free: make(chan []byte, 2), done: make(chan error)}
	a.free <- nil
	a.free <- nil
	go a.run()
	return a
}

// run compresses the chunks until work is closed.
func (a *asyncStream) run() {
	var err error
	for c := range a.work {
		if c.end {
			if err == nil {
				err = a.s.Close()
			}
			a.done <- err
			err = nil
			continue
		}
		if err == nil {
			_, err = a.s.Write(c.b)
		}
		a.free <- c.b[:0]
	}
}

// Reset begins a tree: only between trees, when run waits for work.
func (a *asyncStream) Reset(w io.Writer) { a.s.Reset(w) }

func (a *asyncStream) Write(b []byte) (int, error) {
	if len(b) > 0 {
		a.work <- asyncChunk{b: append(<-a.free, b...)}
	}
	return len(b), nil
}

func (a *asyncStream) Close() error {
	a.work <- asyncChunk{end: true}
	return <-a.done
}

// parquetMaxPage is the most bytes a page may hold before compression (its header counts them
// in 32 bits).
const parquetMaxPage = 1<<31 - 1 - 64

// groupWriter writes the rows of a row group into a file of their own (file), the trees of
// pages compressed as an empty tree in a page of its own, until the group is full; then it
// hands the group, the pages in place, to the writer.
type groupWriter struct {
	w     *parquet.GenericWriter[parquetRow]
	file  bytes.Buffer
	mini  *parquet.GenericWriter[parquetRow]
	codec pageCodec
	spare *pieces.Pool
	// fields is the place of the fields column among the leaves; rows counts the group's
	// rows, pages are their compressed trees, pageBytes the bytes of those.
	fields    int
	rows      int
	pages     []treePage
	pageBytes int
}

func newGroupWriter(w *parquet.GenericWriter[parquetRow], codec pageCodec, spare *pieces.Pool,
	options []parquet.WriterOption) *groupWriter {
	g := &groupWriter{w: w, codec: codec, spare: spare}
	g.mini = parquet.NewGenericWriter[parquetRow](&g.file, options...)
	leaf, _ := w.Schema().Lookup("fields")
	g.fields = leaf.ColumnIndex
	return g
}

// write writes rows; pages are the compressed trees of some, by their place among rows.
func (g *groupWriter) write(rows []parquetRow, pages []treePage) error {
	slices.SortFunc(pages, func(a, b treePage) int { return cmp.Compare(a.row, b.row) })
	for i := 0; i < len(rows); {
		if len(pages) > 0 && pages[0].row == i {
			if err := g.writePage(rows[i:i+1], pages[0]); err != nil {
				return err
			}
			pages, i = pages[1:], i+1
			continue
		}
		end := len(rows)
		if len(pages) > 0 {
			end = pages[0].row
		}
		// parquet-go ends a page only between the slices it is given (of 64 rows at most):
		// rows are given in runs of about a page of field trees (pageRun), so that a page
		// holds little more.
		n := min(pageRun(rows[i:end]), ParquetRowGroupRows-g.rows)
		if _, err := g.mini.Write(rows[i : i+n]); err != nil {
			return err
		}
		g.rows += n
		i += n
		if err := g.endIfFull(); err != nil {
			return err
		}
	}
	return nil
}

// writePage writes the one row whose tree is page: an empty tree, in a page of its own.
func (g *groupWriter) writePage(row []parquetRow, page treePage) error {
	col := g.mini.ColumnWriters()[g.fields]
	if err := col.Flush(); err != nil {
		return err
	}
	row[0].Fields = []byte{}
	if _, err := g.mini.Write(row); err != nil {
		return err
	}
	if err := col.Flush(); err != nil {
		return err
	}
	page.row = g.rows
	g.pages = append(g.pages, page)
	g.pageBytes += page.compressed.Len
	g.rows++
	return g.endIfFull()
}

// endIfFull ends the row group once it holds ParquetRowGroupRows rows, or
// parquetRowGroupBytes.
func (g *groupWriter) endIfFull() error {
	if g.rows < ParquetRowGroupRows && g.mini.Size()+int64(g.pageBytes) <= parquetRowGroupBytes {
		return nil
	}
	return g.end()
}

// end hands the row group to the writer.
func (g *groupWriter) end() error {
	if g.rows == 0 {
		return nil
	}
	if err := g.mini.Close(); err != nil {
		return err
	}
	file, err := g.replacePages(g.file.Bytes())
	if err != nil {
		return fmt.Errorf("a row group's field trees: %w", err)
	}
	f, err := parquet.OpenFile(file, file.size, parquet.FileSchema(g.w.Schema()))
	if err != nil {
		return fmt.Errorf("a row group's file: %w", err)
	}
	if _, err := g.w.WriteRowGroup(f.RowGroups()[0]); err != nil {
		return err
	}
	for i := range g.pages {
		g.pages[i].compressed.Release()
	}
	clear(g.pages)
	g.pages, g.rows, g.pageBytes = g.pages[:0], 0, 0
	if g.file.Cap() > 2*parquetRowGroupBytes {
		g.file = bytes.Buffer{}
	}
	g.file.Reset()
	g.mini.Reset(&g.file)
	return nil
}

// replacePages returns file, a Parquet file of one row group whose fields column has an empty
// tree, in a data page (v2) of its own, in the rows of g.pages, with that column chunk made
// again: each of those pages replaced by the compressed tree, its header as parquet-go wrote
// it but for the sizes and the checksum, the definition levels as they were, the values
// compressed as the codec's prefix (the value's length, as the encoding of the values has it)
// and then the JSON, compressed before its length was known. The chunk goes
// where the offset indexes were, then they (parquet-go reads them as one run), then the
// footer that points to them; the rest of the file stays where it was.
func (g *groupWriter) replacePages(file []byte) (*readerParts, error) {
	if len(g.pages) == 0 {
		return newReaderParts(file), nil
	}
	meta, _, err := parquetFooter(file)
	if err != nil {
		return nil, err
	}
	if len(meta.RowGroups) != 1 || g.fields >= len(meta.RowGroups[0].Columns) {
		return nil, fmt.Errorf("%d row groups", len(meta.RowGroups))
	}
	rg := &meta.RowGroups[0]
	col := &rg.Columns[g.fields]
	var index format.OffsetIndex
	if _, err := unmarshalPrefix(slice(file, col.OffsetIndexOffset, int64(col.OffsetIndexLength)), &index); err != nil {
		return nil, fmt.Errorf("the fields column's offset index: %w", err)
	}
	at := rg.Columns[0].OffsetIndexOffset // where the chunk goes
	if at <= 0 || at > int64(len(file)) {
		return nil, fmt.Errorf("offset indexes at %d", at)
	}
	parts := [][]byte{file[:at]}
	pages := g.pages
	var chunkSize, grewBy int64
	for k := range index.PageLocations {
		loc := &index.PageLocations[k]
		old := slice(file, loc.Offset, int64(loc.CompressedPageSize))
		if old == nil {
			return nil, fmt.Errorf("page %d of the fields column is outside the file", k)
		}
		loc.Offset = at + chunkSize
		if len(pages) == 0 || int64(pages[0].row) != loc.FirstRowIndex {
			parts = append(parts, old)
			chunkSize += int64(len(old))
			continue
		}
		page, grew, err := g.page(old, pages[0])
		if err != nil {
			return nil, fmt.Errorf("the tree of row %d: %w", pages[0].row, err)
		}
		parts = append(parts, page...)
		n := 0
		for _, b := range page {
			n += len(b)
		}
		loc.CompressedPageSize = int32(n)
		chunkSize += int64(n)
		grewBy += grew
		if k < len(index.UnencodedByteArrayDataBytes) {
			index.UnencodedByteArrayDataBytes[k] = int64(pages[0].size)
		}
		col.MetaData.SizeStatistics.UnencodedByteArrayDataBytes += int64(pages[0].size)
		pages = pages[1:]
	}
	if len(pages) > 0 {
		return nil, fmt.Errorf("no page of its own for the tree of row %d", pages[0].row)
	}
	indexes, err := g.offsetIndexes(file, rg, &index, at+chunkSize)
	if err != nil {
		return nil, err
	}
	md := &col.MetaData
	rg.TotalByteSize += grewBy
	rg.TotalCompressedSize += chunkSize - md.TotalCompressedSize
	md.TotalUncompressedSize += grewBy
	md.TotalCompressedSize = chunkSize
	if col.FileOffset == md.DataPageOffset {
		col.FileOffset = at
	}
	md.DataPageOffset = at
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), meta)
	if err != nil {
		return nil, err
	}
	footer = binary.LittleEndian.AppendUint32(footer, uint32(len(footer)))
	footer = append(footer, "PAR1"...)
	return newReaderParts(append(parts, indexes, footer)...), nil
}

// offsetIndexes returns the offset indexes of the columns of rg, one after the other, that of
// the fields column made again from index, to go at offset at; rg points to them.
func (g *groupWriter) offsetIndexes(file []byte, rg *format.RowGroup, index *format.OffsetIndex, at int64) ([]byte, error) {
	fields, err := thrift.Marshal(new(thrift.CompactProtocol), index)
	if err != nil {
		return nil, err
	}
	var indexes []byte
	for j := range rg.Columns {
		c := &rg.Columns[j]
		b := fields
		if j != g.fields {
			if b = slice(file, c.OffsetIndexOffset, int64(c.OffsetIndexLength)); b == nil {
				return nil, fmt.Errorf("no offset index for column %d", j)
			}
		}
		c.OffsetIndexOffset = at + int64(len(indexes))
		c.OffsetIndexLength = int32(len(b))
		indexes = append(indexes, b...)
	}
	return indexes, nil
}

// page returns the parts of the page of tree in place of old, the page of one empty tree, and
// how many bytes more it holds before compression.
func (g *groupWriter) page(old []byte, tree treePage) ([][]byte, int64, error) {
	var header format.PageHeader
	hlen, err := unmarshalPrefix(old, &header)
	if err != nil {
		return nil, 0, fmt.Errorf("the page header: %w", err)
	}
	v2 := header.DataPageHeaderV2.V
	levels := int(v2.DefinitionLevelsByteLength + v2.RepetitionLevelsByteLength)
	if header.Type != format.DataPageV2 || v2.NumValues != 1 || v2.NumRows != 1 || v2.NumNulls != 0 ||
		levels < 0 || hlen+levels > len(old) {
		return nil, 0, fmt.Errorf("not a page of one value")
	}
	var length []byte
	switch v2.Encoding {
	case format.Plain:
		length = binary.LittleEndian.AppendUint32(nil, uint32(tree.size))
	case format.DeltaLengthByteArray:
		length, _ = new(delta.BinaryPackedEncoding).EncodeInt32(nil, []int32{int32(tree.size)})
	default:
		return nil, 0, fmt.Errorf("values in %s", v2.Encoding)
	}
	body := append([][]byte{old[hlen : hlen+levels], g.codec.prefix(length, tree.size)}, tree.compressed.Pieces...)
	crc, n := uint32(0), 0
	for _, b := range body {
		crc = crc32.Update(crc, crc32.IEEETable, b)
		n += len(b)
	}
	was := int64(hlen) + int64(header.UncompressedPageSize)
	header.CompressedPageSize = int32(n)
	header.UncompressedPageSize = int32(levels + len(length) + tree.size)
	header.CRC = int32(crc)
	head, err := thrift.Marshal(new(thrift.CompactProtocol), &header)
	if err != nil {
		return nil, 0, err
	}
	return append([][]byte{head}, body...), int64(len(head)) + int64(header.UncompressedPageSize) - was, nil
}

// parquetFooter decodes the footer of a Parquet file, and returns where it begins.
func parquetFooter(file []byte) (*format.FileMetaData, int64, error) {
	if len(file) < 12 || string(file[len(file)-4:]) != "PAR1" {
		return nil, 0, fmt.Errorf("not a Parquet file")
	}
	n := int64(binary.LittleEndian.Uint32(file[len(file)-8:]))
	end := int64(len(file)) - 8 - n
	if end < 4 {
		return nil, 0, fmt.Errorf("a footer of %d bytes in a file of %d", n, len(file))
	}
	meta := new(format.FileMetaData)
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), file[end:len(file)-8], meta); err != nil {
		return nil, 0, fmt.Errorf("the footer: %w", err)
	}
	return meta, end, nil
}

// slice returns the n bytes of file at off, or none when they are not all there.
func slice(file []byte, off, n int64) []byte {
	if off < 0 || n < 0 || off > int64(len(file)) || n > int64(len(file))-off {
		return nil
	}
	return file[off : off+n]
}

// unmarshalPrefix decodes the thrift struct at the start of b, and returns its length.
func unmarshalPrefix(b []byte, v any) (int, error) {
	r := bytes.NewReader(b)
	if err := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(r)).Decode(v); err != nil {
		return 0, err
	}
	return len(b) - r.Len(), nil
}

// readerParts reads the concatenation of byte slices, without copying them into one.
type readerParts struct {
	parts [][]byte
	size  int64
}

func newReaderParts(parts ...[]byte) *readerParts {
	r := &readerParts{parts: parts}
	for _, p := range parts {
		r.size += int64(len(p))
	}
	return r
}

func (r *readerParts) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read at %d", off)
	}
	n := 0
	for _, p := range r.parts {
		if n == len(b) {
			break
		}
		if off >= int64(len(p)) {
			off -= int64(len(p))
			continue
		}
		n += copy(b[n:], p[off:])
		off = 0
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}
