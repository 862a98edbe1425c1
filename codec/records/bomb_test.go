package records

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
)

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// bomb compresses size zero bytes without holding them in memory.
func bomb(t *testing.T, name string, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	switch name {
	case "gzip":
		w, _ = gzip.NewWriterLevel(&buf, gzip.BestCompression)
	case "lz4":
		w = lz4.NewWriter(&buf)
	case "zstd":
		w, _ = zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
	case "xerial":
		// 32 KiB blocks of zeros, each the same few bytes of snappy.
		blk := snappy.Encode(nil, make([]byte, 32<<10))
		buf.Write(xerialMagic)
		buf.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
		for n := int64(0); n < size; n += 32 << 10 {
			buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(blk))))
			buf.Write(blk)
		}
		return buf.Bytes()
	case "snappy":
		// A raw block whose header claims size bytes: refused before anything is allocated.
		return append(binary.AppendUvarint(nil, uint64(size)), 0, 0)
	}
	if _, err := io.CopyN(w, zeros{}, size); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecompressionBomb: 100 MB of zeros in a few KB, decoded with a 1 MiB cap: a warning, the
// payload left compressed, and allocation bounded by the cap (and zstd's 8 MiB window) rather
// than by the output.
func TestDecompressionBomb(t *testing.T) {
	const size = 100 << 20
	for _, c := range []string{"gzip", "snappy", "xerial", "lz4", "zstd"} {
		t.Run(c, func(t *testing.T) {
			payload := bomb(t, c, size)
			rb := kmsg.RecordBatch{Magic: 2, Attributes: codecIDs[c], NumRecords: 1000, ProducerID: -1, Records: payload}
			data := sealBatch(rb.AppendTo(nil))
			d := New(Options{MaxDecompressed: 1 << 20})
			var nodes []*codec.Node
			var ws []codec.Warning
			allocated := measure(func() { nodes, ws = d.DecodeRecords(data, 0, nil) })
			if err := checkTiling(nodes, 0, len(data), false); err != nil {
				t.Fatal(err)
			}
			if len(ws) != 1 || !strings.Contains(ws[0].Msg, "over the limit of 1048576 bytes") {
				t.Fatalf("warnings: %v", ws)
			}
			t.Logf("%d-byte payload: %s; allocated %d KiB", len(payload), ws[0].Msg, allocated>>10)
			if r := find(nodes[0], "records"); r.Type != wire.CompressedRecords || len(r.Children) != 0 {
				t.Fatalf("\n%s", dump(nodes))
			}
			if allocated > 16<<20 {
				t.Errorf("decoding allocated %d bytes", allocated)
			}
		})
	}
}

// TestCapExact: output of exactly the cap decodes; one byte more does not.
func TestCapExact(t *testing.T) {
	data, _ := batchSpec{baseTimestamp: t0, codec: "zstd", records: plainRecords(10)}.build(t)
	plain, _ := batchSpec{baseTimestamp: t0, codec: "none", records: plainRecords(10)}.build(t)
	size := int64(len(plain) - 61)
	if _, ws := decode(t, New(Options{MaxDecompressed: size}), data); len(ws) != 0 {
		t.Fatalf("at the cap: %v", ws)
	}
	if _, ws := decode(t, New(Options{MaxDecompressed: size - 1}), data); len(ws) != 1 {
		t.Fatalf("over the cap: %v", ws)
	}
}

// TestNestedWrapper: a compressed wrapper inside a compressed wrapper is not decompressed (Kafka
// never nests them; a nest of bombs would multiply the cap).
func TestNestedWrapper(t *testing.T) {
	inner, _ := messageSet(t, 1, "gzip", 0, t0, 0, []kv{{nil, []byte("deep")}})
	outer := message(1, 0, 1, t0, nil, compress(t, "gzip", inner))
	nodes, ws := decode(t, New(Options{}), outer)
	if len(ws) != 1 || !strings.Contains(ws[0].Msg, "compressed data inside compressed data") {
		t.Fatalf("warnings %v\n%s", ws, dump(nodes))
	}
}

// TestZstdHugeWindow: a zstd frame that declares a 2 GiB window is refused from its header,
// before the decoder allocates the window.
func TestZstdHugeWindow(t *testing.T) {
	payload := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 21 << 3, 1, 0, 0, 'x'}
	rb := kmsg.RecordBatch{Magic: 2, Attributes: 4, NumRecords: 1, ProducerID: -1, Records: payload}
	data := sealBatch(rb.AppendTo(nil))
	var ws []codec.Warning
	allocated := measure(func() { _, ws = New(Options{}).DecodeRecords(data, 0, nil) })
	if len(ws) != 1 || !strings.Contains(ws[0].Msg, "over the limit") {
		t.Fatalf("warnings: %v", ws)
	}
	if allocated > 4<<20 {
		t.Errorf("decoding allocated %d bytes", allocated)
	}
}

// TestFieldBudget: one records field may not decompress to more than eight caps in all, however
// many batches it holds.
func TestFieldBudget(t *testing.T) {
	one, _ := batchSpec{baseTimestamp: t0, codec: "gzip", records: benchRecords(9000)}.build(t)
	plain, _ := batchSpec{baseTimestamp: t0, codec: "none", records: benchRecords(9000)}.build(t)
	if n := len(plain); n < 900<<10 || n > 1<<20 {
		t.Fatalf("batch of %d bytes: the test needs 0.9 to 1 MiB", n)
	}
	data := bytes.Repeat(one, 10)
	nodes, ws := decode(t, New(Options{MaxDecompressed: 1 << 20}), data)
	if len(ws) != 2 || !strings.Contains(ws[0].Msg, "allowed for all the batches") {
		t.Fatalf("warnings: %v", ws)
	}
	if len(nodes) != 10 || len(find(nodes[7], "records").Children) != 9000 || len(find(nodes[8], "records").Children) != 0 {
		t.Fatalf("%d nodes", len(nodes))
	}
	t.Log(ws[0])
}
