package codec

import (
	"encoding/hex"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerBytes are a subscription and an assignment that kmsg encoded, and kmsg's structs.
type consumerBytes struct {
	sub, asg       []byte
	subMsg, asgMsg kmsgStruct
}

// kmsgStruct is one of kmsg's consumer protocol structs.
type kmsgStruct interface{ AppendTo([]byte) []byte }

// embeddedCase gives a conversation the frames of one exchange and returns the message under
// test and the name of its bytes field that holds the structure.
type embeddedCase struct {
	name  string
	field string
	sub   bool // the field holds a subscription (else an assignment)
	run   func(cv *Conversation, b consumerBytes) (*Message, []byte)
}

var consumerType = ProtocolConsumer

// embeddedCases cover every place the consumer protocol travels, and every way the protocol
// type is known: stated by the message, by its request, by the group's JoinGroup, or not at
// all (the bytes must then parse exactly).
var embeddedCases = []embeddedCase{
	{"JoinGroup v9 request", "Metadata", true, func(cv *Conversation, b consumerBytes) (*Message, []byte) {
		return client(cv, joinRequest(9, b.sub))
	}},
	{"JoinGroup v5 response, type from its request", "Metadata", true, func(cv *Conversation, b consumerBytes) (*Message, []byte) {
		client(cv, joinRequest(5, nil))
		r := kmsg.NewPtrJoinGroupResponse()
		r.Version, r.MemberID = 5, "m"
		r.Members = []kmsg.JoinGroupResponseMember{{MemberID: "m", ProtocolMetadata: b.sub}}
		return server(cv, r, 1)
	}},
	{"JoinGroup v9 response", "Metadata", true, func(cv *Conversation, b consumerBytes) (*Message, []byte) {
		client(cv, joinRequest(9, nil))
		r := kmsg.NewPtrJoinGroupResponse()
		r.Version, r.ProtocolType = 9, &consumerType
		r.Members = []kmsg.JoinGroupResponseMember{{MemberID: "m", ProtocolMetadata: b.sub}}
		return server(cv, r, 1)
	}},
	{"SyncGroup v3 request, type from the group's JoinGroup", "Assignment", false, func(cv *Conversation, b consumerBytes) (*Message, []byte) {
		client(cv, joinRequest(5, nil))
		return client(cv, syncRequest(3, b.asg))
	}},
	{"SyncGroup v5 request", "Assignment", false, func(cv *Conversation, b consumerBytes) (*Message, []byte) {
		return client(cv, syncRequest(5, b.asg))
	}},
	{"SyncGroup v0 request, type unknown", "Assignment", false, func(cv *Conversation, b consumerBytes) (*Message, []byte) {
		return client(cv, syncRequest(0, b.asg))
	}},
	{"SyncGroup v3 response, type from the JoinGroup", "Assignment", false, func(cv *Conversation, b consumerBytes) (*Message, []byte) {
		client(cv, joinRequest(5, nil))
		client(cv, syncRequest(3, nil))
		r := kmsg.NewPtrSyncGroupResponse()
		r.Version, r.MemberAssignment = 3, b.asg
		return server(cv, r, 2)
	}},
	{"DescribeGroups v5 response, metadata", "MemberMetadata", true, describe},
	{"DescribeGroups v5 response, assignment", "MemberAssignment", false, describe},
}

func describe(cv *Conversation, b consumerBytes) (*Message, []byte) {
	q := kmsg.NewPtrDescribeGroupsRequest()
	q.Version, q.Groups = 5, []string{"g"}
	client(cv, q)
	r := kmsg.NewPtrDescribeGroupsResponse()
	r.Version = 5
	r.Groups = []kmsg.DescribeGroupsResponseGroup{{Group: "g", ProtocolType: consumerType, Protocol: "range",
		Members: []kmsg.DescribeGroupsResponseGroupMember{{MemberID: "m", ProtocolMetadata: b.sub, MemberAssignment: b.asg}}}}
	return server(cv, r, 3)
}

func joinRequest(v int16, meta []byte) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version, r.Group, r.ProtocolType = v, "g", consumerType
	r.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta}}
	return r
}

func syncRequest(v int16, asg []byte) *kmsg.SyncGroupRequest {
	r := kmsg.NewPtrSyncGroupRequest()
	r.Version, r.Group, r.MemberID = v, "g", "m"
	if v >= 5 {
		r.ProtocolType = &consumerType
	}
	r.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: "m", MemberAssignment: asg}}
	return r
}

// corrOf gives the requests of a case their correlation ids in the order sent.
var corrOf = map[int16]int32{11: 1, 14: 2, 15: 3}

func client(cv *Conversation, r kmsg.Request) (*Message, []byte) {
	fr := frame(r.Key(), r.GetVersion(), r.IsFlexible(), false, corrOf[r.Key()], r.AppendTo(nil))
	return cv.ClientFrame(fr, nil).Msg, fr
}

func server(cv *Conversation, r kmsg.Response, corr int32) (*Message, []byte) {
	fr := frame(r.Key(), r.GetVersion(), r.IsFlexible(), true, corr, r.AppendTo(nil))
	return cv.ServerFrame(fr).Msg, fr
}

// randomConsumerBytes has kmsg encode a random subscription and assignment at version v.
func randomConsumerBytes(v int16, seed int64) consumerBytes {
	f := &filler{r: rand.New(rand.NewSource(seed)), nulls: true}
	sub := &kmsg.ConsumerMemberMetadata{}
	f.fill(reflect.ValueOf(sub).Elem(), 0)
	sub.Version = v
	asg := &kmsg.ConsumerMemberAssignment{}
	f.fill(reflect.ValueOf(asg).Elem(), 0)
	asg.Version = v
	return consumerBytes{sub: sub.AppendTo(nil), asg: asg.AppendTo(nil), subMsg: sub, asgMsg: asg}
}

// TestConsumerProtocolKmsg: kmsg encodes random subscriptions and assignments at every version;
// carried in every message that carries them, kdissect decodes them into children of the bytes
// field, at their offsets in the frame, with kmsg's values, and the field keeps its bytes.
func TestConsumerProtocolKmsg(t *testing.T) {
	c := testCodec(t)
	meta, err := kmsgMeta()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range embeddedCases {
		for v := int16(0); v <= 3; v++ {
			for seed := int64(0); seed < int64(*kmsgSeeds); seed++ {
				t.Run(fmt.Sprintf("%s/v%d/seed%d", tc.name, v, seed), func(t *testing.T) {
					b := randomConsumerBytes(v, seed)
					m, fr := tc.run(c.NewConversation(), b)
					if d := checkEmbedded(m, fr, tc, b, v, meta); d != "" {
						t.Fatalf("%s\nframe: %x", d, fr)
					}
				})
			}
		}
	}
}

// checkEmbedded compares the structure decoded in m's field tc.field with kmsg's.
func checkEmbedded(m *Message, fr []byte, tc embeddedCase, b consumerBytes, v int16, meta map[string]map[string]kmsgField) string {
	if len(m.Warnings) > 0 {
		return fmt.Sprintf("warnings: %v", m.Warnings)
	}
	if d := checkTiling(m.Fields, len(fr)); d != "" {
		return "tiling: " + d
	}
	if problems, _ := CheckEncodings(m.Fields, fr); len(problems) > 0 {
		return "encodings: " + strings.Join(problems, "; ")
	}
	n := Find(m.Fields[m.HeaderFields:], tc.field)
	if n == nil {
		return "no field " + tc.field
	}
	msg, raw, def := b.asgMsg, b.asg, assignmentDef
	if tc.sub {
		msg, raw, def = b.subMsg, b.sub, subscriptionDef
	}
	if got, ok := n.Value.([]byte); !ok || hex.EncodeToString(got) != hex.EncodeToString(raw) {
		return fmt.Sprintf("%s lost its bytes: %v", n.Name, n.Value)
	}
	if want := fmt.Sprintf("%s v%d", def, v); n.Note != want {
		return fmt.Sprintf("note %q, want %q", n.Note, want)
	}
	if len(n.Children) == 0 || n.Children[0].Name != "Version" || n.Children[0].Value != int64(v) {
		return fmt.Sprintf("children do not start with Version %d: %v", v, n.Children)
	}
	w := &want{meta: meta, v: v, tagged: map[string]bool{}, orig: raw, encode: func() []byte { return msg.AppendTo(nil) }}
	wantItems, err := w.structItems(reflect.ValueOf(msg).Elem())
	if err != nil {
		return err.Error()
	}
	if d := compareItems(tc.field, wantItems, gotItems(n.Children[1:], fr), func(int) {}); d != "" {
		return "values: " + d
	}
	return ""
}

// TestConsumerProtocolType: whether bytes are decoded depends on the group's protocol type,
// wherever it is learnt. A subscription of a version newer than the definition's, with bytes
// after the fields it knows, is decoded (as the newest version known) only for a group known to
// be a consumer group; with the type unknown it does not parse exactly and stays bytes; a group
// of another protocol type is never decoded; bytes that are not a subscription stay bytes, with
// a note when the group is a consumer group.
func TestConsumerProtocolType(t *testing.T) {
	c := testCodec(t)
	sub := &kmsg.ConsumerMemberMetadata{Version: 3, Topics: []string{"orders"}, Generation: 7}
	newer := append(sub.AppendTo(nil), 0xab, 0xcd)
	newer[1] = 4 // version 4
	asg := &kmsg.ConsumerMemberAssignment{Version: 3, Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "orders", Partitions: []int32{0, 2}}}}
	newerAsg := append(asg.AppendTo(nil), 0xab, 0xcd)
	newerAsg[1] = 4
	garbage := []byte{0, 1, 0xff, 0xff, 0xff, 0x00}
	connect := "connect"
	joinResponse := func(meta []byte) kmsg.Response {
		r := kmsg.NewPtrJoinGroupResponse()
		r.Version = 5
		r.Members = []kmsg.JoinGroupResponseMember{{MemberID: "m", ProtocolMetadata: meta}}
		return r
	}
	syncResponse := func(a []byte) kmsg.Response {
		r := kmsg.NewPtrSyncGroupResponse()
		r.Version, r.MemberAssignment = 3, a
		return r
	}
	cases := []struct {
		name  string
		run   func(cv *Conversation) (*Message, []byte)
		field string
		note  string // "" for bytes left alone
		kids  bool
	}{
		{"JoinGroup response of a consumer group", func(cv *Conversation) (*Message, []byte) {
			client(cv, joinRequest(5, nil))
			return server(cv, joinResponse(newer), 1)
		}, "Metadata", "ConsumerProtocolSubscription v4, read as v3", true},
		{"JoinGroup response of a connect group", func(cv *Conversation) (*Message, []byte) {
			r := joinRequest(5, nil)
			r.ProtocolType = connect
			client(cv, r)
			return server(cv, joinResponse(newer), 1)
		}, "Metadata", "", false},
		{"JoinGroup response, request not captured", func(cv *Conversation) (*Message, []byte) {
			fr := frame(11, 5, false, true, 1, joinResponse(newer).AppendTo(nil))
			return c.DecodeResponse(fr, 11, 5), fr
		}, "Metadata", "", false},
		{"SyncGroup request after a consumer JoinGroup", func(cv *Conversation) (*Message, []byte) {
			client(cv, joinRequest(5, nil))
			return client(cv, syncRequest(3, newerAsg))
		}, "Assignment", "ConsumerProtocolAssignment v4, read as v3", true},
		{"SyncGroup request after a JoinGroup of another group", func(cv *Conversation) (*Message, []byte) {
			r := joinRequest(5, nil)
			r.Group = "other"
			client(cv, r)
			return client(cv, syncRequest(3, newerAsg))
		}, "Assignment", "", false},
		{"SyncGroup v5 request of a connect group", func(cv *Conversation) (*Message, []byte) {
			r := syncRequest(5, asg.AppendTo(nil))
			r.ProtocolType = &connect
			return client(cv, r)
		}, "Assignment", "", false},
		{"SyncGroup response of a consumer group", func(cv *Conversation) (*Message, []byte) {
			client(cv, joinRequest(5, nil))
			client(cv, syncRequest(3, nil))
			return server(cv, syncResponse(newerAsg), 2)
		}, "Assignment", "ConsumerProtocolAssignment v4, read as v3", true},
		{"SyncGroup response, group not joined on the connection", func(cv *Conversation) (*Message, []byte) {
			client(cv, syncRequest(3, nil))
			return server(cv, syncResponse(newerAsg), 2)
		}, "Assignment", "", false},
		{"garbage in a consumer group", func(cv *Conversation) (*Message, []byte) {
			return client(cv, joinRequest(9, garbage))
		}, "Metadata", "not a ConsumerProtocolSubscription v1: Topics: negative array length", false},
		{"garbage, type unknown", func(cv *Conversation) (*Message, []byte) {
			return client(cv, syncRequest(0, garbage))
		}, "Assignment", "", false},
		{"one byte in a consumer group", func(cv *Conversation) (*Message, []byte) {
			return client(cv, joinRequest(9, []byte{0}))
		}, "Metadata", "not a ConsumerProtocolSubscription: 1 byte, too short for its version", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, fr := tc.run(c.NewConversation())
			if len(m.Warnings) > 0 {
				t.Fatalf("warnings: %v", m.Warnings)
			}
			if d := checkTiling(m.Fields, len(fr)); d != "" {
				t.Fatalf("tiling: %s", d)
			}
			n := Find(m.Fields[m.HeaderFields:], tc.field)
			if n == nil {
				t.Fatalf("no field %s", tc.field)
			}
			if !strings.HasPrefix(n.Note, tc.note) || (tc.note == "") != (n.Note == "") {
				t.Errorf("note %q, want %q", n.Note, tc.note)
			}
			if got := len(n.Children) > 0; got != tc.kids {
				t.Fatalf("decoded: %v, want %v", got, tc.kids)
			}
			if tc.kids {
				last := n.Children[len(n.Children)-1]
				if last.Name != "undecoded" || hex.EncodeToString(last.Value.([]byte)) != "abcd" {
					t.Errorf("last child %s %v, want the two unknown bytes undecoded", last.Name, last.Value)
				}
			}
		})
	}
}
