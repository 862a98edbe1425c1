package records

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
)

// TestDecompressIntoSpare: decompressing into a spare buffer (Nodes.InflateBuffer) of any
// capacity, filled with garbage, gives exactly what decompressing into a new buffer gives, for
// every codec, output sizes around the buffers' starting sizes, and limits around the output's
// size: the same bytes, the same error, never more than the limit.
func TestDecompressIntoSpare(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := New(Options{})
	ids := map[string]wire.Codec{"gzip": wire.Gzip, "snappy": wire.Snappy, "xerial": wire.Snappy, "lz4": wire.LZ4, "zstd": wire.Zstd}
	type payload struct {
		name string
		id   wire.Codec
		src  []byte
		size int
	}
	var ps []payload
	for _, size := range []int{0, 1, 100, 511, 512, 513, 4096, 70000, 300000} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte('a' + rng.IntN(4))
		}
		for _, c := range []string{"gzip", "snappy", "xerial", "lz4", "zstd"} {
			if c == "xerial" && size == 0 {
				continue
			}
			ps = append(ps, payload{fmt.Sprintf("%s/%d", c, size), ids[c], compress(t, c, data), size})
		}
	}
	for name, f := range lz4Frames(t) {
		want, err := lz4Reference(f)
		if err != nil {
			continue
		}
		ps = append(ps, payload{"lz4frame/" + name, wire.LZ4, f, len(want)})
	}
	for _, p := range ps {
		for _, limit := range []int64{int64(p.size) - 1, int64(p.size), int64(p.size) + 1, 1 << 20} {
			if limit < 0 {
				continue
			}
			want, werr := d.decompress(p.id, p.src, limit, nil)
			for _, c := range []int{0, 1, p.size, p.size + 1, 512, 600, 4 << 20} {
				spare := bytes.Repeat([]byte{0xAA}, c)
				got, gerr := d.decompress(p.id, p.src, limit, spare)
				if fmt.Sprint(werr) != fmt.Sprint(gerr) || !bytes.Equal(want, got) {
					t.Errorf("%s limit %d spare %d: %d bytes %v; want %d bytes %v", p.name, limit, c, len(got), gerr, len(want), werr)
				}
				if int64(len(got)) > limit {
					t.Errorf("%s limit %d spare %d: %d bytes over the limit", p.name, limit, c, len(got))
				}
			}
		}
	}
}

// TestEachRecordMixedField: EachRecord over fields of batches of every codec, whose sizes go
// up and down, with legacy wrappers, Kafka 0.9's lz4 frames, damaged payloads, batches over
// the decompression cap and a field budget run out, shows what a decode at once shows, twice
// over with the same scratch.
func TestEachRecordMixedField(t *testing.T) {
	var field []byte
	add := func(b []byte) { field = append(field, b...) }
	sizes := []int{60, 3, 1, 200, 2, 40, 1, 120, 5, 1}
	codecs := []string{"zstd", "gzip", "lz4", "snappy", "xerial", "none"}
	off := int64(0)
	for i, n := range sizes {
		for j, c := range codecs {
			b, _ := batchSpec{baseOffset: off, baseTimestamp: t0, codec: c, records: plainRecords(n + j)}.build(t)
			off += int64(n + j)
			if i == 3 && j == 1 {
				b[len(b)-12] ^= 0xff // damage the gzip payload near its end
			}
			if i == 5 && j == 0 {
				b[len(b)-5] ^= 0xff // damage the zstd payload
			}
			add(b)
		}
		for _, c := range []string{"gzip", "snappy", "xerial", "lz4"} {
			m, _ := messageSet(t, 1, c, off, t0, 0, []kv{{[]byte("k"), bytes.Repeat([]byte("v"), 30*n)}, {nil, []byte("x")}})
			off += 2
			add(m)
		}
		k, _ := kafka09LZ4(t)
		add(k)
	}
	for _, max := range []int64{0, 4000, 20000} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			set := interpreter(t).Schemas
			mk := func(lazy bool) *codec.Codec {
				c := codec.New(set)
				c.Records = New(Options{MaxDecompressed: max})
				c.LazyRecords = lazy
				return c
			}
			req := kmsg.ProduceRequest{Version: 7, Acks: -1, TimeoutMillis: 5000, Topics: []kmsg.ProduceRequestTopic{{
				Topic: "orders", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: field}, {Partition: 1, Records: field}}}}}
			frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kdissect")).AppendRequest(nil, &req, 7)
			eager := mk(false).DecodeRequest(frame)
			want := treeAndWarnings(eager, func(n *codec.Node) []*codec.Node { return n.Children })
			if !strings.Contains(want, "records left compressed") {
				t.Fatalf("the damaged payloads were decompressed:\n%s", want)
			}
			m := mk(true).DecodeRequest(frame)
			var scratch codec.Nodes
			for pass := range 2 {
				if got := eachRecordTree(m, &scratch, nil); got != want {
					gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
					for i := range min(len(gl), len(wl)) {
						if gl[i] != wl[i] {
							t.Fatalf("pass %d line %d:\n got %s\nwant %s", pass, i, gl[i], wl[i])
						}
					}
					t.Fatalf("pass %d: %d lines, want %d", pass, len(gl), len(wl))
				}
			}
		})
	}
}
