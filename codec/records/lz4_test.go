package records

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// lz4Reference decompresses src with the lz4 package's frame reader.
func lz4Reference(src []byte) ([]byte, error) {
	return io.ReadAll(lz4.NewReader(bytes.NewReader(src)))
}

// lz4Frames are frames as the lz4 package writes them, of every block size, with and without
// block and content checksums and the content size, of data that compresses and of data that
// does not (stored blocks).
func lz4Frames(t testing.TB) map[string][]byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	text := make([]byte, 0, 3<<20)
	for len(text) < cap(text)-64 {
		text = fmt.Appendf(text, `{"user":"user-%d","event":"click","n":%d}`, rng.IntN(1000), rng.IntN(1<<20))
	}
	noise := make([]byte, 300<<10)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	frames := map[string][]byte{}
	for _, size := range []lz4.BlockSize{lz4.Block64Kb, lz4.Block256Kb, lz4.Block1Mb, lz4.Block4Mb} {
		for _, sums := range []bool{false, true} {
			for _, data := range [][]byte{text, noise, text[:100], nil} {
				var b bytes.Buffer
				w := lz4.NewWriter(&b)
				opts := []lz4.Option{lz4.BlockSizeOption(size), lz4.BlockChecksumOption(sums), lz4.ChecksumOption(sums)}
				if sums {
					opts = append(opts, lz4.SizeOption(uint64(len(data))))
				}
				if err := w.Apply(opts...); err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write(data); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				frames[fmt.Sprintf("%s sums %v %d bytes", size, sums, len(data))] = b.Bytes()
			}
		}
	}
	// Two frames one after the other, and a skippable frame between them.
	one, two := frames["Block64Kb sums false 100 bytes"], frames["Block4Mb sums true 3145664 bytes"]
	frames["two frames"] = append(append([]byte(nil), one...), two...)
	skip := binary.LittleEndian.AppendUint32(nil, lz4SkipMagic+3)
	skip = append(binary.LittleEndian.AppendUint32(skip, 5), "skip!"...)
	frames["skippable frame"] = append(append(append([]byte(nil), one...), skip...), one...)
	// Dependent blocks: the second block repeats the first's 8 bytes (a match reaching back
	// into the first block), then 5 literals.
	dep := binary.LittleEndian.AppendUint32(nil, lz4Magic)
	dep = append(dep, lz4Version|lz4ContentSum, 4<<lz4BlockSizeShift)
	dep = append(dep, byte(xxh32(dep[4:6])>>8))
	dep = binary.LittleEndian.AppendUint32(dep, lz4Uncompressed|8)
	dep = append(dep, "abcdefgh"...)
	dep = binary.LittleEndian.AppendUint32(dep, 9)
	dep = append(dep, 0x04, 8, 0, 0x50, '1', '2', '3', '4', '5')
	dep = binary.LittleEndian.AppendUint32(dep, 0)
	frames["dependent blocks"] = binary.LittleEndian.AppendUint32(dep, xxh32([]byte("abcdefghabcdefgh12345")))
	return frames
}

// TestLZ4: unlz4 decompresses what the lz4 package's frame reader does, to the same bytes,
// and fails where it fails: on every frame, cut at many places and with bytes changed.
func TestLZ4(t *testing.T) {
	frames := lz4Frames(t)
	if out, err := unlz4(frames["dependent blocks"], 1<<20, 0, nil); err != nil || string(out) != "abcdefghabcdefgh12345" {
		t.Fatalf("dependent blocks: %q, %v", out, err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	// In a fixed order, so that each frame gets the same cuts and changes in every run.
	for _, name := range slices.Sorted(maps.Keys(frames)) {
		frame := frames[name]
		check := func(what string, src []byte) {
			want, werr := lz4Reference(src)
			got, gerr := unlz4(src, 64<<20, lz4Hint(src), nil)
			// (The reader returns what it read before an error; unlz4 returns nothing.) A
			// changed magic number the format does not define may be one the reader takes
			// (see FuzzLZ4).
			if werr == nil && gerr == errLZ4Magic {
				return
			}
			if (werr == nil) != (gerr == nil) || werr == nil && !bytes.Equal(got, want) {
				t.Errorf("%s, %s: %d bytes, %v; the lz4 package: %d bytes, %v", name, what, len(got), gerr, len(want), werr)
			}
		}
		check("whole", frame)
		for range 20 {
			cut := rng.IntN(len(frame))
			check(fmt.Sprintf("cut at %d", cut), frame[:cut])
			changed := bytes.Clone(frame)
			at := rng.IntN(len(frame))
			changed[at] ^= byte(1 + rng.IntN(255))
			check(fmt.Sprintf("byte %d changed", at), changed)
		}
	}
}

// TestLZ4Limit: output over the limit is errTooBig, as for the other codecs, in stored and in
// compressed blocks, and the output never takes much more than the limit.
func TestLZ4Limit(t *testing.T) {
	tested := 0
	for name, src := range lz4Frames(t) {
		want, err := lz4Reference(src)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) < 1000 {
			continue
		}
		tested++
		limit := int64(len(want) / 3)
		out, err := unlz4(src, limit, lz4Hint(src), nil)
		if _, ok := err.(errTooBig); !ok || out != nil {
			t.Errorf("%s with a limit of %d: %d bytes, %v", name, limit, len(out), err)
		}
		if out, err = unlz4(src, int64(len(want)), lz4Hint(src), nil); err != nil || !bytes.Equal(out, want) {
			t.Errorf("%s with a limit of its size: %d bytes, %v", name, len(out), err)
		}
	}
	if tested < 10 {
		t.Errorf("%d frames tested", tested)
	}
}

// FuzzLZ4: on any input, what unlz4 decompresses the lz4 package's frame reader decompresses
// to the same bytes, and what the reader decompresses unlz4 does too, unless it holds a frame
// whose magic number the frame format does not define (the reader takes legacy frames, and
// any magic 0x184D2Axx as a skippable frame where the format says 0x184D2A5x).
func FuzzLZ4(f *testing.F) {
	for _, frame := range lz4Frames(f) {
		if len(frame) < 4<<10 {
			f.Add(frame)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		want, werr := lz4Reference(src)
		got, gerr := unlz4(src, 1<<20, lz4Hint(src), nil)
		if _, big := gerr.(errTooBig); big && len(want) > 1<<20 {
			return
		}
		if gerr == nil && (werr != nil || !bytes.Equal(got, want)) || werr == nil && gerr != nil && gerr != errLZ4Magic {
			t.Errorf("%d bytes, %v; the lz4 package: %d bytes, %v", len(got), gerr, len(want), werr)
		}
	})
}
