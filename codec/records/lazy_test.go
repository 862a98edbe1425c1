package records

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
)

// lazyFrame is a Produce v9 request of three partitions whose records warn (a CRC mismatch in
// the first and the third), with warnings of the interpreter before them (a mis-stated size
// prefix) and after them (bytes after the body): the order of the warnings is tested.
func lazyFrame(t *testing.T) []byte {
	t.Helper()
	one, _ := batchSpec{baseTimestamp: t0, codec: "zstd", records: plainRecords(3)}.build(t)
	two, _ := batchSpec{baseOffset: 3, baseTimestamp: t0, codec: "none", records: headerRecords()}.build(t)
	three, _ := batchSpec{baseOffset: 9, baseTimestamp: t0, codec: "gzip", records: plainRecords(2)}.build(t)
	one[30] ^= 1 // inside the CRC's bytes: a mismatch
	three[25] ^= 1
	req := kmsg.ProduceRequest{Version: 9, Acks: -1, TimeoutMillis: 5000, Topics: []kmsg.ProduceRequestTopic{{
		Topic: "orders", Partitions: []kmsg.ProduceRequestTopicPartition{
			{Partition: 0, Records: one}, {Partition: 1, Records: two}, {Partition: 2, Records: three}}}}}
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kdissect")).AppendRequest(nil, &req, 7)
	return append(frame, 0xde, 0xad) // two bytes the size prefix does not count
}

// treeAndWarnings writes every node with its Head, and the warnings, one per line; children
// come from children (the tree's own, or expanded as a renderer does).
func treeAndWarnings(m *codec.Message, children func(*codec.Node) []*codec.Node) string {
	var b strings.Builder
	var walk func(ns []*codec.Node, depth int)
	walk = func(ns []*codec.Node, depth int) {
		for _, n := range ns {
			fmt.Fprintf(&b, "%*s%s %s @%d+%d head %d = %v %q\n", 2*depth, "", n.Name, n.Type, n.Offset, n.Size, n.Head(), n.Value, n.Note)
			walk(children(n), depth+1)
		}
	}
	walk(m.Fields, 0)
	for _, w := range m.Warnings {
		b.WriteString(w.String() + "\n")
	}
	return b.String()
}

// TestLazyRecords: a message decoded with LazyRecords, its records expanded as a renderer
// expands them (twice, as the diagram does, into reused scratch nodes) or all at once
// (Expand), gives the tree and the warnings, in the same order, of a decode without it.
func TestLazyRecords(t *testing.T) {
	frame := lazyFrame(t)
	eager := interpreter(t)
	own := func(n *codec.Node) []*codec.Node { return n.Children }
	em := eager.DecodeRequest(frame)
	want := treeAndWarnings(em, own)
	if strings.Count(want, "mismatch") != 2 || !strings.Contains(want, "message_size says") || !strings.Contains(want, "after the end") {
		t.Fatalf("the frame does not warn as the test needs:\n%s", want)
	}

	lazy := interpreter(t)
	lazy.LazyRecords = true
	m := lazy.DecodeRequest(frame)
	if !m.Unexpanded() {
		t.Fatal("no records field left unexpanded")
	}
	if r := codec.Find(m.Fields, "Records"); r == nil || !r.Unexpanded() || len(r.Children) > 0 || r.Head() != int(r.PrefixSize) {
		t.Fatalf("records field: %+v", r)
	}
	if strings.Contains(fmt.Sprint(m.Warnings), "mismatch") {
		t.Fatalf("records warned before they were expanded: %v", m.Warnings)
	}
	var scratch codec.Nodes
	for pass := range 2 {
		// Each field is written before the next is expanded: scratch is reset after each.
		var b strings.Builder
		var walk func(ns []*codec.Node, depth int)
		walk = func(ns []*codec.Node, depth int) {
			for _, n := range ns {
				fmt.Fprintf(&b, "%*s%s %s @%d+%d head %d = %v %q\n", 2*depth, "", n.Name, n.Type, n.Offset, n.Size, n.Head(), n.Value, n.Note)
				kids, isLazy := m.ExpandRecords(n, &scratch)
				walk(kids, depth+1)
				if isLazy {
					scratch.Reset()
				}
			}
		}
		walk(m.Fields, 0)
		for _, w := range m.Warnings {
			b.WriteString(w.String() + "\n")
		}
		if got := b.String(); got != want {
			t.Fatalf("pass %d, expanded as shown:\n%s\nwant\n%s", pass, got, want)
		}
	}

	m = lazy.DecodeRequest(frame)
	m.Expand()
	if m.Unexpanded() {
		t.Fatal("Expand left fields unexpanded")
	}
	if got := treeAndWarnings(m, own); got != want {
		t.Fatalf("after Expand:\n%s\nwant\n%s", got, want)
	}
}

// evictions records what a message gives back of its frame (codec.Paged).
type evictions struct {
	frame []byte
	got   [][2]int // frame offsets: start, end
}

func (e *evictions) Evict(b []byte) {
	off := cap(e.frame) - cap(b) // b lies in frame: its capacity runs to the end of frame's
	e.got = append(e.got, [2]int{off, off + len(b)})
}

// eachRecordTree is treeAndWarnings for m read with EachRecord into scratch: each records
// field m holds unexpanded is walked a batch at a time, and batch, when not nil, sees each
// batch as it is handed over.
func eachRecordTree(m *codec.Message, scratch *codec.Nodes, batch func(*codec.Node)) string {
	var b strings.Builder
	var walk func(n *codec.Node, depth int)
	walk = func(n *codec.Node, depth int) {
		fmt.Fprintf(&b, "%*s%s %s @%d+%d head %d = %v %q\n", 2*depth, "", n.Name, n.Type, n.Offset, n.Size, n.Head(), n.Value, n.Note)
		if n.Unexpanded() {
			m.EachRecord(n, scratch, func(c *codec.Node) {
				if batch != nil {
					batch(c)
				}
				walk(c, depth+1)
			})
			return
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	for _, n := range m.Fields {
		walk(n, 0)
	}
	for _, w := range m.Warnings {
		b.WriteString(w.String() + "\n")
	}
	return b.String()
}

// TestEachRecord: records fields expanded a batch at a time (codec.Message.EachRecord), the nodes
// of each batch given back before the next, give the tree and the warnings of a decode without
// LazyRecords; a frame in paged memory gets the bytes of each batch back, in order, once it is
// handed over, and no byte of anything else.
func TestEachRecord(t *testing.T) {
	one, _ := batchSpec{baseTimestamp: t0, codec: "zstd", records: plainRecords(3)}.build(t)
	two, _ := batchSpec{baseOffset: 3, baseTimestamp: t0, codec: "none", records: headerRecords()}.build(t)
	three, _ := batchSpec{baseOffset: 9, baseTimestamp: t0, codec: "gzip", records: plainRecords(2)}.build(t)
	one[30] ^= 1 // a CRC mismatch
	req := kmsg.ProduceRequest{Version: 9, Acks: -1, TimeoutMillis: 5000, Topics: []kmsg.ProduceRequestTopic{{
		Topic: "orders", Partitions: []kmsg.ProduceRequestTopicPartition{
			{Partition: 0, Records: append(append([]byte(nil), one...), two...)}, {Partition: 1, Records: three}}}}}
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kdissect")).AppendRequest(nil, &req, 7)
	want := treeAndWarnings(interpreter(t).DecodeRequest(frame), func(n *codec.Node) []*codec.Node { return n.Children })

	lazy := interpreter(t)
	lazy.LazyRecords = true
	m := lazy.DecodeRequest(frame)
	var batches [][2]int
	var scratch codec.Nodes
	if got := eachRecordTree(m, &scratch, func(c *codec.Node) { batches = append(batches, [2]int{c.Offset, c.Offset + c.Size}) }); got != want {
		t.Fatalf("expanded a batch at a time:\n%s\nwant\n%s", got, want)
	}
	if len(batches) != 3 {
		t.Fatalf("%d batches handed over, want 3", len(batches))
	}

	// The same frame in paged memory: its batches come back, and nothing else.
	ev := &evictions{frame: frame}
	cv := lazy.NewConversation()
	cv.SetPaged(ev)
	m = cv.ClientFrame(frame, nil).Msg
	if len(ev.got) != 0 {
		t.Fatalf("bytes given back before the records were written: %v", ev.got)
	}
	for _, n := range m.Fields {
		codec.Walk([]*codec.Node{n}, func(n *codec.Node, _ int) bool {
			m.EachRecord(n, &scratch, func(*codec.Node) {})
			return true
		})
	}
	if fmt.Sprint(ev.got) != fmt.Sprint(batches) {
		t.Errorf("given back %v, want the batches %v", ev.got, batches)
	}

	// Decoded at once (not lazily), a records field is given back once decoded.
	eager := interpreter(t).NewConversation()
	ev = &evictions{frame: frame}
	eager.SetPaged(ev)
	eager.ClientFrame(frame, nil)
	if len(ev.got) != 2 || ev.got[0][0] != batches[0][0] || ev.got[0][1] != batches[1][1] || ev.got[1] != batches[2] {
		t.Errorf("decoded at once, given back %v; want the two records fields of %v", ev.got, batches)
	}
}

// TestEachRecordOneBuffer: a records field read a batch at a time decompresses each batch
// into the buffer of the one before, whatever the codec (codec.Nodes.InflateBuffer), and
// shows the same tree as a decode at once. A decode at once keeps a buffer per batch.
func TestEachRecordOneBuffer(t *testing.T) {
	var records []byte
	for i, c := range []string{"zstd", "gzip", "lz4", "snappy", "zstd"} {
		b, _ := batchSpec{baseOffset: int64(10 * i), baseTimestamp: t0, codec: c, records: plainRecords(4 - i%2)}.build(t)
		records = append(records, b...)
	}
	req := kmsg.ProduceRequest{Version: 9, Acks: -1, TimeoutMillis: 5000, Topics: []kmsg.ProduceRequestTopic{{
		Topic: "orders", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: records}}}}}
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kdissect")).AppendRequest(nil, &req, 7)
	eager := interpreter(t).DecodeRequest(frame)
	want := treeAndWarnings(eager, func(n *codec.Node) []*codec.Node { return n.Children })
	if got := len(buffersOf(eager.Fields)); got != 5 {
		t.Fatalf("decoded at once: the values lie in %d buffers, want one per batch, 5", got)
	}

	lazy := interpreter(t)
	lazy.LazyRecords = true
	m := lazy.DecodeRequest(frame)
	var scratch codec.Nodes
	buffers := map[*byte]bool{}
	got := eachRecordTree(m, &scratch, func(c *codec.Node) {
		for p := range buffersOf([]*codec.Node{c}) {
			buffers[p] = true
		}
	})
	if got != want {
		t.Fatalf("expanded a batch at a time:\n%s\nwant\n%s", got, want)
	}
	if len(buffers) != 1 {
		t.Errorf("a batch at a time: the values lie in %d buffers, want 1", len(buffers))
	}
}

// buffersOf returns the buffers that the record values under nodes lie in, each named by the
// address of its last byte.
func buffersOf(nodes []*codec.Node) map[*byte]bool {
	bufs := map[*byte]bool{}
	codec.Walk(nodes, func(n *codec.Node, _ int) bool {
		if v, ok := n.Value.([]byte); ok && n.Decompressed && n.Name == "value" && cap(v) > 0 {
			bufs[&v[:cap(v)][cap(v)-1]] = true
		}
		return true
	})
	return bufs
}
