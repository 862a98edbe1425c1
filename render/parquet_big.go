package render

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/kdissect/kdissect/codec"
)

// bigTree is the field tree of a big message (over ParquetHoldsUpTo), compressed as it is
// written into the one data page its row's fields column gets: its JSON, tens of MB for a
// Fetch response of megabytes, is never held whole. parquet-go would take the tree as one
// value and copy it whole several times (into the column, into the page, growing each), and
// the collector, stalled by each copy, would run without end at the heap limit.
//
// The row goes in a row group of its own: parquet-go writes the row with an empty tree into a
// file of one row (miniFile), whose fields column chunk is then replaced by the page, and
// copies that file's row group into its own file as it is (parquet.Writer.WriteRowGroup), with
// its column and offset indexes, without reading the page.
type bigTree struct {
	enc *zstd.Encoder
	// chunk holds the JSON not yet compressed; page is the compressed JSON, size its length
	// before compression.
	chunk []byte
	page  bytes.Buffer
	size  int
	// mini writes the row's other columns, to the end of file.
	mini *parquet.GenericWriter[parquetRow]
	file bytes.Buffer
}

// treeSink compresses the JSON of a tree, counting its bytes.
type treeSink struct {
	t *bigTree
}

func (s treeSink) Write(b []byte) (int, error) {
	s.t.size += len(b)
	return s.t.enc.Write(b)
}

// newBigTree returns a bigTree whose pages are compressed as the writer's are, and whose row
// files are written with its options.
func newBigTree(options []parquet.WriterOption) (*bigTree, error) {
	enc, err := zstd.NewWriter(nil, zstdOptions()...)
	if err != nil {
		return nil, err
	}
	return &bigTree{enc: enc, mini: parquet.NewGenericWriter[parquetRow](io.Discard, options...)}, nil
}

// write compresses the field tree of m into the page, with f writing it.
func (t *bigTree) write(f *fieldWriter, m *codec.Message) error {
	t.page.Reset()
	t.enc.Reset(&t.page)
	t.size = 0
	f.out, f.err = treeSink{t}, nil
	b := f.tree(t.chunk[:0], m)
	if _, err := f.out.Write(b); err != nil && f.err == nil {
		f.err = err
	}
	t.chunk = b[:0]
	err := f.err
	f.out, f.err = nil, nil
	if err == nil {
		err = t.enc.Close()
	}
	if err == nil && t.size > parquetMaxPage {
		err = fmt.Errorf("a field tree of %d bytes: more than a Parquet page holds", t.size)
	}
	return err
}

// parquetMaxPage is the most bytes a page may hold before compression (its header counts them
// in 32 bits).
const parquetMaxPage = 1<<31 - 1 - 64

// rowGroup returns the row group of the one row r, whose fields are the tree written last:
// r, with an empty tree, in a file written with the writer's options, whose fields column
// chunk is replaced by the page (replaceFields).
func (t *bigTree) rowGroup(r *parquetRow) (parquet.RowGroup, error) {
	t.file.Reset()
	t.mini.Reset(&t.file)
	row := *r
	row.Fields = []byte{}
	if _, err := t.mini.Write([]parquetRow{row}); err != nil {
		return nil, err
	}
	if err := t.mini.Close(); err != nil {
		return nil, err
	}
	parts, err := t.replaceFields(t.file.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the row of frame %d: %w", r.Frame, err)
	}
	f, err := parquet.OpenFile(parts, parts.size, parquet.FileSchema(t.mini.Schema()))
	if err != nil {
		return nil, fmt.Errorf("the row of frame %d: %w", r.Frame, err)
	}
	return f.RowGroups()[0], nil
}

// replaceFields returns file, a Parquet file of one row whose fields column holds an empty
// string in one data page (v2), with that column chunk replaced by one page of the tree: its
// header as parquet-go wrote it but for the sizes and the checksum, the definition levels as
// they were, and the values compressed as two zstd frames (a zstd stream may have several),
// the value's length and the JSON, since the JSON's length is known only once compressed.
// The new chunk goes where the offset indexes were, then they, then the footer that points
// to them; the rest of the file stays where it was.
func (t *bigTree) replaceFields(file []byte) (*readerParts, error) {
	meta, end, err := parquetFooter(file)
	if err != nil {
		return nil, err
	}
	if len(meta.RowGroups) != 1 {
		return nil, fmt.Errorf("%d row groups in the file of one row", len(meta.RowGroups))
	}
	rg := &meta.RowGroups[0]
	// By its place: after Reset, parquet-go's writer leaves the columns' paths out.
	leaf, _ := t.mini.Schema().Lookup("fields")
	i := leaf.ColumnIndex
	if i >= len(rg.Columns) {
		return nil, fmt.Errorf("no fields column among %d", len(rg.Columns))
	}
	col := &rg.Columns[i]
	old := slice(file, col.MetaData.DataPageOffset, col.MetaData.TotalCompressedSize)
	var header format.PageHeader
	hlen, err := unmarshalPrefix(old, &header)
	if err != nil {
		return nil, fmt.Errorf("the fields page's header: %w", err)
	}
	v2 := header.DataPageHeaderV2.V
	levels := int(v2.DefinitionLevelsByteLength + v2.RepetitionLevelsByteLength)
	if header.Type != format.DataPageV2 || v2.NumValues != 1 || v2.NumNulls != 0 || hlen+levels > len(old) ||
		int64(hlen)+int64(header.CompressedPageSize) != col.MetaData.TotalCompressedSize {
		return nil, fmt.Errorf("the fields column is not one page v2 of one value")
	}
	// The value's length, as the encoding of the column's values has it before the bytes.
	var length []byte
	switch v2.Encoding {
	case format.Plain:
		length = binary.LittleEndian.AppendUint32(nil, uint32(t.size))
	case format.DeltaLengthByteArray:
		length, _ = new(delta.BinaryPackedEncoding).EncodeInt32(nil, []int32{int32(t.size)})
	default:
		return nil, fmt.Errorf("the fields column's values are in %s", v2.Encoding)
	}
	body := [][]byte{old[hlen : hlen+levels], t.enc.EncodeAll(length, nil), t.page.Bytes()}
	crc, n := uint32(0), 0
	for _, b := range body {
		crc = crc32.Update(crc, crc32.IEEETable, b)
		n += len(b)
	}
	header.CompressedPageSize = int32(n)
	header.UncompressedPageSize = int32(levels + len(length) + t.size)
	header.CRC = int32(crc)
	head, err := thrift.Marshal(new(thrift.CompactProtocol), &header)
	if err != nil {
		return nil, err
	}

	// parquet-go reads the offset indexes as one run: they are all moved after the chunk, that
	// of the fields column changed.
	var index format.OffsetIndex
	if _, err := unmarshalPrefix(slice(file, col.OffsetIndexOffset, int64(col.OffsetIndexLength)), &index); err != nil {
		return nil, fmt.Errorf("the fields column's offset index: %w", err)
	}
	if len(index.PageLocations) != 1 {
		return nil, fmt.Errorf("the fields column's offset index has %d pages", len(index.PageLocations))
	}
	at := rg.Columns[0].OffsetIndexOffset // where the chunk goes, and the indexes after it
	chunkSize := int64(len(head) + n)
	index.PageLocations[0].Offset = at
	index.PageLocations[0].CompressedPageSize = int32(chunkSize)
	for j := range index.UnencodedByteArrayDataBytes {
		index.UnencodedByteArrayDataBytes[j] = int64(t.size)
	}
	fieldsIndex, err := thrift.Marshal(new(thrift.CompactProtocol), &index)
	if err != nil {
		return nil, err
	}
	var indexes []byte
	for j := range rg.Columns {
		c := &rg.Columns[j]
		b := fieldsIndex
		if j != i {
			if b = slice(file, c.OffsetIndexOffset, int64(c.OffsetIndexLength)); b == nil {
				return nil, fmt.Errorf("no offset index for column %d", j)
			}
		}
		c.OffsetIndexOffset = at + chunkSize + int64(len(indexes))
		c.OffsetIndexLength = int32(len(b))
		indexes = append(indexes, b...)
	}

	md := &col.MetaData
	grewBy := int64(len(head)+levels+len(length)+t.size) - md.TotalUncompressedSize
	rg.TotalByteSize += grewBy
	rg.TotalCompressedSize += chunkSize - md.TotalCompressedSize
	md.TotalUncompressedSize += grewBy
	md.TotalCompressedSize = chunkSize
	if col.FileOffset == md.DataPageOffset {
		col.FileOffset = at
	}
	md.DataPageOffset = at
	md.SizeStatistics.UnencodedByteArrayDataBytes = int64(t.size)
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), meta)
	if err != nil {
		return nil, err
	}
	footer = binary.LittleEndian.AppendUint32(footer, uint32(len(footer)))
	footer = append(footer, "PAR1"...)
	if at <= 0 || at > end {
		return nil, fmt.Errorf("offset indexes at %d", at)
	}
	return newReaderParts(file[:at], head, body[0], body[1], body[2], indexes, footer), nil
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
		c := copy(b[n:], p[off:])
		n += c
		off = 0
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}
