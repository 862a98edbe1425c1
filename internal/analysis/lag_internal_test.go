package analysis

import (
	"reflect"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

func TestInFlight(t *testing.T) {
	type op struct {
		take   bool
		stream int
		id     int32
		v      string // added, or wanted from take ("" : none)
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{"pairs", []op{{false, 1, 7, "a"}, {true, 1, 7, "a"}, {true, 1, 7, ""}}},
		{"by stream", []op{{false, 1, 7, "a"}, {false, 2, 7, "b"}, {true, 2, 7, "b"}, {true, 1, 7, "a"}}},
		{"a response ends the requests before its own", []op{{false, 1, 1, "a"}, {false, 1, 2, "b"}, {false, 1, 3, "c"},
			{true, 1, 2, "b"}, {true, 1, 1, ""}, {true, 1, 3, "c"}}},
		{"no request", []op{{true, 1, 9, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f inFlight[string]
			for i, o := range tt.ops {
				if !o.take {
					f.add(o.stream, o.id, o.v)
					continue
				}
				v, ok := f.take(o.stream, o.id)
				if v != o.v || ok != (o.v != "") {
					t.Errorf("op %d: take(%d, %d) = %q, %v; want %q", i, o.stream, o.id, v, ok, o.v)
				}
			}
		})
	}
}

func TestInFlightBounded(t *testing.T) {
	var f inFlight[int]
	for i := range 10 * maxInFlight {
		f.add(1, int32(i), i)
	}
	if n := len(f.byStream[1]); n != maxInFlight {
		t.Errorf("%d requests kept, want %d", n, maxInFlight)
	}
	if _, ok := f.take(1, 0); ok {
		t.Error("the oldest request is still kept")
	}
	if v, ok := f.take(1, int32(10*maxInFlight-1)); !ok || v != 10*maxInFlight-1 {
		t.Errorf("newest: %d, %v", v, ok)
	}
}

func TestHistogramPercentile(t *testing.T) {
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name          string
		us            []latencyCount // microseconds, records: as appended
		p50, p99, max time.Duration
	}{
		{"one", []latencyCount{{1000, 1}}, ms(1), ms(1), ms(1)},
		{"weights", []latencyCount{{1000, 3}, {2000, 1}}, ms(1), ms(2), ms(2)},
		{"even", []latencyCount{{1000, 1}, {2000, 1}}, ms(1), ms(2), ms(2)},
		{"hundred", []latencyCount{{1000, 99}, {5000, 1}}, ms(1), ms(1), ms(5)},
		{"hundred and one", []latencyCount{{1000, 99}, {5000, 2}}, ms(1), ms(5), ms(5)},
		{"repeated, unsorted", []latencyCount{{5000, 1}, {1000, 50}, {5000, 1}, {1000, 49}}, ms(1), ms(5), ms(5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l latencies
			for _, c := range tt.us {
				l.add(c.us, c.n)
			}
			h := newHistogram(&l)
			got := []time.Duration{h.percentile(0.5), h.percentile(0.99), h.percentile(1)}
			if want := []time.Duration{tt.p50, tt.p99, tt.max}; !reflect.DeepEqual(got, want) {
				t.Errorf("p50, p99, max = %v, want %v", got, want)
			}
		})
	}
}

// TestLatenciesMerge checks that latencies added past the merge threshold keep their counts.
func TestLatenciesMerge(t *testing.T) {
	var l latencies
	const adds, distinct = 50000, 7
	for i := range adds {
		l.add(int64(i%distinct), 1)
	}
	if len(l.seen) > 2*4096 {
		t.Errorf("%d entries kept for %d latencies", len(l.seen), distinct)
	}
	h := newHistogram(&l)
	if want := []int64{0, 1, 2, 3, 4, 5, 6}; !reflect.DeepEqual(h.us, want) {
		t.Errorf("latencies %v, want %v", h.us, want)
	}
	for i, c := range h.count {
		if want := int64(adds/distinct) + b2i(i < adds%distinct); c != want {
			t.Errorf("latency %d: %d records, want %d", h.us[i], c, want)
		}
	}
}

// Messages built by hand, for what real captures do not show.

func n(name string, v any, kids ...*codec.Node) *codec.Node {
	t := wire.Int64
	switch x := v.(type) {
	case int:
		v = int64(x)
	case string:
		t = wire.String
	case nil:
		t = wire.Struct
	}
	return &codec.Node{Name: name, Type: t, Value: v, Children: kids}
}

func array(name string, kids ...*codec.Node) *codec.Node {
	return &codec.Node{Name: name, Type: wire.Array, Value: int64(len(kids)), Children: kids}
}

func batch(base, count int64, control bool) *codec.Node {
	attrs := int64(0)
	if control {
		attrs = 1 << 5
	}
	return &codec.Node{Name: "batch", Type: wire.RecordBatch, Children: []*codec.Node{
		n("baseOffset", base), n("attributes", attrs), n("lastOffsetDelta", count-1), n("recordsCount", count)}}
}

func entry(stream int, at time.Duration, request bool, key int16, corr int32, client string, body ...*codec.Node) *model.Entry {
	m := &codec.Message{APIKey: key, CorrelationID: corr, Response: !request, Fields: body}
	if request {
		m.ClientID = &client
	}
	return &model.Entry{Stream: stream, Time: time.Unix(0, 0).Add(at), Request: request, Msg: m}
}

// produce is a Produce request of count records to topic t, partition 0, and its response.
func produce(stream int, at time.Duration, corr int32, count, base, code int64) []*model.Entry {
	return []*model.Entry{
		entry(stream, at, true, codec.KeyProduce, corr, "producer",
			array("TopicData", n("", nil, n("Name", "t"), array("PartitionData",
				n("", nil, n("Index", 0), &codec.Node{Name: "Records", Type: wire.Records, Children: []*codec.Node{batch(0, count, false)}}))))),
		entry(stream, at+time.Millisecond, false, codec.KeyProduce, corr, "",
			array("Responses", n("", nil, n("Name", "t"), array("PartitionResponses",
				n("", nil, n("Index", 0), n("ErrorCode", code), n("BaseOffset", base)))))),
	}
}

// fetch is a Fetch request by client and its response, which holds batches of topic t,
// partition 0, at time at.
func fetch(stream int, at time.Duration, corr int32, client string, batches ...*codec.Node) []*model.Entry {
	return []*model.Entry{
		entry(stream, at-time.Millisecond, true, codec.KeyFetch, corr, client),
		entry(stream, at, false, codec.KeyFetch, corr, "",
			array("Responses", n("", nil, n("Topic", "t"), array("Partitions",
				n("", nil, n("PartitionIndex", 0), n("ErrorCode", 0), &codec.Node{Name: "Records", Type: wire.Records, Children: batches}))))),
	}
}

func TestE2ECases(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		entries [][]*model.Entry
		want    [][]any
	}{
		{"each consumer once", [][]*model.Entry{produce(1, 0, 1, 3, 10, 0), fetch(2, 5*ms, 1, "a", batch(10, 3, false)),
			fetch(2, 6*ms, 2, "a", batch(10, 3, false)), fetch(3, 9*ms, 1, "b", batch(10, 3, false))},
			[][]any{{"t", int64(0), "a", int64(3), 5 * ms, 5 * ms, 5 * ms}, {"t", int64(0), "b", int64(3), 9 * ms, 9 * ms, 9 * ms}}},
		{"a batch delivers part of a produce", [][]*model.Entry{produce(1, 0, 1, 4, 0, 0), fetch(2, 5*ms, 1, "a", batch(0, 1, false)),
			fetch(2, 7*ms, 2, "a", batch(1, 3, false))},
			[][]any{{"t", int64(0), "a", int64(4), 7 * ms, 7 * ms, 7 * ms}}},
		{"control batches deliver nothing", [][]*model.Entry{produce(1, 0, 1, 2, 0, 0), fetch(2, 5*ms, 1, "a", batch(0, 2, true))}, nil},
		{"a produce refused", [][]*model.Entry{produce(1, 0, 1, 2, -1, 6), fetch(2, 5*ms, 1, "a", batch(0, 2, false))}, nil},
		{"an offset at the end of int64", [][]*model.Entry{produce(1, 0, 1, 2, 1<<63-1, 0), fetch(2, 5*ms, 1, "a", batch(1<<63-1, 2, false))}, nil},
		{"a retried batch keeps its first time", [][]*model.Entry{produce(1, 0, 1, 2, 0, 0), produce(1, 3*ms, 2, 2, 0, 0),
			fetch(2, 5*ms, 1, "a", batch(0, 2, false))},
			[][]any{{"t", int64(0), "a", int64(2), 5 * ms, 5 * ms, 5 * ms}}},
		{"a fetch not captured", [][]*model.Entry{produce(1, 0, 1, 2, 0, 0), fetch(2, 5*ms, 1, "a", batch(0, 2, false))[1:]}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := NewE2E()
			for _, es := range tt.entries {
				for _, e := range es {
					x.Add(e)
				}
			}
			if got := x.Tables()[0].Rows; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rows %v, want %v", got, tt.want)
			}
		})
	}
}

// fetchRequest is a Fetch request by client c, naming partition 0 of topic t at offset (none
// when offset < 0).
func fetchRequest(stream int, corr int32, st *codec.SessionStep, offset int64) *model.Entry {
	var body []*codec.Node
	if offset >= 0 {
		body = append(body, array("Topics", n("", nil, n("Topic", "t"), array("Partitions", n("", nil, n("Partition", 0), n("FetchOffset", offset))))))
	}
	e := entry(stream, 0, true, codec.KeyFetch, corr, "c", body...)
	e.Session = st
	return e
}

// fetchResponse is a Fetch response with its error, and the high watermark and error of
// partition 0 of topic t (none when hw is 0).
func fetchResponse(stream int, corr int32, st *codec.SessionStep, code, hw, partitionCode int64) *model.Entry {
	body := []*codec.Node{n("ErrorCode", code)}
	if hw != 0 {
		body = append(body, array("Responses", n("", nil, n("Topic", "t"), array("Partitions",
			n("", nil, n("PartitionIndex", 0), n("ErrorCode", partitionCode), n("HighWatermark", hw), n("LastStableOffset", hw))))))
	}
	e := entry(stream, 0, false, codec.KeyFetch, corr, "", body...)
	e.Session = st
	return e
}

func TestLagCases(t *testing.T) {
	open := &codec.SessionStep{Action: codec.SessionOpen}
	opened := &codec.SessionStep{ID: 9, Action: codec.SessionOpen, Response: true}
	incr := func(epoch int32) *codec.SessionStep {
		return &codec.SessionStep{ID: 9, Epoch: epoch, Action: codec.SessionIncremental}
	}
	tests := []struct {
		name    string
		entries []*model.Entry
		want    []any // the row of client c, topic t, partition 0 (nil: none)
	}{
		{"full fetch", []*model.Entry{fetchRequest(1, 1, nil, 5), fetchResponse(1, 1, nil, 0, 8, 0)},
			[]any{"c", "t", int64(0), int64(1), int64(5), int64(8), int64(3), int64(3), int64(8)}},
		{"partition error", []*model.Entry{fetchRequest(1, 1, nil, 5), fetchResponse(1, 1, nil, 0, -1, 1)},
			[]any{"c", "t", int64(0), int64(1), int64(5), nil, nil, nil, nil}},
		{"no request", []*model.Entry{fetchResponse(1, 1, nil, 0, 8, 0)}, nil},
		{"offset carried", []*model.Entry{fetchRequest(1, 1, open, 5), fetchResponse(1, 1, opened, 0, 8, 0),
			fetchRequest(1, 2, incr(1), -1), fetchResponse(1, 2, incr(1), 0, 10, 0)},
			[]any{"c", "t", int64(0), int64(2), int64(5), int64(10), int64(5), int64(5), int64(10)}},
		{"high watermark carried", []*model.Entry{fetchRequest(1, 1, open, 5), fetchResponse(1, 1, opened, 0, 8, 0),
			fetchRequest(1, 2, incr(1), 8), fetchResponse(1, 2, incr(1), 0, 0, 0)},
			[]any{"c", "t", int64(0), int64(2), int64(8), int64(8), int64(0), int64(3), int64(8)}},
		{"session on another stream", []*model.Entry{fetchRequest(1, 1, open, 5), fetchResponse(1, 1, opened, 0, 8, 0),
			fetchRequest(2, 2, incr(1), -1), fetchResponse(2, 2, incr(1), 0, 0, 0)},
			[]any{"c", "t", int64(0), int64(1), int64(5), int64(8), int64(3), int64(3), int64(8)}},
		{"session not found", []*model.Entry{fetchRequest(1, 1, open, 5), fetchResponse(1, 1, opened, 0, 8, 0),
			fetchRequest(1, 2, incr(1), -1), fetchResponse(1, 2, incr(1), int64(codec.ErrFetchSessionIDNotFound), 0, 0),
			fetchRequest(1, 3, incr(2), -1), fetchResponse(1, 3, incr(2), 0, 0, 0)},
			[]any{"c", "t", int64(0), int64(1), int64(5), int64(8), int64(3), int64(3), int64(8)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLag()
			for _, e := range tt.entries {
				l.Add(e)
			}
			var want [][]any
			if tt.want != nil {
				want = [][]any{tt.want}
			}
			if got := l.Tables()[0].Rows; !reflect.DeepEqual(got, want) {
				t.Errorf("rows %v, want %v", got, want)
			}
		})
	}
}
