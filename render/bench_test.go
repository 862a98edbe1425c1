package render

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/model"
)

// largeFetch builds a Fetch v16 response frame (size prefix included) of about mb MB of
// record batches, as a consumer reading a backlog gets: partitions of batches of about 1 MB,
// JSON-like values of 100 B to 10 KiB (log-uniform, as kbench's producers write), keys,
// headers on a quarter, every other batch compressed with zstd.
func largeFetch(tb testing.TB, mb int) []byte { return fetchResponse(tb, mb, 1<<20) }

// fetchResponse builds a Fetch v16 response frame of partitions record batches of about
// batchBytes each, made as largeFetch says.
func fetchResponse(tb testing.TB, partitions, batchBytes int) []byte {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		tb.Fatal(err)
	}
	defer enc.Close()
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 16
	topic := kmsg.NewFetchResponseTopic()
	topic.TopicID = [16]byte{1, 2, 3, 4}
	offset := int64(0)
	for p := range partitions {
		part := kmsg.NewFetchResponseTopicPartition()
		part.Partition = int32(p)
		part.HighWatermark = 1 << 20
		var raw []byte
		n := 0
		for len(raw) < batchBytes {
			size := int(math.Exp(math.Log(100) + rng.Float64()*(math.Log(10<<10)-math.Log(100))))
			r := kmsg.Record{OffsetDelta: int32(n), TimestampDelta64: int64(n),
				Key:   fmt.Appendf(nil, "user-%05d", rng.IntN(50000)),
				Value: []byte(`{"user":"user-1","event":"click","tags":["` + strings.Repeat("x", size) + `"]}`)}
			if n%4 == 0 {
				r.Headers = []kmsg.Header{{Key: "trace-id", Value: fmt.Appendf(nil, "%016x", rng.Uint64())}}
			}
			r.Length = int32(len(r.AppendTo(nil)) - 1)
			raw = r.AppendTo(raw)
			n++
		}
		attrs := int16(0)
		if p%2 == 1 {
			attrs, raw = 4, enc.EncodeAll(raw, nil)
		}
		rb := kmsg.RecordBatch{FirstOffset: offset, PartitionLeaderEpoch: 0, Magic: 2, Attributes: attrs,
			LastOffsetDelta: int32(n - 1), FirstTimestamp: 1767323045000, MaxTimestamp: 1767323045000 + int64(n-1),
			ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(n), Records: raw}
		b := rb.AppendTo(nil)
		binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
		binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
		part.RecordBatches = b
		offset += int64(n)
		topic.Partitions = append(topic.Partitions, part)
	}
	resp.Topics = append(resp.Topics, topic)
	body := resp.AppendTo(nil)
	frame := binary.BigEndian.AppendUint32(nil, uint32(4+1+len(body))) // correlation id, header tags
	frame = binary.BigEndian.AppendUint32(frame, 7)
	frame = append(frame, 0)
	return append(frame, body...)
}

// BenchmarkLargeFetch decodes one Fetch response of 4 MB of records in full and writes it as
// JSON and as a diagram, as kdissect --format json|diagram does with each message: the cost and
// the memory of one big message, from its bytes to its output.
func BenchmarkLargeFetch(b *testing.B) {
	set, err := schema.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	frame := largeFetch(b, 4)
	formats := []struct {
		name string
		new  func(io.Writer) Renderer
	}{
		{"json", func(w io.Writer) Renderer { return NewJSON(w) }},
		{"diagram", func(w io.Writer) Renderer { return NewDiagram(w, DiagramOptions{}) }},
	}
	for _, f := range formats {
		b.Run(f.name, func(b *testing.B) {
			c := codec.New(set)
			// As the pipeline decodes for these formats (dissect.NewCodec): records are
			// decoded as they are written.
			c.Records, c.LazyRecords = records.New(records.Options{}), true
			var out countWriter
			r := f.new(&out)
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				m := c.DecodeResponse(frame, 1, 16)
				if len(m.Warnings) > 0 {
					b.Fatal(m.Warnings)
				}
				e := &model.Entry{Frame: 2, FirstFrame: 1, Time: time.Unix(1767323045, 0), Src: "127.0.0.1:9092", Dst: "127.0.0.1:50000",
					Msg: m, Bytes: frame, RequestFrame: 1, Latency: time.Millisecond}
				if err := r.Message(e); err != nil {
					b.Fatal(err)
				}
				if err := r.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.n)/float64(b.N)/1e6, "MB-out/op")
		})
	}
}

// BenchmarkDiagram writes Fetch responses as diagrams, decoded as the pipeline decodes them
// for diagrams (records a batch at a time): one of two batches of 16 KiB, as a consumer that
// keeps up gets, whose rows the diagram holds and writes in one pass, and one of four batches
// of 1 MB, which it writes in two passes; each plain and with -x --explain.
func BenchmarkDiagram(b *testing.B) {
	set, err := schema.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []struct {
		name                   string
		partitions, batchBytes int
	}{{"2x16KiB", 2, 16 << 10}, {"4x1MB", 4, 1 << 20}} {
		frame := fetchResponse(b, size.partitions, size.batchBytes)
		for _, opt := range []struct {
			name string
			opt  DiagramOptions
		}{{"plain", DiagramOptions{MaxBytes: 64}}, {"explain", DiagramOptions{MaxBytes: 64, Hex: true, Explain: true}}} {
			b.Run(size.name+"/"+opt.name, func(b *testing.B) {
				c := codec.New(set)
				c.Records, c.LazyRecords = records.New(records.Options{}), true
				var out countWriter
				d := NewDiagram(&out, opt.opt)
				b.SetBytes(int64(len(frame)))
				b.ReportAllocs()
				for b.Loop() {
					e := &model.Entry{Frame: 2, FirstFrame: 1, Time: time.Unix(1767323045, 0), Src: "127.0.0.1:9092", Dst: "127.0.0.1:50000",
						Msg: c.DecodeResponse(frame, 1, 16), Bytes: frame, RequestFrame: 1, Latency: time.Millisecond}
					if err := d.Message(e); err != nil {
						b.Fatal(err)
					}
				}
				if err := d.Flush(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(out.n)/float64(b.N)/1e6, "MB-out/op")
			})
		}
	}
}

// countWriter counts what is written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
