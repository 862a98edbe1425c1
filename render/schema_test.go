package render

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
)

func embedded(t *testing.T) *codec.Codec {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return codec.New(set)
}

// layoutOf lays out an API's request or response at v, after the header the codec uses.
func layoutOf(c *codec.Codec, a *schema.API, response bool, v int16) *Layout {
	if response {
		return NewLayout(a.Name, a.Response, v, c.Schemas.ResponseHeader, c.ResponseHeaderVersion(a.Key, v))
	}
	return NewLayout(a.Name, a.Request, v, c.Schemas.RequestHeader, c.RequestHeaderVersion(a.Key, v))
}

// match compares decoded nodes with layout fields: same names, same wire types, in the same
// order. Arrays are compared element by element; tagged sections only by themselves (a kmsg
// message built with defaults sends no tagged field).
func match(path string, nodes []*codec.Node, fields []*LayoutField) string {
	if len(nodes) != len(fields) {
		var names []string
		for _, n := range nodes {
			names = append(names, n.Name)
		}
		var want []string
		for _, f := range fields {
			want = append(want, f.Name)
		}
		return fmt.Sprintf("%s: decoded %v, layout %v", path, names, want)
	}
	for i, n := range nodes {
		f := fields[i]
		p := path + "." + f.Name
		if n.Name != f.Name || n.Type != f.Type {
			return fmt.Sprintf("%s: decoded %s %s, layout %s %s", p, n.Type, n.Name, f.Type, f.Name)
		}
		switch {
		case n.Type == wire.TaggedFields:
		case n.Type.IsArray():
			for _, e := range n.Children {
				if len(f.Fields) == 1 && f.Fields[0].Name == "[i]" {
					if e.Type != f.Fields[0].Type {
						return fmt.Sprintf("%s%s: decoded %s, layout %s", p, e.Name, e.Type, f.Fields[0].Type)
					}
				} else if d := match(p+e.Name, e.Children, f.Fields); d != "" {
					return d
				}
			}
		case n.Type == wire.NullableStruct && len(n.Children) == 1:
			// null: only the marker
		default:
			if d := match(p, n.Children, f.Fields); d != "" {
				return d
			}
		}
	}
	return ""
}

// TestLayoutMatchesDecoder lays out every request and response of every version kmsg knows and
// compares it with what the interpreter decodes from kmsg's encoding of the same message: the
// layout must name the same fields with the same wire types in the same order, headers included.
func TestLayoutMatchesDecoder(t *testing.T) {
	c := embedded(t)
	n := 0
	for _, a := range c.Schemas.APIs() {
		for _, response := range []bool{false, true} {
			m := a.Request
			if response {
				m = a.Response
			}
			if m == nil {
				continue
			}
			for v := m.ValidVersions.Lo; v <= m.ValidVersions.Hi && v < schema.MaxVersion; v++ {
				frame, ok := kmsgFrame(a.Key, v, response)
				if !ok {
					continue
				}
				var msg *codec.Message
				if response {
					msg = c.DecodeResponse(frame, a.Key, v)
				} else {
					msg = c.DecodeRequest(frame)
				}
				l := layoutOf(c, a, response, v)
				name := fmt.Sprintf("%s v%d %s", a.Name, v, m.Type)
				if d := match(name+" header", msg.Fields[:msg.HeaderFields], l.Header.Fields); d != "" {
					t.Error(d)
				}
				if d := match(name, msg.Fields[msg.HeaderFields:], l.Body.Fields); d != "" {
					t.Error(d)
				}
				n++
			}
		}
	}
	if n < 500 {
		t.Errorf("only %d messages compared", n)
	}
}

// kmsgFrame encodes kmsg's default message for key and version, with its header.
func kmsgFrame(key, v int16, response bool) ([]byte, bool) {
	if response {
		r := kmsg.ResponseForKey(key)
		if r == nil || v > r.MaxVersion() {
			return nil, false
		}
		r.SetVersion(v)
		h := binary.BigEndian.AppendUint32(nil, 1)
		if r.IsFlexible() && key != 18 {
			h = append(h, 0)
		}
		body := r.AppendTo(h)
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...), true
	}
	r := kmsg.RequestForKey(key)
	if r == nil || v > r.MaxVersion() || (key == 7 && v == 0) { // kmsg writes no ControlledShutdown v0 body
		return nil, false
	}
	r.SetVersion(v)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("kdissect")).AppendRequest(nil, r, 1), true
}

// TestLayoutMatchesDecoderDeep compares nested fields too, on a message with an element in every
// array: DescribeGroups v6, the reference diagram's example, and Fetch v13.
func TestLayoutMatchesDecoderDeep(t *testing.T) {
	c := embedded(t)
	dg := kmsg.NewPtrDescribeGroupsResponse()
	dg.Version = 6
	g := kmsg.NewDescribeGroupsResponseGroup()
	g.Members = append(g.Members, kmsg.NewDescribeGroupsResponseGroupMember())
	dg.Groups = append(dg.Groups, g)

	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 13
	ft := kmsg.NewFetchRequestTopic()
	ft.Partitions = append(ft.Partitions, kmsg.NewFetchRequestTopicPartition())
	fetch.Topics = append(fetch.Topics, ft)
	fg := kmsg.NewFetchRequestForgottenTopic()
	fg.Partitions = []int32{1, 2}
	fetch.ForgottenTopics = append(fetch.ForgottenTopics, fg)

	for _, tt := range []struct {
		key      int16
		v        int16
		response bool
		body     []byte
	}{
		{15, 6, true, dg.AppendTo(nil)},
		{1, 13, false, fetch.AppendTo(nil)},
	} {
		a := c.Schemas.API(tt.key)
		var msg *codec.Message
		if tt.response {
			frame := append(binary.BigEndian.AppendUint32(nil, uint32(5+len(tt.body))), 0, 0, 0, 1, 0)
			msg = c.DecodeResponse(append(frame, tt.body...), tt.key, tt.v)
		} else {
			msg = c.DecodeRequest(kmsg.NewRequestFormatter().AppendRequest(nil, fetch, 1))
		}
		if len(msg.Warnings) > 0 {
			t.Fatalf("%s v%d: %v", a.Name, tt.v, msg.Warnings)
		}
		l := layoutOf(c, a, tt.response, tt.v)
		if d := match(a.Name, msg.Fields[msg.HeaderFields:], l.Body.Fields); d != "" {
			t.Error(d)
		}
	}
}

func TestDiff(t *testing.T) {
	c := embedded(t)
	tests := []struct {
		key      int16
		response bool
		a, b     int16
		want     []Change
	}{
		{15, true, 5, 6, []Change{{Kind: "added", Path: "Groups.ErrorMessage", To: "compact_nullable_string"}}},
		{3, false, 8, 9, []Change{
			{Kind: "added", Path: "header._tagged_fields", To: "tagged_fields"},
			{Kind: "added", Path: "Topics._tagged_fields", To: "tagged_fields"},
			{Kind: "added", Path: "_tagged_fields", To: "tagged_fields"},
			{Kind: "changed", Path: "Topics", From: "array?", To: "compact_array?"},
			{Kind: "changed", Path: "Topics.Name", From: "string", To: "compact_string"},
		}},
		{1, false, 12, 13, []Change{
			{Kind: "removed", Path: "Topics.Topic", From: "compact_string"},
			{Kind: "removed", Path: "ForgottenTopicsData.Topic", From: "compact_string"},
			{Kind: "added", Path: "Topics.TopicId", To: "uuid"},
			{Kind: "added", Path: "ForgottenTopicsData.TopicId", To: "uuid"},
		}},
		{1, false, 13, 12, []Change{
			{Kind: "removed", Path: "Topics.TopicId", From: "uuid"},
			{Kind: "removed", Path: "ForgottenTopicsData.TopicId", From: "uuid"},
			{Kind: "added", Path: "Topics.Topic", To: "compact_string"},
			{Kind: "added", Path: "ForgottenTopicsData.Topic", To: "compact_string"},
		}},
		{1, false, 13, 13, nil},
	}
	for _, tt := range tests {
		a := c.Schemas.API(tt.key)
		got := Diff(layoutOf(c, a, tt.response, tt.a), layoutOf(c, a, tt.response, tt.b))
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s v%d..v%d:\n got %v\nwant %v", a.Name, tt.a, tt.b, got, tt.want)
		}
	}
}
