package codec

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"weak"

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

// TestRelease: messages decoded after others were released are the same as when decoded
// fresh, through every API key, version and direction, in full and shallow decodes, with
// arenas of every size passed from message to message; and releasing saves the allocations.
func TestRelease(t *testing.T) {
	for _, shallow := range []bool{false, true} {
		fresh, reused := testCodec(t), testCodec(t)
		fresh.Shallow, reused.Shallow = shallow, shallow
		decode := func(c *Codec, fr []byte, key, v int16, response bool) *Message {
			if response {
				return c.DecodeResponse(fr, key, v)
			}
			return c.DecodeRequest(fr)
		}
		var kept []string // values taken from released messages
		var keptWant []string
		for key := int16(0); key < 1000; key++ {
			if kmsg.RequestForKey(key) == nil {
				continue
			}
			for v := int16(0); v <= kmsg.RequestForKey(key).MaxVersion(); v++ {
				for _, response := range []bool{false, true} {
					_, _, fr := kmsgFrame(key, v, response, int64(key)*1000+int64(v)+3)
					want := treeText(decode(fresh, fr, key, v, response))
					m := decode(reused, fr, key, v, response)
					if got := treeText(m); got != want {
						t.Fatalf("shallow %v: key %d v%d response %v decoded after released messages:\n%s\nwant\n%s", shallow, key, v, response, got, want)
					}
					Walk(m.Fields, func(n *Node, _ int) bool {
						if s, ok := n.Value.(string); ok && len(kept) < 1000 {
							kept, keptWant = append(kept, s), append(keptWant, strings.Clone(s))
						}
						return true
					})
					reused.Release(m)
					if m.Fields != nil {
						t.Fatal("a released message keeps its fields")
					}
				}
			}
		}
		if len(kept) == 0 || !slices.Equal(kept, keptWant) {
			t.Errorf("strings taken from released messages changed (%d kept)", len(kept))
		}
	}

	// A Metadata response with 200 partitions: decoded and released over and over, it
	// allocates a small part of what decoding without releasing does.
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	for i := range 4 {
		topic := kmsg.NewMetadataResponseTopic()
		name := fmt.Sprint("topic-", i)
		topic.Topic = &name
		for p := range 50 {
			part := kmsg.NewMetadataResponseTopicPartition()
			part.Partition = int32(p)
			part.Replicas = []int32{1, 2, 3}
			topic.Partitions = append(topic.Partitions, part)
		}
		resp.Topics = append(resp.Topics, topic)
	}
	fr := frame(3, 12, true, true, 7, resp.AppendTo(nil))
	c := testCodec(t)
	kept := testing.AllocsPerRun(50, func() { c.DecodeResponse(fr, 3, 12) })
	released := testing.AllocsPerRun(50, func() { c.Release(c.DecodeResponse(fr, 3, 12)) })
	t.Logf("allocations per decode: %.0f kept, %.0f released", kept, released)
	if released > kept/2 && !raceEnabled {
		t.Errorf("%.0f allocations per decode with Release, %.0f without", released, kept)
	}
}

// TestUUIDText: AppendText writes what String returns, after what the buffer held, without
// allocating when the buffer has room.
func TestUUIDText(t *testing.T) {
	for _, u := range []UUID{{}, {0xff, 0xfe, 0xfd}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}} {
		got, err := u.AppendText([]byte("id:"))
		if err != nil || string(got) != "id:"+u.String() || len(u.String()) != 22 {
			t.Errorf("%x: AppendText gave %q, %v; String %q", u[:], got, err, u.String())
		}
	}
	var buf [24]byte
	u := UUID{9}
	if n := testing.AllocsPerRun(10, func() { u.AppendText(buf[:0]) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// TestReleaseKeepsNothing: a released tree's nodes, pooled and used again by the next tree, do
// not keep its frame from the collector (a full tree's bytes values point into the frame).
func TestReleaseKeepsNothing(t *testing.T) {
	c := testCodec(t)
	c.Records = nil // records as bytes, in the frame
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = "t"
	part := kmsg.NewProduceRequestTopicPartition()
	part.Records = make([]byte, 1<<20)
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)
	fr := frame(0, 7, false, false, 1, req.AppendTo(nil))
	alive := weak.Make(&fr[0])
	m := c.DecodeRequest(fr)
	if n := Find(m.Fields, "Records"); len(m.Warnings) > 0 || n == nil || len(n.Value.([]byte)) != 1<<20 {
		t.Fatalf("warnings %v, records %v", m.Warnings, n)
	}
	fr = nil
	c.Release(m)
	// The next tree takes the released nodes, and uses fewer of them.
	small := kmsg.NewPtrApiVersionsRequest()
	next := c.DecodeRequest(frame(18, 0, false, false, 2, small.AppendTo(nil)))
	for range 2 {
		runtime.GC()
	}
	if alive.Value() != nil {
		t.Error("the frame of a released message is still reachable")
	}
	runtime.KeepAlive(next)
}

// TestCompact: a compacted tree is the tree it was, through every API key, version and
// direction, in full and shallow decodes; the nodes it was decoded into go on to the next
// trees without changing it; and the message can still be released. (Trees that fill their
// slabs are left in them; at least one is not.)
func TestCompact(t *testing.T) {
	for _, shallow := range []bool{false, true} {
		c := testCodec(t)
		c.Shallow = shallow
		var kept []*Message
		var want []string
		var arena Arena
		compacted := 0
		for key := int16(0); key < 1000; key++ {
			if kmsg.RequestForKey(key) == nil {
				continue
			}
			for v := int16(0); v <= kmsg.RequestForKey(key).MaxVersion(); v++ {
				for _, response := range []bool{false, true} {
					_, _, fr := kmsgFrame(key, v, response, int64(key)*1000+int64(v)+3)
					var m *Message
					if response {
						m = c.DecodeResponse(fr, key, v)
					} else {
						m = c.DecodeRequest(fr)
					}
					before := treeText(m)
					c.Compact(m, &arena)
					if m.nodes == nil {
						compacted++
					}
					if treeText(m) != before {
						t.Fatalf("shallow %v: key %d v%d response %v compacted:\n%s\nwant\n%s", shallow, key, v, response, treeText(m), before)
					}
					kept, want = append(kept, m), append(want, before)
				}
			}
		}
		if compacted == 0 {
			t.Fatalf("shallow %v: no tree compacted", shallow)
		}
		// The messages decoded after each took the nodes it was compacted out of.
		for i, m := range kept {
			if got := treeText(m); got != want[i] {
				t.Fatalf("shallow %v: compacted tree %d changed after other decodes:\n%s\nwant\n%s", shallow, i, got, want[i])
			}
			c.Release(m)
			if m.Fields != nil {
				t.Fatal("a released message keeps its fields")
			}
		}
	}
}

// TestUUIDValues checks the values kept for UUIDs (uuidValues): each is the UUID given, also
// for UUIDs that share an entry and come back after another took it, and a UUID that comes
// again gets the value it got before rather than one made anew.
func TestUUIDValues(t *testing.T) {
	var c uuidValues
	a, b, other := UUID{1, 15: 3}, UUID{2, 15: 67}, UUID{3, 15: 4} // a and b share an entry
	for i, u := range []UUID{a, a, b, a, other, b, b, {}} {
		if v := c.value(u); v != any(u) {
			t.Errorf("%d: value %v for %v", i, v, u)
		}
	}
	if allocs := testing.AllocsPerRun(10, func() { c.value(other) }); allocs != 0 {
		t.Errorf("a UUID met before made %v allocations", allocs)
	}
}

// TestKeptValuesLent: the values kept for UUIDs and strings are lent to each decode, not held
// by the tree it makes: trees held at once (a page's, a JSON round's) do not hold one each.
func TestKeptValuesLent(t *testing.T) {
	c := testCodec(t)
	c.Shallow = true
	req := kmsg.NewPtrFetchRequest()
	req.Version = 18
	topic := kmsg.NewFetchRequestTopic()
	topic.TopicID = [16]byte{1}
	topic.Partitions = append(topic.Partitions, kmsg.NewFetchRequestTopicPartition())
	req.Topics = append(req.Topics, topic)
	fr := frame(1, 18, true, false, 1, req.AppendTo(nil))
	held := make([]*Message, 0, 100)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range cap(held) {
		held = append(held, c.DecodeRequest(fr))
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / uint64(len(held)); per > 8192 {
		t.Errorf("each tree held costs %d bytes", per)
	}
}

// TestStringValuesManyClients: the client ids of a few dozen connections, which differ in a
// character or two, mostly keep their entries while their requests come in turn.
func TestStringValuesManyClients(t *testing.T) {
	var c stringValues
	var ids [][]byte
	for i := range 40 {
		ids = append(ids, fmt.Appendf(nil, "kbench-producer-%02d-gzip", i))
	}
	all := func() {
		for _, b := range ids {
			c.value(b)
		}
	}
	all()
	if allocs := testing.AllocsPerRun(10, all); allocs > 10 {
		t.Errorf("the 40 client ids made %v allocations when met again", allocs)
	}
}

// TestStringValues checks the values and pointers kept for short strings (stringValues): each
// is the string given, also for strings that share an entry, for long and empty ones, which
// are not kept; a string met again costs no allocation.
func TestStringValues(t *testing.T) {
	var c stringValues
	long := strings.Repeat("x", maxKeptString+1)
	// "ab" and another share an entry.
	other := "s0"
	for i := 1; slot(other) != slot("ab"); i++ {
		other = fmt.Sprint("s", i)
	}
	for i, s := range []string{"kgo", "kgo", "ab", other, "kgo", "", long, long, "client-1", "ab"} {
		if v := c.value([]byte(s)); v != any(s) {
			t.Errorf("%d: value %q for %q", i, v, s)
		}
		if p := c.pointer(s); *p != s {
			t.Errorf("%d: pointer to %q for %q", i, *p, s)
		}
	}
	b := []byte("client-1")
	c.value(b)
	if allocs := testing.AllocsPerRun(10, func() { c.pointer(c.value(b).(string)) }); allocs != 0 {
		t.Errorf("a string met before made %v allocations", allocs)
	}
}
