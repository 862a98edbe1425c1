package codec

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec/schema"
)

// ShallowDiff is shallowDiff for the tests of package codec_test.
var ShallowDiff = shallowDiff

// NodeCount counts the nodes of a message's tree.
func NodeCount(m *Message) int {
	n := 0
	Walk(m.Fields, func(*Node, int) bool { n++; return true })
	return n
}

// shallowDiff compares a full and a shallow decode of the same frame, as the pipeline uses
// them: fullNames and shallowNames learn from them and annotate them (each in its own mode),
// then their facts are gathered and resolved. Everything summaries, statistics, filters and
// the pairing read must be the same; every node of the shallow tree must be a node of the full
// tree; and every node the kept rule names, with all below it, must be in the shallow tree.
// It describes the differences, or returns "".
func shallowDiff(full, shallow *Message, fullNames, shallowNames *TopicNames) string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	head := func(m *Message) string {
		id := "<nil>"
		if m.ClientID != nil {
			id = strconv.Quote(*m.ClientID)
		}
		return fmt.Sprintf("response=%v key=%d name=%s v%d header v%d corr=%d client=%s size=%d header fields=%d",
			m.Response, m.APIKey, m.APIName, m.Version, m.HeaderVersion, m.CorrelationID, id, m.Size, m.HeaderFields)
	}
	if f, s := head(full), head(shallow); f != s {
		add("message: full %s, shallow %s", f, s)
	}
	if !reflect.DeepEqual(full.Warnings, shallow.Warnings) {
		add("warnings: full %v, shallow %v", full.Warnings, shallow.Warnings)
	}

	fullNames.learn(full)
	shallowNames.learn(shallow)
	if !reflect.DeepEqual(fullNames.names, shallowNames.names) {
		add("topic names learnt: full %v, shallow %v", fullNames.names, shallowNames.names)
	}
	fullNames.Annotate(full)
	shallowNames.Annotate(shallow)

	// The trees.
	fi, si := nodeIndex(full.Fields), nodeIndex(shallow.Fields)
	for path, s := range si {
		f := fi[path]
		switch {
		case f == nil:
			add("shallow node %s is not in the full tree", path)
		case !sameNode(f, s):
			add("node %s: full %s, shallow %s", path, nodeString(f), nodeString(s))
		}
	}
	var walk func(nodes []*Node, path string, whole bool)
	walk = func(nodes []*Node, path string, whole bool) {
		for _, n := range nodes {
			p := path + "/" + n.Name + "@" + strconv.Itoa(n.Offset)
			w := whole || (n.Def != nil && keptItself(n.Def))
			if w && si[p] == nil {
				add("node %s (%s) is kept but not in the shallow tree", p, nodeString(n))
			}
			if n.Type.IsBytes() && !w {
				continue // the fields of a structure the bytes hold (the consumer protocol), not the message's
			}
			walk(n.Children, p, w)
		}
	}
	walk(full.Fields[:full.HeaderFields], "", true)
	walk(full.Fields[full.HeaderFields:], "", false)

	// What the pairing and the statistics look for.
	body := func(m *Message) []*Node { return m.Fields[min(m.HeaderFields, len(m.Fields)):] }
	for _, name := range []string{"Acks", "ErrorCode"} {
		if f, s := nodeString(Find(body(full), name)), nodeString(Find(body(shallow), name)); f != s {
			add("Find(%s): full %s, shallow %s", name, f, s)
		}
	}
	for _, name := range []string{"ClientSoftwareName", "ClientSoftwareVersion"} {
		if f, s := nodeString(Find(full.Fields, name)), nodeString(Find(shallow.Fields, name)); f != s {
			add("Find(%s): full %s, shallow %s", name, f, s)
		}
	}

	// The facts.
	ff, sf := full.Facts(), shallow.Facts()
	if !reflect.DeepEqual(ff, sf) {
		add("facts: full %+v, shallow %+v", ff, sf)
	}
	fullNames.Resolve(&ff)
	shallowNames.Resolve(&sf)
	if !reflect.DeepEqual(ff, sf) {
		add("resolved facts: full %+v, shallow %+v", ff, sf)
	}
	if len(out) > 8 {
		out = append(out[:8], fmt.Sprintf("and %d more", len(out)-8))
	}
	return strings.Join(out, "\n")
}

// nodeIndex maps every node of a tree to its path: names and offsets from the top.
func nodeIndex(nodes []*Node) map[string]*Node {
	idx := map[string]*Node{}
	var walk func([]*Node, string)
	walk = func(ns []*Node, path string) {
		for _, n := range ns {
			p := path + "/" + n.Name + "@" + strconv.Itoa(n.Offset)
			idx[p] = n
			walk(n.Children, p)
		}
	}
	walk(nodes, "")
	return idx
}

// sameNode compares two nodes but for their children.
func sameNode(a, b *Node) bool {
	return a.Name == b.Name && a.Type == b.Type && a.Offset == b.Offset && a.Size == b.Size &&
		reflect.DeepEqual(a.Value, b.Value) && a.Def == b.Def && a.Note == b.Note &&
		a.Secret == b.Secret && a.Decompressed == b.Decompressed
}

func nodeString(n *Node) string {
	if n == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s %s @%d+%d = %#v note %q", n.Name, n.Type, n.Offset, n.Size, n.Value, n.Note)
}

// shallowPair decodes a frame in both modes.
func shallowPair(full, shallow *Codec, fr []byte, response bool, key, v int16) (*Message, *Message) {
	if response {
		return full.DecodeResponse(fr, key, v), shallow.DecodeResponse(fr, key, v)
	}
	return full.DecodeRequest(fr), shallow.DecodeRequest(fr)
}

// mangle returns damaged copies of a frame: cut short (with the size prefix as it was and
// made to fit), and with bytes overwritten, so that the skipping code meets every failure.
func mangle(fr []byte, r *rand.Rand) [][]byte {
	var out [][]byte
	if len(fr) <= 8 {
		return nil
	}
	for _, cut := range []int{len(fr) - 1, 8 + r.Intn(len(fr)-8), 8 + r.Intn(len(fr)-8)} {
		out = append(out, append([]byte(nil), fr[:cut]...))
		fit := append([]byte(nil), fr[:cut]...)
		fit[0], fit[1], fit[2], fit[3] = byte((cut-4)>>24), byte((cut-4)>>16), byte((cut-4)>>8), byte(cut-4)
		out = append(out, fit)
	}
	for i := 0; i < 6; i++ {
		b := append([]byte(nil), fr...)
		at := 8 + r.Intn(len(b)-8)
		b[at] = []byte{0xff, 0x80, 0x7f, 0x00, byte(r.Intn(256))}[r.Intn(5)]
		out = append(out, b)
	}
	// Runs of 0xff: varints too long, lengths and counts of -1 and less.
	for i := 0; i < 3; i++ {
		b := append([]byte(nil), fr...)
		at := 8 + r.Intn(len(b)-8)
		for j := at; j < min(at+5+r.Intn(2), len(b)); j++ {
			b[j] = 0xff
		}
		out = append(out, b)
	}
	return out
}

// TestShallowKmsg compares full and shallow decodes of the kmsg differential test's messages
// (every API key, version and direction, random values) and of damaged copies of them.
func TestShallowKmsg(t *testing.T) {
	full := testCodec(t)
	shallow := testCodec(t)
	shallow.Shallow = true
	cases, metadata := 0, 0
	var fullNodes, shallowNodes int
	eachKmsgMessage(func(key, v int16, response bool) {
		for s := 0; s < *kmsgSeeds; s++ {
			seed := int64(key)*100000 + int64(v)*100 + int64(s)*2 + map[bool]int64{false: 0, true: 1}[response]
			_, _, fr := kmsgFrame(key, v, response, seed)
			where := fmt.Sprintf("%s v%d response=%v seed %d", kmsg.NameForKey(key), v, response, seed)
			f, sh := shallowPair(full, shallow, fr, response, key, v)
			if d := shallowDiff(f, sh, &TopicNames{}, &TopicNames{}); d != "" {
				t.Fatalf("%s:\n%s\nframe %x", where, d, fr)
			}
			cases++
			fn, sn := NodeCount(f), NodeCount(sh)
			fullNodes, shallowNodes = fullNodes+fn, shallowNodes+sn
			if sn > fn {
				t.Fatalf("%s: the shallow tree has %d nodes, the full one %d", where, sn, fn)
			}
			if key == 3 && response {
				metadata++
				if sn >= fn {
					t.Fatalf("%s: the shallow tree has %d nodes, the full one %d", where, sn, fn)
				}
			}
			for i, bad := range mangle(fr, rand.New(rand.NewSource(seed))) {
				f, sh := shallowPair(full, shallow, bad, response, key, v)
				if d := shallowDiff(f, sh, &TopicNames{}, &TopicNames{}); d != "" {
					t.Fatalf("%s, damaged copy %d:\n%s\nframe %x", where, i, d, bad)
				}
				cases++
			}
		}
	})
	if metadata == 0 {
		t.Fatal("no Metadata response")
	}
	t.Logf("%d frames; %d nodes in full trees, %d in shallow ones", cases, fullNodes, shallowNodes)
}

// TestShallowSkipsWithoutAllocating: the fields a shallow decode does not keep cost no
// allocation, however many there are.
func TestShallowSkipsWithoutAllocating(t *testing.T) {
	resp := kmsg.NewPtrDescribeClusterResponse()
	resp.Version = 1
	resp.ClusterID = "cluster"
	for i := 0; i < 1000; i++ {
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port = int32(i), fmt.Sprintf("broker-%d.example.com", i), 9092
		rack := "rack-" + strconv.Itoa(i%3)
		b.Rack = &rack
		resp.Brokers = append(resp.Brokers, b)
	}
	fr := frame(60, 1, true, true, 1, resp.AppendTo(nil))
	c := testCodec(t)
	full := testing.AllocsPerRun(20, func() { c.DecodeResponse(fr, 60, 1) })
	c.Shallow = true
	var m *Message
	shallow := testing.AllocsPerRun(20, func() { m = c.DecodeResponse(fr, 60, 1) })
	if len(m.Warnings) > 0 {
		t.Fatal(m.Warnings)
	}
	t.Logf("allocations: full %.0f, shallow %.0f; nodes: %d", full, shallow, NodeCount(m))
	if shallow > 10 {
		t.Errorf("a shallow decode made %.0f allocations (a full one %.0f)", shallow, full)
	}
	if Find(m.Fields, "Brokers") != nil || Find(m.Fields, "ErrorCode") == nil {
		t.Errorf("shallow tree: Brokers %v, ErrorCode %v", Find(m.Fields, "Brokers"), Find(m.Fields, "ErrorCode"))
	}
}

// TestShallowPlans checks the kept rule on a few definitions.
func TestShallowPlans(t *testing.T) {
	c := testCodec(t)
	kept := func(key int16, response bool) []string {
		a := c.Schemas.API(key)
		m := a.Request
		if response {
			m = a.Response
		}
		p := c.shallowPlan(m.Body)
		var out []string
		var walk func(p *shallowPlan, fields []*schema.Field, prefix string)
		walk = func(p *shallowPlan, fields []*schema.Field, prefix string) {
			for i, f := range fields {
				if !p.keep[i] {
					continue
				}
				out = append(out, prefix+f.Name)
				if p.sub[i] != nil {
					walk(p.sub[i], f.Struct.Fields, prefix+f.Name+".")
				}
			}
		}
		walk(p, m.Body.Fields, "")
		return out
	}
	for _, tc := range []struct {
		key      int16
		response bool
		want     string
	}{
		{3, true, "Topics Topics.ErrorCode Topics.Name Topics.TopicId Topics.Partitions Topics.Partitions.ErrorCode Topics.Partitions.PartitionIndex ErrorCode"},
		{0, false, "Acks TopicData TopicData.Name TopicData.TopicId TopicData.PartitionData TopicData.PartitionData.Index TopicData.PartitionData.Records"},
		{18, false, "ClientSoftwareName ClientSoftwareVersion"},
		{10, false, "Key KeyType CoordinatorKeys"},
		{36, false, "AuthBytes"},
		{60, true, "ErrorCode"},
	} {
		if got := strings.Join(kept(tc.key, tc.response), " "); got != tc.want {
			t.Errorf("key %d response=%v keeps %s, want %s", tc.key, tc.response, got, tc.want)
		}
	}
}

// TestShallowSteps: a shallow decode passes over a run of skipped fields of fixed size in one
// step, as the fields in the body at each version make it, and reads a kept field of fixed size
// (its size after "kept") without the general path.
func TestShallowSteps(t *testing.T) {
	c := testCodec(t)
	topics := c.Schemas.API(KeyFetch).Request.Body.Fields
	i := slices.IndexFunc(topics, func(f *schema.Field) bool { return f.Name == "Topics" })
	topic := topics[i].Struct
	j := slices.IndexFunc(topic.Fields, func(f *schema.Field) bool { return f.Name == "Partitions" })
	s := topic.Fields[j].Struct
	p := c.shallowPlan(c.Schemas.API(KeyFetch).Request.Body).sub[i].sub[j]
	for _, tc := range []struct {
		version int16
		want    string
	}{
		// v18: Partition kept (4 bytes); CurrentLeaderEpoch, FetchOffset, LastFetchedEpoch,
		// LogStartOffset and PartitionMaxBytes skipped (4+8+4+8+4 bytes); ReplicaDirectoryId
		// tagged.
		{18, "Partition kept 4; CurrentLeaderEpoch..PartitionMaxBytes 28"},
		// v4: FetchOffset and PartitionMaxBytes only, the fields between not in the body.
		{4, "Partition kept 4; FetchOffset..PartitionMaxBytes 12"},
	} {
		var got []string
		for _, st := range p.stepsAt(tc.version) {
			step := s.Fields[st.first].Name
			if st.last-st.first > 1 {
				step += ".." + s.Fields[st.last-1].Name
			}
			if st.skip > 0 {
				step += " " + strconv.Itoa(st.skip)
			}
			if st.fixed > 0 {
				step += " kept " + strconv.Itoa(st.fixed)
			}
			got = append(got, step)
		}
		if g := strings.Join(got, "; "); g != tc.want {
			t.Errorf("v%d: steps %s, want %s", tc.version, g, tc.want)
		}
	}
}

// TestShallowConcurrent: the plans are made once, safely, by whichever decode comes first.
func TestShallowConcurrent(t *testing.T) {
	c := testCodec(t)
	c.Shallow = true
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, fr := kmsgFrame(3, 12, true, int64(g))
			if m := c.DecodeResponse(fr, 3, 12); len(m.Warnings) > 0 {
				t.Error(m.Warnings)
			}
		}()
	}
	wg.Wait()
}

// TestShallowWarnings: malformed fields that a shallow decode skips give the warnings of a full
// decode, at the same offsets.
func TestShallowWarnings(t *testing.T) {
	full := testCodec(t)
	shallow := testCodec(t)
	shallow.Shallow = true
	// A Fetch v12 request whose ClusterId (tagged, not kept) says it has one byte more than
	// its string.
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 12
	fetch.ClusterID = strp("abc")
	body := fetch.AppendTo(nil)
	tail := []byte{1, 0, 4, 4, 'a', 'b', 'c'}
	if !strings.HasSuffix(string(body), string(tail)) {
		t.Fatalf("Fetch v12 request ends %x", body[len(body)-7:])
	}
	body = append(body[:len(body)-len(tail)], 1, 0, 5, 4, 'a', 'b', 'c', 0)
	// A DescribeCluster v0 response whose ErrorMessage (not kept) has a 6-byte length.
	cluster := []byte{0, 0, 0, 0, 0, 0, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 0, 0, 0, 0}
	// A Fetch v18 request of one topic and partition, cut 3 bytes into its FetchOffset.
	fetch18 := kmsg.NewPtrFetchRequest()
	fetch18.Version = 18
	ft := kmsg.NewFetchRequestTopic()
	ft.Partitions = append(ft.Partitions, kmsg.NewFetchRequestTopicPartition())
	fetch18.Topics = append(fetch18.Topics, ft)
	body18 := fetch18.AppendTo(nil)
	// The partition's fields start after the request's 21 bytes of fixed fields, the topics'
	// count, the topic's id and the partitions' count; FetchOffset after its Partition and
	// CurrentLeaderEpoch.
	cut := 21 + 1 + 16 + 1 + 4 + 4 + 3
	run := frame(1, 18, true, false, 1, body18[:cut])
	for _, tc := range []struct {
		name     string
		frame    []byte
		response bool
		key, ver int16
		want     string
	}{
		{"tagged field with bytes left", frame(1, 12, true, false, 1, body), false, 1, 12, "tagged field ClusterId: 1 of its 5 bytes not decoded"},
		{"varint too long", frame(60, 0, true, true, 1, cluster), true, 60, 0, "ErrorMessage (uvarint) is longer than 5 bytes"},
		// Cut inside the run of fields skipped after the first partition's number: the field
		// that does not fit is named, as a full decode names it.
		{"run cut short", run, false, 1, 18, "FetchOffset (int64) needs 8 bytes, 3 left"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, sh := shallowPair(full, shallow, tc.frame, tc.response, tc.key, tc.ver)
			if !strings.Contains(fmt.Sprint(f.Warnings), tc.want) {
				t.Fatalf("full decode: warnings %v, want %q", f.Warnings, tc.want)
			}
			if d := shallowDiff(f, sh, &TopicNames{}, &TopicNames{}); d != "" {
				t.Error(d)
			}
		})
	}
}
