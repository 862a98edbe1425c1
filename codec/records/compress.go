package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/plural"
)

// codecName names a codec for the compressed payload's node and warnings.
func codecName(id wire.Codec) string {
	if id.Known() {
		return id.String()
	}
	return fmt.Sprintf("unknown codec %d", id)
}

// compressed makes the node for the compressed payload b[p:end]: a leaf of the frame whose
// children are decode's nodes for the decompressed bytes, counted from their start.
func (s *space) compressed(p, end int, id wire.Codec, what string, decode func(*space) []*codec.Node) *codec.Node {
	n := s.node("records", wire.CompressedRecords, p, end-p, codecName(id))
	if !id.Known() {
		s.warn(p, "%s: unknown compression codec %d; records not decoded", what, id)
		return n
	}
	if s.depth > 0 {
		s.warn(p, "%s: compressed data inside compressed data; not decompressed", what)
		return n
	}
	limit := min(s.d.opt.MaxDecompressed, *s.budget)
	out, err := s.d.decompress(id, s.b[p:end], limit, s.nodes.InflateBuffer())
	if err != nil {
		if limit < s.d.opt.MaxDecompressed && errors.As(err, new(errTooBig)) {
			err = fmt.Errorf("%w, what remains of the %d bytes allowed for all the batches of one field", err, fieldBudget*s.d.opt.MaxDecompressed)
		}
		s.warn(p, "%s: %s payload of %s: %v; records left compressed", what, codecName(id), plural.Count(end-p, "byte"), err)
		return n
	}
	*s.budget -= int64(len(out))
	in := &space{d: s.d, b: out, dec: true, anchor: s.base + p, depth: s.depth + 1, ws: s.ws, nodes: s.nodes, times: s.times, budget: s.budget}
	n.Children = decode(in)
	s.nodes.KeepInflated(n, out)
	return n
}

// fieldBudget bounds the decompressed bytes of one records field, in MaxDecompressed units: a
// small frame of many small bombs would otherwise keep many caps' worth of memory alive.
const fieldBudget = 8

// errTooBig is returned when the decompressed data would exceed the limit.
type errTooBig int64

func (e errTooBig) Error() string {
	return fmt.Sprintf("decompressed size over the limit of %d bytes", int64(e))
}

var errSnappyShort = errors.New("xerial snappy framing cut short")

// decompress returns the decompressed form of src for codec id (gzip to zstd), never more than
// limit bytes and never allocating much more than that; it is written into spare when spare
// has room.
func (d *Decoder) decompress(id wire.Codec, src []byte, limit int64, spare []byte) ([]byte, error) {
	switch id {
	case wire.Gzip:
		return d.gunzip(src, limit, spare)
	case wire.Snappy:
		return unsnappy(src, limit, spare)
	case wire.LZ4:
		out, err := unlz4(src, limit, lz4Hint(src), spare)
		if errors.Is(err, lz4.ErrInvalidHeaderChecksum) {
			if fixed := fixLZ4Checksum(src); fixed != nil {
				return unlz4(fixed, limit, lz4Hint(fixed), spare)
			}
		}
		return out, err
	case wire.Zstd:
		return d.unzstd(src, limit, spare)
	}
	return nil, fmt.Errorf("unknown codec %d", id)
}

func (d *Decoder) gunzip(src []byte, limit int64, spare []byte) ([]byte, error) {
	zr, _ := d.gzipPool.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(src))
	} else {
		err = zr.Reset(bytes.NewReader(src))
	}
	if err != nil {
		return nil, err
	}
	defer d.gzipPool.Put(zr)
	// The trailer's ISIZE is the decompressed size modulo 2^32 (of the last member): a hint.
	hint := 0
	if len(src) >= 18 {
		hint = int(binary.LittleEndian.Uint32(src[len(src)-4:]))
	}
	return readLimited(zr, limit, hint, len(src), spare)
}

var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// unsnappy decodes raw snappy, or the xerial framing (magic, version and compatible version,
// then blocks of int32 length + raw snappy) that Kafka's Java client writes. Block headers give
// the decoded sizes, so everything is checked before anything is allocated.
func unsnappy(src []byte, limit int64, spare []byte) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return nil, err
		}
		if int64(n) > limit {
			return nil, errTooBig(limit)
		}
		return snappy.Decode(room(spare, int64(n))[:n], src)
	}
	if len(src) < 16 {
		return nil, errSnappyShort
	}
	var total int64
	for p := 16; p < len(src); {
		blk, next, err := xerialBlock(src, p)
		if err != nil {
			return nil, err
		}
		n, err := snappy.DecodedLen(blk)
		if err != nil {
			return nil, err
		}
		if total += int64(n); total > limit {
			return nil, errTooBig(limit)
		}
		p = next
	}
	out := room(spare, total)[:total]
	o := 0
	for p := 16; p < len(src); {
		blk, next, _ := xerialBlock(src, p)
		n, _ := snappy.DecodedLen(blk)
		got, err := snappy.Decode(out[o:o+n], blk)
		if err != nil {
			return nil, err
		}
		if len(got) != n {
			return nil, snappy.ErrCorrupt
		}
		o += n
		p = next
	}
	return out, nil
}

// xerialBlock returns the xerial block whose length is at src[p:].
func xerialBlock(src []byte, p int) ([]byte, int, error) {
	if len(src)-p < 4 {
		return nil, 0, errSnappyShort
	}
	size := int64(binary.BigEndian.Uint32(src[p:]))
	p += 4
	if size > int64(len(src)-p) {
		return nil, 0, fmt.Errorf("xerial snappy block of %s, %d left", plural.Count(size, "byte"), len(src)-p)
	}
	return src[p : p+int(size)], p + int(size), nil
}

// lz4Hint is the size an lz4 payload's output is expected to have: the content size its frame
// descriptor states, else four times the payload.
func lz4Hint(src []byte) int {
	if len(src) >= 14 && src[4]&lz4ContentSize != 0 {
		return int(min(binary.LittleEndian.Uint64(src[6:]), 1<<40))
	}
	return 4 * len(src)
}

// fixLZ4Checksum works around Kafka < 0.10, whose lz4 frames (magic 0 message sets) carry a
// frame-descriptor checksum computed over the magic number too. It returns a copy of src with
// the checksum byte corrected when src has exactly that flaw, else nil.
func fixLZ4Checksum(src []byte) []byte {
	if len(src) < 7 || binary.LittleEndian.Uint32(src) != 0x184D2204 {
		return nil
	}
	hc := 6 // FLG, BD, then optional content size and dictionary id, then HC
	if src[4]&0x08 != 0 {
		hc += 8
	}
	if src[4]&0x01 != 0 {
		hc += 4
	}
	if len(src) <= hc || src[hc] != byte(xxh32(src[:hc])>>8) {
		return nil
	}
	fixed := bytes.Clone(src)
	fixed[hc] = byte(xxh32(src[4:hc]) >> 8)
	return fixed
}

func (d *Decoder) unzstd(src []byte, limit int64, spare []byte) ([]byte, error) {
	// The stream decoder allocates the frame's whole window up front, so the window is
	// bounded too: by MaxDecompressed, but never below the 8 MiB that the zstd format recommends
	// decoders accept (Kafka's Java client declares windows of a few MiB even for small
	// batches). The output itself is capped by readLimited.
	window := uint64(min(max(d.opt.MaxDecompressed, 8<<20), 1<<31))
	zr, _ := d.zstdPool.Get().(*zstd.Decoder)
	if zr == nil {
		var err error
		zr, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(window), zstd.WithDecoderMaxWindow(window))
		if err != nil {
			return nil, err
		}
	}
	if err := zr.Reset(bytes.NewReader(src)); err != nil {
		return nil, err
	}
	defer d.zstdPool.Put(zr)
	hint := 4 * len(src)
	var h zstd.Header
	if h.Decode(src) == nil && h.HasFCS {
		hint = int(min(h.FrameContentSize, 1<<40))
	}
	out, err := readLimited(zr, limit, hint, len(src), spare)
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		err = fmt.Errorf("%w: over the limit of %d bytes", err, window)
	}
	return out, err
}

// readLimited reads r to its end through an io.LimitReader of maxSize+1 bytes: more than
// maxSize is errTooBig. The buffer starts at the size hint that the compressed data states,
// believed only up to a plausible ratio of the compressed size (so that a few bytes claiming a
// huge size allocate little), and never grows beyond maxSize+1. It starts in spare when spare
// has room.
func readLimited(r io.Reader, maxSize int64, hint, compressed int, spare []byte) ([]byte, error) {
	limit := maxSize + 1
	lr := io.LimitedReader{R: r, N: limit}
	start := min(max(int64(hint), 512), 64*int64(compressed)+4096, limit)
	buf := room(spare, start)
	for {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(2*int64(cap(buf)), limit))
			copy(nb, buf)
			buf = nb
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > maxSize {
			return nil, errTooBig(maxSize)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// room returns spare emptied when it has room for n bytes, else a new empty buffer of that room.
func room(spare []byte, n int64) []byte {
	if int64(cap(spare)) >= n {
		return spare[:0]
	}
	return make([]byte, 0, n)
}
