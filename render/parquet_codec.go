package render

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
)

// ParquetCompressions names the codecs that Parquet pages may be compressed with
// (Options.Compression), the default first: snappy writes fastest; zstd makes files 1.5 to 1.8
// times smaller for more CPU; none is for readers without either.
func ParquetCompressions() []string { return []string{"snappy", "zstd", "none"} }

// pageCodec compresses the pages of one file: whole pages for parquet-go (compress.Codec), and
// the field trees too big for a page as they are written, a chunk at a time (treeStream).
type pageCodec interface {
	compress.Codec
	// stream returns a compressor of trees, for one goroutine.
	stream() (treeStream, error)
	// prefix returns what goes before a tree's compressed chunks in its page: the value's
	// length (its encoding's bytes), compressed, and whatever the codec needs to know about the
	// tree's size bytes that follow.
	prefix(length []byte, size int) []byte
}

// treeStream compresses one tree at a time, written in chunks, into the writer given to Reset.
type treeStream interface {
	Reset(w io.Writer)
	io.WriteCloser
}

// newPageCodec returns the codec named (one of ParquetCompressions; "": the default).
func newPageCodec(name string) (pageCodec, error) {
	switch name {
	case "", "snappy":
		return snappyCodec{}, nil
	case "zstd":
		enc, err := zstd.NewWriter(nil, zstdOptions()...)
		if err != nil {
			return nil, err
		}
		return &zstdCodec{enc: enc}, nil
	case "none":
		return noneCodec{}, nil
	}
	return nil, fmt.Errorf("no Parquet compression %q", name)
}

// snappyCodec compresses with Snappy, as the s2 package's fastest Snappy-compatible encoder
// writes it (parquet-go's own codec takes a slower one of s2's).
type snappyCodec struct{}

func (snappyCodec) String() string                            { return "SNAPPY" }
func (snappyCodec) CompressionCodec() format.CompressionCodec { return format.Snappy }

func (snappyCodec) Encode(dst, src []byte) ([]byte, error) { return s2.EncodeSnappy(dst[:0], src), nil }

func (snappyCodec) Decode(dst, src []byte) ([]byte, error) { return s2.Decode(dst[:0], src) }

func (snappyCodec) stream() (treeStream, error) { return &snappyStream{}, nil }

// prefix is the block's header, the length of all it holds, then the value's length as one
// more run of elements.
func (snappyCodec) prefix(length []byte, size int) []byte {
	b := binary.AppendUvarint(nil, uint64(len(length)+size))
	return append(b, snappyElements(s2.EncodeSnappy(nil, length))...)
}

// snappyStream writes a tree as the elements of one Snappy block without its header (the
// prefix has it): each chunk is compressed alone, and a chunk's elements copy only from the
// chunk, counting back from where they are, so chunks' elements follow one another as one
// block's do.
type snappyStream struct {
	w   io.Writer
	buf []byte
}

func (s *snappyStream) Reset(w io.Writer) { s.w = w }

func (s *snappyStream) Write(b []byte) (int, error) {
	s.buf = s2.EncodeSnappy(s.buf[:cap(s.buf)], b)
	if _, err := s.w.Write(snappyElements(s.buf)); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (s *snappyStream) Close() error { return nil }

// snappyElements returns a Snappy block's elements: what follows the length it begins with.
func snappyElements(block []byte) []byte {
	_, n := binary.Uvarint(block)
	return block[n:]
}

// zstdCodec compresses pages with one zstd encoder for the whole file. parquet-go's own codec
// keeps its encoders in a pool that every garbage collection empties, and making an encoder
// costs more than compressing a page.
type zstdCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

func (*zstdCodec) String() string                            { return "ZSTD" }
func (*zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	return c.enc.EncodeAll(src, dst[:0]), nil
}

// Decode is there for the interface: a writer reads nothing back.
func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	if c.dec == nil {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		c.dec = d
	}
	return c.dec.DecodeAll(src, dst[:0])
}

func (*zstdCodec) stream() (treeStream, error) { return zstd.NewWriter(nil, zstdOptions()...) }

// prefix is a frame of its own: a zstd stream may hold several frames, one after the other.
func (c *zstdCodec) prefix(length []byte, _ int) []byte { return c.enc.EncodeAll(length, nil) }

// zstdOptions are those of the encoders of pages. A page is compressed alone: a window the
// size of a page is enough (a big tree's page is compressed as a stream, in such windows).
func zstdOptions() []zstd.EOption {
	return []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(parquetPageBytes), zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false)}
}

// noneCodec leaves pages as they are.
type noneCodec struct{}

func (noneCodec) String() string                            { return "UNCOMPRESSED" }
func (noneCodec) CompressionCodec() format.CompressionCodec { return format.Uncompressed }

func (noneCodec) Encode(dst, src []byte) ([]byte, error) { return append(dst[:0], src...), nil }
func (noneCodec) Decode(dst, src []byte) ([]byte, error) { return append(dst[:0], src...), nil }

func (noneCodec) stream() (treeStream, error)        { return &plainStream{}, nil }
func (noneCodec) prefix(length []byte, _ int) []byte { return length }

// plainStream writes a tree as it comes.
type plainStream struct{ w io.Writer }

func (s *plainStream) Reset(w io.Writer)           { s.w = w }
func (s *plainStream) Write(b []byte) (int, error) { return s.w.Write(b) }
func (s *plainStream) Close() error                { return nil }
