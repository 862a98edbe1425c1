package codec

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// benchFrame is a frame of benchFrames, with what decoding it takes.
type benchFrame struct {
	frame    []byte
	response bool
	key, ver int16
}

func (f benchFrame) decode(c *Codec) *Message {
	if f.response {
		return c.DecodeResponse(f.frame, f.key, f.ver)
	}
	return c.DecodeRequest(f.frame)
}

// benchShallow runs bench on each of benchFrames decoded shallow, as summaries and statistics
// decode them.
func benchShallow(b *testing.B, bench func(b *testing.B, m *Message)) {
	c := testCodec(b)
	c.Shallow = true
	for name, f := range benchFrames(b) {
		b.Run(name, func(b *testing.B) { bench(b, f.decode(c)) })
	}
}

// benchFrames builds realistic large frames with kmsg.
func benchFrames(b *testing.B) map[string]benchFrame {
	b.Helper()
	meta := kmsg.NewMetadataResponse()
	meta.Version = 12
	for ti := 0; ti < 20; ti++ {
		topic := kmsg.NewMetadataResponseTopic()
		name := "topic-" + string(rune('a'+ti))
		topic.Topic = &name
		for p := 0; p < 50; p++ { // 1000 partitions in all
			part := kmsg.NewMetadataResponseTopicPartition()
			part.Partition = int32(p)
			part.Leader = int32(p % 3)
			part.Replicas = []int32{0, 1, 2}
			part.ISR = []int32{0, 1, 2}
			topic.Partitions = append(topic.Partitions, part)
		}
		meta.Topics = append(meta.Topics, topic)
	}
	records := make([]byte, 1<<20) // 1 MiB of record data per partition batch
	produce := kmsg.NewProduceRequest()
	produce.Version = 9
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "events"
	for p := 0; p < 4; p++ {
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Partition = int32(p)
		pp.Records = records
		pt.Partitions = append(pt.Partitions, pp)
	}
	produce.Topics = append(produce.Topics, pt)
	fetch := kmsg.NewFetchResponse()
	fetch.Version = 16
	ft := kmsg.NewFetchResponseTopic()
	for p := 0; p < 4; p++ {
		fp := kmsg.NewFetchResponseTopicPartition()
		fp.Partition = int32(p)
		fp.RecordBatches = records
		ft.Partitions = append(ft.Partitions, fp)
	}
	fetch.Topics = append(fetch.Topics, ft)
	return map[string]benchFrame{
		"Metadata1000Partitions": {frame(3, 12, true, true, 1, meta.AppendTo(nil)), true, 3, 12},
		"Produce4MiB":            {frame(0, 9, true, false, 1, produce.AppendTo(nil)), false, 0, 9},
		"Fetch4MiB":              {frame(1, 16, true, true, 1, fetch.AppendTo(nil)), true, 1, 16},
	}
}

// BenchmarkDecode measures the interpreter alone (records fields as bytes); the records
// package has its own benchmarks for batch decoding.
func BenchmarkDecode(b *testing.B) { benchDecode(b, false, false) }

// BenchmarkDecodeShallow is BenchmarkDecode with Codec.Shallow, as summaries and statistics
// decode.
func BenchmarkDecodeShallow(b *testing.B) { benchDecode(b, true, false) }

// BenchmarkDecodeShallowReleased is BenchmarkDecodeShallow with each tree released once
// decoded, as summaries and statistics do once they have the facts.
func BenchmarkDecodeShallowReleased(b *testing.B) { benchDecode(b, true, true) }

func benchDecode(b *testing.B, shallow, release bool) {
	c := testCodec(b)
	c.Shallow = shallow
	for name, f := range benchFrames(b) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(f.frame)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				m := f.decode(c)
				if len(m.Warnings) > 0 {
					b.Fatal(m.Warnings)
				}
				if release {
					c.Release(m)
				}
			}
		})
	}
}

// BenchmarkTopicIDNames measures what messages teach of topic names, with a TopicIDNamer, as
// the pipeline learns them from every message.
func BenchmarkTopicIDNames(b *testing.B) {
	benchShallow(b, func(b *testing.B, m *Message) {
		var namer TopicIDNamer
		b.ReportAllocs()
		for b.Loop() {
			namer.TopicIDNames(m)
		}
	})
}

// BenchmarkFactsWalker measures the facts of shallow trees gathered by one FactsWalker, message
// after message, as the pipeline gathers them.
func BenchmarkFactsWalker(b *testing.B) {
	benchShallow(b, func(b *testing.B, m *Message) {
		var fw FactsWalker
		b.ReportAllocs()
		for b.Loop() {
			fw.Facts(m)
		}
	})
}

// BenchmarkFacts measures Message.Facts on shallow trees, as summaries and statistics use it.
func BenchmarkFacts(b *testing.B) {
	benchShallow(b, func(b *testing.B, m *Message) {
		nodes := 0
		Walk(m.Fields, func(*Node, int) bool { nodes++; return true })
		b.ReportAllocs()
		for b.Loop() {
			m.Facts()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
	})
}
