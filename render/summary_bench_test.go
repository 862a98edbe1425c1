package render

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/model"
)

// summaryTopics are the topics of summaryEntries, named by id as Fetch v13+ and Produce v13+
// name them, with the names a Metadata response gave.
var summaryTopics = []codec.TopicIDName{
	{ID: codec.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, Name: "kbench-logs"},
	{ID: codec.UUID{16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, Name: "kbench-orders"},
	{ID: codec.UUID{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}, Name: "kbench-metrics"},
}

// summaryBatch is a record batch of n records of about 200 bytes; zstd compresses it.
func summaryBatch(tb testing.TB, n int, zstdEnc *zstd.Encoder) []byte {
	tb.Helper()
	var raw []byte
	for i := range n {
		r := kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i), Key: []byte("user-00042"),
			Value: []byte(`{"user":"user-42","event":"click","page":"/products/1234","ms":120,"tags":["a","b","c","d"]}`)}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		raw = r.AppendTo(raw)
	}
	attrs := int16(0)
	if zstdEnc != nil {
		attrs, raw = 4, zstdEnc.EncodeAll(raw, nil)
	}
	rb := kmsg.RecordBatch{Magic: 2, Attributes: attrs, LastOffsetDelta: int32(n - 1), FirstTimestamp: 1767323045000,
		MaxTimestamp: 1767323045000 + int64(n-1), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(n), Records: raw}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// summaryFrame is a frame of a flexible version (size prefix and header included): a request
// from client, or a response.
func summaryFrame(key, version int16, response bool, corr int32, client string, body []byte) []byte {
	var h []byte
	if !response {
		h = binary.BigEndian.AppendUint16(h, uint16(key))
		h = binary.BigEndian.AppendUint16(h, uint16(version))
	}
	h = binary.BigEndian.AppendUint32(h, uint32(corr))
	if !response {
		h = append(binary.BigEndian.AppendUint16(h, uint16(len(client))), client...)
	}
	h = append(h, 0) // no tagged fields
	out := binary.BigEndian.AppendUint32(nil, uint32(len(h)+len(body)))
	return append(append(out, h...), body...)
}

// summaryEntries are the lines that make most of a `kbench gen` capture's summary, as the
// merger gets them (facts gathered in a shard, topic ids named): an incremental Fetch v18
// request of a consumer and its response, with their session steps, and a Produce v13
// request.
func summaryEntries(tb testing.TB) map[string]*model.Entry {
	tb.Helper()
	set, err := schema.Embedded()
	if err != nil {
		tb.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		tb.Fatal(err)
	}
	defer enc.Close()
	c := codec.New(set)
	c.Shallow = true
	c.Records = records.New(records.Options{HeadersOnly: true, CountsOnly: true})
	var names codec.TopicNames
	names.Add(summaryTopics)

	fetch := kmsg.NewFetchRequest()
	fetch.Version, fetch.SessionID, fetch.SessionEpoch = 18, 10, 63
	resp := kmsg.NewFetchResponse()
	resp.Version, resp.SessionID = 18, 10
	for i, tn := range summaryTopics[:2] {
		t := kmsg.NewFetchRequestTopic()
		t.TopicID = tn.ID
		pp := kmsg.NewFetchRequestTopicPartition()
		pp.Partition, pp.FetchOffset, pp.PartitionMaxBytes = int32(i), 1000, 1<<20
		t.Partitions = append(t.Partitions, pp)
		fetch.Topics = append(fetch.Topics, t)
		rt := kmsg.NewFetchResponseTopic()
		rt.TopicID = tn.ID
		for p := range int32(2) {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.HighWatermark, rp.LastStableOffset = p, 2000, 2000
			if p == 1 {
				rp.RecordBatches = summaryBatch(tb, 2, enc)
			} else {
				rp.RecordBatches = summaryBatch(tb, 1, nil)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	produce := kmsg.NewProduceRequest()
	produce.Version, produce.Acks = 13, -1
	for _, tn := range summaryTopics {
		t := kmsg.NewProduceRequestTopic()
		t.TopicID = tn.ID
		for p := range int32(2) {
			pp := kmsg.NewProduceRequestTopicPartition()
			pp.Partition, pp.Records = p, summaryBatch(tb, 2, nil)
			t.Partitions = append(t.Partitions, pp)
		}
		produce.Topics = append(produce.Topics, t)
	}

	var session []codec.SessionPartition // the session's set: 10 partitions of the three topics
	for i := range int32(10) {
		tn := summaryTopics[i%3]
		session = append(session, codec.SessionPartition{Topic: tn.Name, TopicID: tn.ID, Partition: i})
	}
	client := "kbench-consumer-1"
	at := time.Unix(1767323045, 451780000)
	entry := func(frame []byte, m *codec.Message, src, dst string) *model.Entry {
		if len(m.Warnings) > 0 {
			tb.Fatal(m.Warnings)
		}
		f := m.Facts()
		names.Resolve(&f)
		return &model.Entry{Frame: 12640, FirstFrame: 12639, Time: at, Stream: 69, Src: src, Dst: dst, Request: !m.Response,
			Msg: m, Facts: &f, Bytes: frame}
	}
	const client1, broker = "127.0.0.1:58082", "127.0.0.1:9094"
	req := summaryFrame(1, 18, false, 59, client, fetch.AppendTo(nil))
	fe := entry(req, c.DecodeRequest(req), client1, broker)
	fe.Session = &codec.SessionStep{ID: 10, Epoch: 63, Action: codec.SessionIncremental, Followed: true, Partitions: session,
		Updated: []codec.SessionPartition{session[0], session[1]}}
	frame := summaryFrame(1, 18, true, 59, "", resp.AppendTo(nil))
	re := entry(frame, c.DecodeResponse(frame, 1, 18), broker, client1)
	re.RequestFrame, re.Latency, re.ClientID = 12606, 981*time.Microsecond, &client
	re.Session = &codec.SessionStep{ID: 10, Epoch: 63, Action: codec.SessionIncremental, Followed: true, Response: true}
	frame = summaryFrame(0, 13, false, 7, "kbench-producer-15-none", produce.AppendTo(nil))
	pe := entry(frame, c.DecodeRequest(frame), "127.0.0.1:45554", "127.0.0.1:9093")
	return map[string]*model.Entry{"FetchRequest": fe, "FetchResponse": re, "Produce": pe}
}

// BenchmarkSummaryMessage measures the summary's line of each of summaryEntries: the work the
// merging goroutine does alone for each message shown, on every core's behalf.
func BenchmarkSummaryMessage(b *testing.B) {
	for name, e := range summaryEntries(b) {
		b.Run(name, func(b *testing.B) {
			s := NewSummary(io.Discard, TimeDefault)
			s.SetStart(e.Time.Add(-time.Second))
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Message(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSummaryEntries checks the lines BenchmarkSummaryMessage measures: those of a `kbench gen`
// capture's summary, topics named, records counted, sessions told.
func TestSummaryEntries(t *testing.T) {
	var out bytes.Buffer
	s := NewSummary(&out, TimeDefault)
	es := summaryEntries(t)
	s.SetStart(es["Produce"].Time.Add(-time.Second))
	for _, name := range []string{"FetchRequest", "FetchResponse", "Produce"} {
		if err := s.Message(es[name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	want := ` 12640    1.000000  69 127.0.0.1:58082 -> 127.0.0.1:9094 Request  Fetch v18                    corr 59     client "kbench-consumer-1"  159 bytes  topics kbench-logs[0] kbench-orders[1]  session 10 epoch 63: updates kbench-logs[0] kbench-orders[1]; 10 partitions
 12640    1.000000  69 127.0.0.1:9094 -> 127.0.0.1:58082 Response Fetch v18                    corr 59     answers #12606 after 0.981 ms  923 bytes  topics kbench-logs[0,1] kbench-orders[0,1]  6 records (none,zstd)  session 10
 12640    1.000000  69 127.0.0.1:45554 -> 127.0.0.1:9093 Request  Produce v13                  corr 7      client "kbench-producer-15-none"  1841 bytes  topics kbench-logs[0,1] kbench-orders[0,1] kbench-metrics[0,1]  12 records (none)
`
	if got := out.String(); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
}
