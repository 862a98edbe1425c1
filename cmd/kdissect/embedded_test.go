package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/pcaps"

	"github.com/kdissect/kdissect/internal/cli"
)

// jsonNode is a node of the JSON lines' field tree.
type jsonNode struct {
	Kind   string     `json:"kind"` // of a message
	Name   string     `json:"name"`
	Offset int        `json:"offset"`
	Size   int        `json:"size"`
	Value  any        `json:"value"`
	Note   string     `json:"note"`
	Fields []jsonNode `json:"fields"`
}

// child returns the node reached from n by names (array elements are "[0]", ...), or nil.
func (n *jsonNode) child(names ...string) *jsonNode {
	for _, name := range names {
		i := slices.IndexFunc(n.Fields, func(c jsonNode) bool { return c.Name == name })
		if i < 0 {
			return nil
		}
		n = &n.Fields[i]
	}
	return n
}

// leaves lists the values of n's children.
func (n *jsonNode) leaves() string {
	var out []string
	for _, c := range n.Fields {
		out = append(out, fmt.Sprint(c.Value))
	}
	return strings.Join(out, " ")
}

// TestConsumerProtocolJSON: in the JSON lines of real clients' captures, the consumer protocol's
// bytes (franz-go's JoinGroup and SyncGroup, kafka-go's SyncGroup v0, which does not state its
// protocol type) carry their subscription and assignment as fields inside the bytes node, from
// its content's first byte on.
func TestConsumerProtocolJSON(t *testing.T) {
	cases := []struct {
		capture, api, kind string
		path               []string // from the body to the bytes node
		inner              []string // from the bytes node to the node checked
		note, want         string   // the bytes node's note, the checked node's children's values
	}{
		{"kgo-group-3brokers.pcap", "JoinGroup", "request", []string{"Protocols", "[0]", "Metadata"}, []string{"Topics"},
			"ConsumerProtocolSubscription v3", "kdissect-orders"},
		{"kgo-group-3brokers.pcap", "SyncGroup", "response", []string{"Assignment"}, []string{"AssignedPartitions", "[0]", "Partitions"},
			"ConsumerProtocolAssignment v0", "0 1 2"},
		{"kafkago-produce-consume.pcap", "SyncGroup", "response", []string{"Assignment"}, []string{"AssignedPartitions", "[0]"},
			"ConsumerProtocolAssignment v1", "kdissect-kafkago 1"},
	}
	for _, tc := range cases {
		t.Run(tc.capture+"/"+tc.api+"/"+tc.kind, func(t *testing.T) {
			out, errOut, code := kdissect(t, "-p", pcaps.Ports, "--format", "json", "--api", tc.api, "--"+tc.kind+"s", pcap(tc.capture))
			if code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			line, _, _ := strings.Cut(out, "\n") // the first
			var msg jsonNode
			if err := json.Unmarshal([]byte(line), &msg); err != nil {
				t.Fatal(err)
			}
			b := msg.child(tc.path...)
			if msg.Kind != tc.kind || b == nil {
				t.Fatalf("no %v in %s", tc.path, line)
			}
			if b.Note != tc.note || len(b.Fields) == 0 || b.Fields[0].Offset != b.Offset+b.Size-lenHex(b.Value) {
				t.Fatalf("bytes node %s: note %q, %d fields (want %q, fields from its content on)", b.Name, b.Note, len(b.Fields), tc.note)
			}
			n := b.child(tc.inner...)
			if n == nil || n.leaves() != tc.want {
				t.Errorf("%v: %+v, want values %q", tc.inner, n, tc.want)
			}
		})
	}
}

// lenHex is the number of bytes a hex value of the JSON lines holds.
func lenHex(v any) int {
	s, _ := v.(string)
	return len(s) / 2
}

// TestControlRecordJSON: each transaction marker that kgo-transactions.pcap fetches shows its
// key's bytes and names its type.
func TestControlRecordJSON(t *testing.T) {
	out, errOut, code := kdissect(t, "-p", pcaps.Ports, "--format", "json", "--api", "Fetch", "--responses", pcap("kgo-transactions.pcap"))
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var types []string
	var walk func(n *jsonNode)
	walk = func(n *jsonNode) {
		if n.Name == "key" && len(n.Fields) == 2 {
			typ := n.child("type")
			v, _ := typ.Value.(float64)
			if n.Size != 5 || n.Value != fmt.Sprintf("0000%04x", int(v)) {
				t.Errorf("control key %+v", n)
			}
			types = append(types, typ.Note)
		}
		for i := range n.Fields {
			walk(&n.Fields[i])
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var msg jsonNode
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatal(err)
		}
		walk(&msg)
	}
	slices.Sort(types)
	types = slices.Compact(types)
	if strings.Join(types, " ") != "ABORT COMMIT" {
		t.Errorf("control record types %q, want ABORT and COMMIT", types)
	}
}
