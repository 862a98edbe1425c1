package codec_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
)

// summaryFrame is a frame of summaryFrames, with what decoding it takes.
type summaryFrame struct {
	frame    []byte
	response bool
	key, ver int16
}

func (f summaryFrame) decode(c *codec.Codec) *codec.Message {
	if f.response {
		return c.DecodeResponse(f.frame, f.key, f.ver)
	}
	return c.DecodeRequest(f.frame)
}

// summaryFrames builds small frames like those of a `kbench gen` capture, which is mostly
// Fetch v18 and Produce v13 of a few hundred bytes: an incremental fetch naming two topics by
// id, its response with one record batch among empty partitions, and a produce of two topics.
func summaryFrames(b *testing.B) map[string]summaryFrame {
	b.Helper()
	ids := [][16]byte{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}}
	fetch := kmsg.NewFetchRequest()
	fetch.Version, fetch.SessionID, fetch.SessionEpoch = 18, 22, 66
	resp := kmsg.NewFetchResponse()
	resp.Version, resp.SessionID = 18, 22
	for _, id := range ids {
		t := kmsg.NewFetchRequestTopic()
		t.TopicID = id
		rt := kmsg.NewFetchResponseTopic()
		rt.TopicID = id
		for p := range int32(3) {
			pp := kmsg.NewFetchRequestTopicPartition()
			pp.Partition, pp.FetchOffset, pp.PartitionMaxBytes = p, 1000+int64(p), 1<<20
			t.Partitions = append(t.Partitions, pp)
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.HighWatermark, rp.LastStableOffset = p, 2000, 2000
			if p == 1 {
				rp.RecordBatches = handBatch(0)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		fetch.Topics = append(fetch.Topics, t)
		resp.Topics = append(resp.Topics, rt)
	}
	produce := kmsg.NewProduceRequest()
	produce.Version, produce.Acks = 13, -1
	for _, id := range ids {
		t := kmsg.NewProduceRequestTopic()
		t.TopicID = id
		for p := range int32(2) {
			pp := kmsg.NewProduceRequestTopicPartition()
			pp.Partition, pp.Records = p, handBatch(0)
			t.Partitions = append(t.Partitions, pp)
		}
		produce.Topics = append(produce.Topics, t)
	}
	return map[string]summaryFrame{
		"FetchRequest":  {codec.Frame(1, 18, true, false, 1, fetch.AppendTo(nil)), false, 1, 18},
		"FetchResponse": {codec.Frame(1, 18, true, true, 1, resp.AppendTo(nil)), true, 1, 18},
		"Produce":       {codec.Frame(0, 13, true, false, 1, produce.AppendTo(nil)), false, 0, 13},
	}
}

// BenchmarkSummaryFrame measures what a summary's shard does with each small frame: a shallow
// decode with record batches counted, the facts gathered by one FactsWalker, and the tree
// released.
func BenchmarkSummaryFrame(b *testing.B) {
	set, err := schema.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	c := codec.New(set)
	c.Shallow = true
	c.Records = records.New(records.Options{HeadersOnly: true, CountsOnly: true})
	for name, f := range summaryFrames(b) {
		b.Run(name, func(b *testing.B) {
			var fw codec.FactsWalker
			c.Release(f.decode(c)) // the plans are made at the first decode
			b.SetBytes(int64(len(f.frame)))
			b.ReportAllocs()
			for b.Loop() {
				m := f.decode(c)
				if len(m.Warnings) > 0 {
					b.Fatal(m.Warnings)
				}
				fw.Facts(m)
				c.Release(m)
			}
		})
	}
}
