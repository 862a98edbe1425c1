package codec

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestFacts(t *testing.T) {
	c := testCodec(t)
	// An OffsetCommit v8 request names a group, a member and topics.
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.MemberID = "billing", "member-1"
	for _, name := range []string{"orders", "payments", "orders"} {
		topic := kmsg.NewOffsetCommitRequestTopic()
		topic.Topic = name
		req.Topics = append(req.Topics, topic)
	}
	m := c.DecodeRequest(frame(8, 8, true, false, 1, req.AppendTo(nil)))
	f := m.Facts()
	if !slices.Equal(f.Topics, []string{"orders", "payments"}) || !slices.Equal(f.Groups, []string{"billing"}) || !slices.Equal(f.Members, []string{"member-1"}) {
		t.Errorf("facts = %+v", f)
	}
	// A Metadata v12 response carries topic ids and per-topic errors.
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	topic := kmsg.NewMetadataResponseTopic()
	name := "orders"
	topic.Topic, topic.TopicID, topic.ErrorCode = &name, [16]byte{15: 9}, 3
	resp.Topics = append(resp.Topics, topic)
	m = c.DecodeResponse(frame(3, 12, true, true, 1, resp.AppendTo(nil)), 3, 12)
	f = m.Facts()
	if !slices.Equal(f.Topics, []string{"orders"}) || len(f.TopicIDs) != 1 || f.TopicIDs[0][15] != 9 || !slices.Equal(f.Errors, []int16{3}) {
		t.Errorf("facts = %+v", f)
	}
}

// TestOnceSet: values come out once each, first seen first, both while the list is searched
// and after the map takes over.
func TestOnceSet(t *testing.T) {
	var s onceSet[int]
	var list []int
	var want []int
	for i := 0; i < 100; i++ {
		v := (i * 7) % 40
		s.add(&list, v)
		if !slices.Contains(want, v) {
			want = append(want, v)
		}
	}
	if !slices.Equal(list, want) {
		t.Errorf("%v, want %v", list, want)
	}
}
