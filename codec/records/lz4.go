package records

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pierrec/lz4/v4"

	"github.com/kdissect/kdissect/internal/plural"
)

// LZ4 frames (the lz4 frame format, which Kafka's lz4 codec writes) are read here block by
// block, each block decompressed by the lz4 package straight into the output. The lz4
// package's own frame reader takes a buffer of the frame's largest block size (4 MiB, as
// Kafka's producers declare) from a pool for every frame; the collector empties that pool,
// and a run that decompresses many batches allocated 4 MiB per batch (a gigabyte over a
// 200 MB capture).

// Frame format constants.
const (
	lz4Magic        = 0x184D2204
	lz4SkipMagic    = 0x184D2A50 // through 0x184D2A5F: skippable frames
	lz4SkipMask     = 0xFFFFFFF0
	lz4Uncompressed = 1 << 31 // a block size's flag: the block is stored as it is
	lz4Window       = 64 << 10
)

// Flags of the frame descriptor's first byte.
const (
	lz4Independent    = 1 << 5
	lz4BlockChecksum  = 1 << 4
	lz4ContentSize    = 1 << 3
	lz4ContentSum     = 1 << 2
	lz4DictionaryID   = 1 << 0
	lz4VersionMask    = 3 << 6
	lz4Version        = 1 << 6
	lz4BlockSizeShift = 4
)

var (
	errLZ4Short    = errors.New("lz4: frame cut short")
	errLZ4Magic    = errors.New("lz4: not an lz4 frame")
	errLZ4Version  = errors.New("lz4: frame version not 1")
	errLZ4Block    = errors.New("lz4: block larger than the frame's block size")
	errLZ4BlockSum = errors.New("lz4: block checksum does not match")
	errLZ4Sum      = errors.New("lz4: content checksum does not match")
	errLZ4Corrupt  = errors.New("lz4: corrupt block")
)

// unlz4 decompresses the lz4 frames of src, never more than limit bytes; hint is the size the
// output is expected to have; the output is written into spare when spare has room. A
// descriptor checksum that does not match is an error that wraps lz4.ErrInvalidHeaderChecksum
// (see fixLZ4Checksum).
func unlz4(src []byte, limit int64, hint int, spare []byte) ([]byte, error) {
	out := room(spare, min(max(int64(hint), 512), 64*int64(len(src))+4096, limit+1))
	for p := 0; p < len(src); {
		if len(src)-p < 4 {
			return nil, errLZ4Short
		}
		magic := binary.LittleEndian.Uint32(src[p:])
		if magic&lz4SkipMask == lz4SkipMagic {
			if len(src)-p < 8 {
				return nil, errLZ4Short
			}
			n := int64(binary.LittleEndian.Uint32(src[p+4:]))
			if n > int64(len(src)-p-8) {
				return nil, errLZ4Short
			}
			p += 8 + int(n)
			continue
		}
		if magic != lz4Magic {
			return nil, errLZ4Magic
		}
		var err error
		if out, p, err = lz4Frame(src, p+4, out, limit); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lz4Frame decompresses the frame whose descriptor starts at src[p], appending to out; it
// returns the offset after the frame.
func lz4Frame(src []byte, p int, out []byte, limit int64) ([]byte, int, error) {
	fd, err := lz4Descriptor(src, p)
	if err != nil {
		return nil, 0, err
	}
	start := len(out)
	p = fd.end
	for {
		if len(src)-p < 4 {
			return nil, 0, errLZ4Short
		}
		size := binary.LittleEndian.Uint32(src[p:])
		p += 4
		if size == 0 {
			break // the end mark
		}
		if out, p, err = fd.block(src, p, size, out, start, limit); err != nil {
			return nil, 0, err
		}
	}
	// The stated size is checked, never used to size anything: a frame that says otherwise
	// than its blocks is damaged.
	if fd.contentSize >= 0 && int64(len(out)-start) != fd.contentSize {
		return nil, 0, fmt.Errorf("lz4: the frame holds %s, its descriptor says %d", plural.Count(len(out)-start, "byte"), fd.contentSize)
	}
	if fd.flags&lz4ContentSum != 0 {
		if len(src)-p < 4 {
			return nil, 0, errLZ4Short
		}
		if binary.LittleEndian.Uint32(src[p:]) != xxh32(out[start:]) {
			return nil, 0, errLZ4Sum
		}
		p += 4
	}
	return out, p, nil
}

// lz4FrameDescriptor is what a frame's descriptor says: its flags, the largest of its blocks,
// its decompressed size (-1: not stated), and where its first block starts.
type lz4FrameDescriptor struct {
	flags       byte
	blockMax    int
	contentSize int64
	end         int
}

// lz4Descriptor reads and checks the frame descriptor at src[p].
func lz4Descriptor(src []byte, p int) (lz4FrameDescriptor, error) {
	if len(src)-p < 3 {
		return lz4FrameDescriptor{}, errLZ4Short
	}
	flags, bd := src[p], src[p+1]
	if flags&lz4VersionMask != lz4Version {
		return lz4FrameDescriptor{}, errLZ4Version
	}
	// The format's reserved bits (FLG bit 1; BD bits 7 and 0-3) must be zero: a frame with
	// one set is of a format this reader does not know.
	if flags&0x02 != 0 || bd&0x8f != 0 {
		return lz4FrameDescriptor{}, fmt.Errorf("lz4: reserved bits set in the frame descriptor (%02x %02x)", flags, bd)
	}
	fd := lz4FrameDescriptor{flags: flags, contentSize: -1}
	hc := p + 2
	if flags&lz4ContentSize != 0 {
		if len(src)-hc >= 8 {
			fd.contentSize = int64(binary.LittleEndian.Uint64(src[hc:]) & (1<<63 - 1))
		}
		hc += 8
	}
	if flags&lz4DictionaryID != 0 {
		hc += 4
	}
	if len(src) <= hc {
		return lz4FrameDescriptor{}, errLZ4Short
	}
	if sum := byte(xxh32(src[p:hc]) >> 8); src[hc] != sum {
		return lz4FrameDescriptor{}, fmt.Errorf("%w: got %x; expected %x", lz4.ErrInvalidHeaderChecksum, sum, src[hc])
	}
	switch size := (bd >> lz4BlockSizeShift) & 7; size {
	case 4, 5, 6, 7:
		fd.blockMax = 1 << (8 + 2*size) // 64 KiB, 256 KiB, 1 MiB, 4 MiB
	default:
		return lz4FrameDescriptor{}, fmt.Errorf("lz4: block size code %d", size)
	}
	fd.end = hc + 1
	return fd, nil
}

// block appends the block at src[p], whose size word was size, to out (the frame's output
// starting at out[start]); it returns the offset after the block and its checksum.
func (fd lz4FrameDescriptor) block(src []byte, p int, size uint32, out []byte, start int, limit int64) ([]byte, int, error) {
	stored := size&lz4Uncompressed != 0
	n := int(size &^ lz4Uncompressed)
	if n > fd.blockMax {
		return nil, 0, errLZ4Block
	}
	if n > len(src)-p {
		return nil, 0, errLZ4Short
	}
	block := src[p : p+n]
	p += n
	if fd.flags&lz4BlockChecksum != 0 {
		if len(src)-p < 4 {
			return nil, 0, errLZ4Short
		}
		if binary.LittleEndian.Uint32(src[p:]) != xxh32(block) {
			return nil, 0, errLZ4BlockSum
		}
		p += 4
	}
	if stored {
		if int64(len(out)+n) > limit {
			return nil, 0, errTooBig(limit)
		}
		return append(out, block...), p, nil
	}
	out, err := lz4Block(block, out, start, fd.blockMax, fd.flags&lz4Independent != 0, limit)
	return out, p, err
}

// lz4Block decompresses one block, appending it to out. The room after out grows by doubling
// until the block fits (its decompressed size is not stated), up to the frame's block size
// and never past limit. A block of a frame of dependent blocks may refer to the 64 KiB before
// it in the frame's output, which starts at out[start].
func lz4Block(block, out []byte, start, blockMax int, independent bool, limit int64) ([]byte, error) {
	for room := min(max(cap(out)-len(out), 4*len(block), 512), blockMax); ; room = min(2*room, blockMax) {
		capped := false
		if int64(len(out)+room) > limit {
			room, capped = int(limit)-len(out), true
		}
		if cap(out)-len(out) < room {
			grown := make([]byte, len(out), max(2*cap(out), len(out)+room))
			copy(grown, out)
			out = grown
		}
		dst := out[len(out) : len(out)+room]
		var n int
		var err error
		if independent {
			n, err = lz4.UncompressBlock(block, dst)
		} else {
			n, err = lz4.UncompressBlockWithDict(block, dst, out[max(start, len(out)-lz4Window):len(out)])
		}
		switch {
		case err == nil:
			return out[:len(out)+n], nil
		case capped:
			return nil, errTooBig(limit)
		case room >= blockMax:
			return nil, errLZ4Corrupt
		}
	}
}
