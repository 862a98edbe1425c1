package codec

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchFrame is a Fetch v12 request or response naming one partition of one topic.
func fetchFrame(response bool) []byte {
	var msg kmsgMessage
	if response {
		r := kmsg.NewPtrFetchResponse()
		t := kmsg.NewFetchResponseTopic()
		t.Topic = "orders"
		p := kmsg.NewFetchResponseTopicPartition()
		p.HighWatermark = 42
		t.Partitions = append(t.Partitions, p)
		r.Topics = append(r.Topics, t)
		msg = r
	} else {
		r := kmsg.NewPtrFetchRequest()
		r.MaxWaitMillis = 500
		t := kmsg.NewFetchRequestTopic()
		t.Topic = "orders"
		t.Partitions = append(t.Partitions, kmsg.NewFetchRequestTopicPartition())
		r.Topics = append(r.Topics, t)
		msg = r
	}
	msg.SetVersion(12)
	return frame(KeyFetch, 12, msg.IsFlexible(), response, 7, msg.AppendTo(nil))
}

// TestShallowKeep: the fields Keep names are kept by shallow decodes of their API and
// direction, at any depth, and not by others; Keeps says which messages have them.
func TestShallowKeep(t *testing.T) {
	tests := []struct {
		name     string
		response bool
		keep     []Kept
		field    string // a field of a top-level struct, or of an element of a top-level array
		kept     bool
	}{
		{"none asked", false, nil, "MaxWaitMs", false},
		{"top level", false, []Kept{{APIKey: KeyFetch, Fields: []string{"MaxWaitMs"}}}, "MaxWaitMs", true},
		{"other direction", false, []Kept{{APIKey: KeyFetch, Response: true, Fields: []string{"MaxWaitMs"}}}, "MaxWaitMs", false},
		{"other API", false, []Kept{{APIKey: KeyProduce, Fields: []string{"MaxWaitMs"}}}, "MaxWaitMs", false},
		{"nested", true, []Kept{{APIKey: KeyFetch, Response: true, Fields: []string{"HighWatermark"}}}, "HighWatermark", true},
		{"nested, not asked", true, nil, "HighWatermark", false},
		{"every API", true, []Kept{{APIKey: EveryAPI, Response: true, Fields: []string{"ThrottleTimeMs"}}}, "ThrottleTimeMs", true},
		{"every API, other direction", false, []Kept{{APIKey: EveryAPI, Response: true, Fields: []string{"MaxWaitMs"}}}, "MaxWaitMs", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testCodec(t)
			c.Shallow = true
			c.Keep = tt.keep
			fr := fetchFrame(tt.response)
			var m *Message
			if tt.response {
				m = c.DecodeResponse(fr, KeyFetch, 12)
			} else {
				m = c.DecodeRequest(fr)
			}
			found := false
			Walk(m.Fields, func(n *Node, _ int) bool {
				found = found || n.Name == tt.field
				return true
			})
			if found != tt.kept {
				t.Errorf("%s kept %v, want %v", tt.field, found, tt.kept)
			}
			wantKeeps := false
			for _, k := range tt.keep {
				wantKeeps = wantKeeps || (k.APIKey == KeyFetch || k.APIKey == EveryAPI) && k.Response == tt.response
			}
			if c.Keeps(m) != wantKeeps {
				t.Errorf("Keeps %v, want %v", c.Keeps(m), wantKeeps)
			}
		})
	}
}
