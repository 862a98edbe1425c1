package codec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// treeText writes every node of a tree, value included, one per line.
func treeText(m *Message) string {
	var b strings.Builder
	Walk(m.Fields, func(n *Node, depth int) bool {
		fmt.Fprintf(&b, "%*s%s %s @%d+%d = %v\n", 2*depth, "", n.Name, n.Type, n.Offset, n.Size, n.Value)
		return true
	})
	return b.String()
}

// TestDetach: once a message is detached, its frame's memory may be overwritten without
// changing the tree, for every API key, version and direction, in full and shallow decodes,
// and for what a conversation makes of frames it cannot decode (unknown responses, SASL tokens).
func TestDetach(t *testing.T) {
	full := testCodec(t)
	shallow := testCodec(t)
	shallow.Shallow = true
	check := func(t *testing.T, fr []byte, decode func([]byte) *Message) {
		t.Helper()
		m := decode(fr)
		before := treeText(m)
		m.Detach()
		for i := range fr {
			fr[i] = 0xdd
		}
		if after := treeText(m); after != before {
			t.Fatalf("the tree changed with its frame's memory:\n%s\nwas\n%s", after, before)
		}
	}
	cases := 0
	for key := int16(0); key < 1000; key++ {
		if kmsg.RequestForKey(key) == nil {
			continue
		}
		for v := int16(0); v <= kmsg.RequestForKey(key).MaxVersion(); v++ {
			for _, response := range []bool{false, true} {
				for _, c := range []*Codec{full, shallow} {
					_, _, fr := kmsgFrame(key, v, response, int64(key)*1000+int64(v))
					check(t, fr, func(fr []byte) *Message {
						if response {
							return c.DecodeResponse(fr, key, v)
						}
						return c.DecodeRequest(fr)
					})
					cases++
				}
			}
		}
	}
	t.Logf("%d frames", cases)

	// A response no captured request explains keeps its body as bytes.
	_, _, fr := kmsgFrame(3, 12, true, 1)
	check(t, fr, func(fr []byte) *Message { return full.NewConversation().ServerFrame(fr).Msg })
	// A raw SASL token (after SaslHandshake v0) is bytes too.
	token := []byte("\x00\x00\x00\x0a\x00bob\x00secret")
	check(t, token, func(fr []byte) *Message { return full.saslMessage(fr, false) })
}
