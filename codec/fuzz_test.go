package codec

import (
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec/schema"
)

func testCodec(t testing.TB) *Codec {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return New(set)
}

// FuzzDecode feeds arbitrary frames to the interpreter as requests and as responses of any API
// and version: no panic, whatever was decoded stays inside the frame, every prefix and varint
// says what its bytes hold (CheckEncodings), and a shallow decode agrees with the full one.
func FuzzDecode(f *testing.F) {
	c := testCodec(f)
	shallow := testCodec(f)
	shallow.Shallow = true
	f.Add([]byte("\x00\x00\x00\x0c\x00\x12\x00\x03\x00\x00\x00\x01\x00\x00"), int16(18), int16(3))
	f.Add(frame(3, 12, true, false, 1, []byte{0x02, 0x00, 0x01, 0x00}), int16(3), int16(12))
	f.Add(frame(1, 18, true, true, 1, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f}), int16(1), int16(18))
	f.Fuzz(func(t *testing.T, data []byte, key, version int16) {
		for _, m := range []*Message{c.DecodeRequest(data), c.DecodeResponse(data, key, version)} {
			Walk(m.Fields, func(n *Node, _ int) bool {
				if n.Offset < 0 || n.Size < 0 || n.Offset+n.Size > len(data) {
					t.Fatalf("node %s at %d+%d outside the %d-byte frame", n.Name, n.Offset, n.Size, len(data))
				}
				return true
			})
			if problems, _ := CheckEncodings(m.Fields, data); len(problems) > 0 {
				t.Fatalf("encodings: %v", problems)
			}
		}
		for _, response := range []bool{false, true} {
			full, sh := shallowPair(c, shallow, data, response, key, version)
			if d := shallowDiff(full, sh, &TopicNames{}, &TopicNames{}); d != "" {
				t.Fatalf("shallow decode (response=%v): %s", response, d)
			}
		}
	})
}

// TestHugeCountsAllocateNothing: lengths and counts that the remaining bytes cannot hold are
// refused before anything is allocated for them.
func TestHugeCountsAllocateNothing(t *testing.T) {
	c := testCodec(t)
	cases := map[string][]byte{
		// Metadata v1 request: Topics array count 2^31-1, 10 bytes left.
		"array count": frame(3, 1, false, false, 7, append([]byte{0x7f, 0xff, 0xff, 0xff}, make([]byte, 10)...)),
		// Metadata v9 (flexible): compact array count as a 5-byte uvarint near 2^32.
		"compact count": frame(3, 9, true, false, 7, append([]byte{0xfe, 0xff, 0xff, 0xff, 0x0f}, make([]byte, 10)...)),
		// SaslAuthenticate v0 request: bytes length 2^31-1.
		"bytes length": frame(36, 0, false, false, 7, []byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3}),
	}
	for name, fr := range cases {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			m := c.DecodeRequest(fr)
			runtime.ReadMemStats(&after)
			if len(m.Warnings) == 0 {
				t.Fatalf("no warning for an impossible length")
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
				t.Fatalf("decoding allocated %d bytes", got)
			}
			t.Log(m.Warnings[0])
		})
	}
}

// TestVarintTooLong: a varint of more than five bytes is malformed, not an endless loop.
func TestVarintTooLong(t *testing.T) {
	c := testCodec(t)
	body := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	m := c.DecodeRequest(frame(3, 12, true, false, 1, body))
	if len(m.Warnings) == 0 {
		t.Fatal("no warning")
	}
}

// FuzzConsumerProtocol feeds arbitrary bytes as the consumer protocol's subscription (in a
// JoinGroup request of a "consumer" group) and assignment (in the SyncGroup response that
// follows, whose type the conversation learnt from the JoinGroup): no panic, no warning for the
// message (bytes that are not the structure stay bytes), and the decoded nodes tile the field
// inside the frame, every prefix saying what its bytes hold.
func FuzzConsumerProtocol(f *testing.F) {
	c := testCodec(f)
	f.Add([]byte{0, 3, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 9, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		cv := c.NewConversation()
		join := kmsg.NewPtrJoinGroupRequest()
		join.Version, join.Group, join.ProtocolType = 5, "g", ProtocolConsumer
		join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: data}}
		sync := kmsg.NewPtrSyncGroupRequest()
		sync.Version, sync.Group = 3, "g"
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.Version, resp.MemberAssignment = 3, data
		frames := [][]byte{
			frame(11, 5, false, false, 1, join.AppendTo(nil)),
			frame(14, 3, false, false, 2, sync.AppendTo(nil)),
			frame(14, 3, false, true, 2, resp.AppendTo(nil)),
		}
		for i, fr := range frames {
			var m *Message
			if i < 2 {
				m = cv.ClientFrame(fr, nil).Msg
			} else {
				m = cv.ServerFrame(fr).Msg
			}
			if len(m.Warnings) > 0 {
				t.Fatalf("frame %d: warnings %v", i, m.Warnings)
			}
			if d := checkTiling(m.Fields, len(fr)); d != "" {
				t.Fatalf("frame %d: tiling: %s", i, d)
			}
			if problems, _ := CheckEncodings(m.Fields, fr); len(problems) > 0 {
				t.Fatalf("frame %d: encodings: %v", i, problems)
			}
		}
	})
}
