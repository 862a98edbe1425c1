package render

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/model"
)

// explainBatch is a record batch of one record, built by hand: timestampDelta -10 (zigzag 19,
// the byte 0x13), offsetDelta 0, a null key, the value "hi", no headers; a transactional batch.
func explainBatch() []byte {
	rec := []byte{0x00, 0x13, 0x00, 0x01, 0x04, 'h', 'i', 0x00}
	rec = append([]byte{byte(len(rec) << 1)}, rec...)
	b := make([]byte, 61)
	b[16] = 2                                         // magic
	binary.BigEndian.PutUint16(b[21:], 0x0010)        // attributes: transactional
	binary.BigEndian.PutUint64(b[27:], 1767323045010) // baseTimestamp
	binary.BigEndian.PutUint32(b[57:], 1)             // one record
	b = append(b, rec...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// TestExplainRecord: --explain shows a record's zigzag varints step by step, its null key as a
// null, its value's length and content, and the batch's attribute bits; without --explain, none
// of it.
func TestExplainRecord(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(set)
	c.Records = records.New(records.Options{})
	req := kmsg.NewPtrProduceRequest()
	req.Version = 3
	req.Acks, req.TimeoutMillis = -1, 1000
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = "t"
	part := kmsg.NewProduceRequestTopicPartition()
	part.Records = explainBatch()
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kdissect")).AppendRequest(nil, req, 1)
	m := c.DecodeRequest(frame)
	if len(m.Warnings) > 0 {
		t.Fatalf("warnings: %v", m.Warnings)
	}
	render := func(explain bool) string {
		var out bytes.Buffer
		d := NewDiagram(&out, DiagramOptions{Explain: explain})
		if err := d.Message(&model.Entry{Frame: 1, Request: true, Msg: m, Bytes: frame}); err != nil {
			t.Fatal(err)
		}
		d.Close()
		return out.String()
	}
	got := render(true)
	for _, want := range []string{
		"request header v1: Produce v3 is not flexible (flexible versions 9+)",
		"0xffff int16 -1 → null",                  // TransactionalId
		"0x0001 int16 1 → 1 byte",                 // the topic name "t"
		"0x13 → zigzag 19 → -10",                  // timestampDelta
		"0x01 varint → zigzag 1 → -1 → null",      // the key
		"0x04 varint → zigzag 4 → 2 → 2 bytes",    // the value
		"0x00 varint → zigzag 0 → 0 → 0 elements", // no headers
		"isTransactional = 1",
		"compression = 0 (none)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	plain := render(false)
	if strings.Contains(plain, partMark) || strings.Contains(plain, "zigzag") || strings.Contains(plain, "header v1") {
		t.Errorf("parts shown without Explain:\n%s", plain)
	}
	// Every row of the plain diagram is in the explained one, in order (the columns may be
	// wider there).
	i := 0
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	lines := strings.Split(got, "\n")
	for _, l := range strings.Split(plain, "\n") {
		for i < len(lines) && squeeze(lines[i]) != squeeze(l) {
			i++
		}
		if i == len(lines) {
			t.Fatalf("plain row %q missing from the explained diagram", l)
		}
	}
}
