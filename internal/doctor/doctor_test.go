package doctor

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// request is a request of api with correlation id corr from client on stream, in frame, at
// frame milliseconds.
func request(frame, stream int, api int16, corr int32, client string) *model.Entry {
	return &model.Entry{Frame: frame, FirstFrame: frame, Stream: stream, Request: true, Dst: fmt.Sprint("broker:", 9092),
		Time: t0.Add(time.Duration(frame) * time.Millisecond),
		Msg:  &codec.Message{APIKey: api, CorrelationID: corr, ClientID: &client}}
}

// response answers corr on stream in frame, with body fields.
func response(frame, stream int, api int16, corr int32, body ...*codec.Node) *model.Entry {
	return &model.Entry{Frame: frame, FirstFrame: frame, Stream: stream, Time: t0.Add(time.Duration(frame) * time.Millisecond),
		Msg: &codec.Message{Response: true, APIKey: api, CorrelationID: corr, Fields: body}}
}

// event is an entry or a notice told to the doctor.
type event struct {
	e *model.Entry
	n *model.Notice
}

func entries(es ...*model.Entry) []event {
	out := make([]event, len(es))
	for i, e := range es {
		out[i] = event{e: e}
	}
	return out
}

// TestChecks: each check fires on what it is about, with its severity and the frames of it, and
// not below its threshold.
func TestChecks(t *testing.T) {
	throttle := &codec.Node{Name: "ThrottleTimeMs", Value: int64(250)}
	var storm, calm, churn []*model.Entry
	for i := range MetadataStormMin {
		storm = append(storm, request(1+i*10, 0, codec.KeyMetadata, int32(i), "app")) // 100 per second
		calm = append(calm, request(1+i*2000, 0, codec.KeyMetadata, int32(i), "app")) // 1 every 2 seconds
	}
	for i := range ChurnMin {
		churn = append(churn, request(1+i, i, codec.KeyApiVersions, 0, "app"))
	}
	for _, c := range []struct {
		name   string
		events []event
		want   string // "id severity [frames]" of each finding
	}{
		{"nothing", nil, ""},
		{"answered in order", entries(request(1, 0, codec.KeyFetch, 1, "c"), request(2, 0, codec.KeyFetch, 2, "c"),
			response(3, 0, codec.KeyFetch, 1), response(4, 0, codec.KeyFetch, 2)), ""},
		{"a request skipped", entries(request(1, 0, codec.KeyFetch, 1, "c"), request(2, 0, codec.KeyFetch, 2, "c"),
			response(3, 0, codec.KeyFetch, 2)), "unanswered warning [1]"},
		{"the last request in flight", entries(request(1, 0, codec.KeyFetch, 1, "c"), response(2, 0, codec.KeyFetch, 1),
			request(3, 0, codec.KeyFetch, 2, "c")), ""},
		{"throttled", entries(request(1, 0, codec.KeyProduce, 1, "c"), response(2, 0, codec.KeyProduce, 1, throttle)),
			"throttled warning [2]"},
		{"bytes lost", []event{{n: &model.Notice{Frame: 7, Stream: 1, Time: t0, Text: "10 bytes lost (not captured) at stream offset 5"}}},
			"capture-loss warning [7]"},
		{"TLS", []event{{n: &model.Notice{Frame: 4, Stream: 0, Time: t0, Text: "TLS 1.3, cipher TLS_AES_128_GCM_SHA256: encrypted; pass --tls-keylog FILE to decrypt"}}},
			"tls-undecrypted warning [4]"},
		{"other notices", []event{{n: &model.Notice{Frame: 4, Text: "port 9092 taken as Kafka: ApiVersions v3 request"}}}, ""},
		{"metadata storm", entries(storm...), fmt.Sprintf("metadata-storm warning %v", frames(storm))},
		{"metadata every 2 seconds is no storm", entries(calm...), ""},
		{"a slow rebalance", rebalance(RebalanceSlow), fmt.Sprintf("rebalance-slow warning [1 2 3 %d]", 1+RebalanceSlow.Milliseconds())},
		{"a rebalance in time", rebalance(RebalanceSlow - time.Millisecond), ""},
		{"a rebalance storm", generations(RebalanceStormPerMinute+1, 5*time.Second),
			fmt.Sprintf("rebalance-storm warning %v", generationFrames(RebalanceStormPerMinute+1, 5*time.Second))},
		{"rebalances a minute apart", generations(RebalanceStormPerMinute+1, 6*time.Second), ""},
		// Two findings: the error, then what it means.
		{"a member removed", heartbeats(MemberGapMin, -1), fmt.Sprintf("errors warning [%[1]d] member-left-timeout warning [1 %[2]d %[1]d]",
			2+MemberGapMin.Milliseconds(), 1+MemberGapMin.Milliseconds())},
		{"a member unknown sooner", heartbeats(MemberGapMin-time.Millisecond, -1), fmt.Sprintf("errors warning [%d]", 1+MemberGapMin.Milliseconds())},
		{"a member unknown after leaving", heartbeats(MemberGapMin, codec.KeyLeaveGroup), fmt.Sprintf("errors warning [%d]", 2+MemberGapMin.Milliseconds())},
		{"a member heard of by its OffsetFetch", heartbeats(MemberGapMin, codec.KeyOffsetFetch), fmt.Sprintf("errors warning [%d]", 2+MemberGapMin.Milliseconds())},
		{"partitions without an owner", ownership(PartitionsUnownedMax - time.Millisecond),
			fmt.Sprintf("partitions-unowned warning [4 %d]", 4+PartitionsUnownedMax.Milliseconds())},
		{"partitions given again in time", ownership(PartitionsUnownedMax - 2*time.Millisecond), ""},
		{"lag growing", fetches([]int64{0, 0}, []int64{0, LagGrowingMin}), "consumer-lag-growing warning [2 4]"},
		{"lag growing less", fetches([]int64{0, 0}, []int64{0, LagGrowingMin - 1}), ""},
		{"a stalled consumer", fetches(repeat(5, StalledFetchesMin), repeat(6, StalledFetchesMin)),
			fmt.Sprintf("consumer-stalled warning %v", evens(StalledFetchesMin))},
		{"fewer fetches at one offset", fetches(repeat(5, StalledFetchesMin-1), repeat(6, StalledFetchesMin-1)), ""},
		{"fetches at one offset, nothing to read", fetches(repeat(6, StalledFetchesMin), repeat(6, StalledFetchesMin)), ""},
		{"a latency stall", stall(LatencyStallMin, 2), "latency-stall warning [6002 7002]"},
		{"a latency stall on one broker", stall(LatencyStallMin, 1), ""},
		{"latency up a little", stall(LatencyStallMin-time.Millisecond, 2), ""},
		{"a slow broker", outlier(time.Millisecond + LatencyOutlierMin), "latency-broker-outlier warning [2002]"},
		{"a broker a little slower", outlier(LatencyOutlierMin), ""},
		{"a sequence gap", produces([][2]int64{{0, 2}, {2, 2}, {6, 1}}), "producer-sequence-gap error [3]"},
		{"a batch sent again", produces([][2]int64{{0, 2}, {0, 2}, {2, 1}}), "producer-retries warning [1 2]"}, // its first sending, and the retry
		{"sequences in order", produces([][2]int64{{0, 2}, {2, 2}, {4, 1}}), ""},
		{"small batches", produces(ones(SmallBatchesMin)), fmt.Sprintf("producer-small-batches info %v", count(1, SmallBatchesMin))},
		{"fewer small batches", produces(ones(SmallBatchesMin - 1)), ""},
		{"connection churn", entries(churn...), fmt.Sprintf("connection-churn warning %v", frames(churn))},
		{"connections under the threshold", entries(churn[1:]...), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := New()
			for _, ev := range c.events {
				if ev.e != nil {
					d.Add(ev.e)
				} else {
					d.Notice(ev.n)
				}
			}
			var got []string
			for _, f := range d.Findings() {
				got = append(got, fmt.Sprintf("%s %s %v", f.ID, f.Severity, f.Evidence.Frames))
			}
			if fmt.Sprint(got) != fmt.Sprint(slices.DeleteFunc([]string{c.want}, func(s string) bool { return s == "" })) {
				t.Errorf("findings %q, want %q", got, c.want)
			}
		})
	}
}

// rebalance is a classic group's rebalance of one member, whose SyncGroup response comes
// after took.
func rebalance(took time.Duration) []event {
	str := func(name, v string) *codec.Node { return &codec.Node{Name: name, Value: v} }
	gen := &codec.Node{Name: "GenerationId", Value: int64(1)}
	join, sync := request(1, 0, codec.KeyJoinGroup, 1, "c"), request(3, 0, codec.KeySyncGroup, 2, "c")
	join.Msg.Fields = []*codec.Node{str("GroupId", "g")}
	sync.Msg.Fields = []*codec.Node{str("GroupId", "g"), gen, str("MemberId", "m")}
	return entries(join, response(2, 0, codec.KeyJoinGroup, 1, gen, str("MemberId", "m")),
		sync, response(1+int(took.Milliseconds()), 0, codec.KeySyncGroup, 2)) // the join was at 1 ms
}

// generations is n classic rebalances of a group of one member, every apart: a JoinGroup
// request, its response, a SyncGroup request and its response each, a millisecond apart.
func generations(n int, every time.Duration) []event {
	str := func(name, v string) *codec.Node { return &codec.Node{Name: name, Value: v} }
	var out []*model.Entry
	for i := range n {
		f := 1 + i*int(every.Milliseconds())
		gen := &codec.Node{Name: "GenerationId", Value: int64(i + 1)}
		join, sync := request(f, 0, codec.KeyJoinGroup, int32(2*i), "c"), request(f+2, 0, codec.KeySyncGroup, int32(2*i+1), "c")
		join.Msg.Fields = []*codec.Node{str("GroupId", "g")}
		sync.Msg.Fields = []*codec.Node{str("GroupId", "g"), gen, str("MemberId", "m")}
		out = append(out, join, response(f+1, 0, codec.KeyJoinGroup, int32(2*i), gen, str("MemberId", "m")),
			sync, response(f+3, 0, codec.KeySyncGroup, int32(2*i+1)))
	}
	return entries(out...)
}

// generationFrames are the frames of generations(n, every).
func generationFrames(n int, every time.Duration) []int {
	var out []int
	for i := range n {
		out = append(out, count(1+i*int(every.Milliseconds()), 4)...)
	}
	return out
}

// heartbeats is a member's Heartbeat (frame 1) answered, then after gap (from frame 1) another
// answered UNKNOWN_MEMBER_ID; with between an API key (not -1), a request of the member of that
// API (frame 3) between them.
func heartbeats(gap time.Duration, between int16) []event {
	member := func(e *model.Entry) *model.Entry {
		e.Facts = &codec.Facts{Groups: []string{"g"}, Members: []string{"m"}}
		return e
	}
	later := 1 + int(gap.Milliseconds())
	unknown := response(later+1, 0, codec.KeyHeartbeat, 3)
	unknown.Facts = &codec.Facts{Errors: []int16{25}}
	es := []*model.Entry{member(request(1, 0, codec.KeyHeartbeat, 1, "c")), response(2, 0, codec.KeyHeartbeat, 1)}
	if between >= 0 {
		es = append(es, member(request(3, 0, between, 2, "c")), response(4, 0, between, 2))
	}
	return entries(append(es, member(request(later, 0, codec.KeyHeartbeat, 3, "c")), unknown)...)
}

// ownership is a KIP-848 group where member a gets partitions 0 and 1 (frames 1, 2), then
// gives up 1 (3, 4), and after took member b joins and gets 1 (frames 4+took, 5+took): 1
// had no owner for took and a millisecond.
func ownership(took time.Duration) []event {
	n := func(name string, v any, kids ...*codec.Node) *codec.Node {
		return &codec.Node{Name: name, Value: v, Children: kids}
	}
	heartbeat := func(frame, stream int, corr int32, member string, epoch int64) *model.Entry {
		e := request(frame, stream, codec.KeyConsumerGroupHeartbeat, corr, member)
		e.Msg.Fields = []*codec.Node{n("GroupId", "g"), n("MemberId", member), n("MemberEpoch", epoch)}
		return e
	}
	answer := func(frame, stream int, corr int32, member string, epoch int64, partitions ...int64) *model.Entry {
		var ps []*codec.Node
		for _, p := range partitions {
			ps = append(ps, n("", p))
		}
		return response(frame, stream, codec.KeyConsumerGroupHeartbeat, corr, n("MemberId", member), n("MemberEpoch", epoch),
			n("Assignment", nil, n("TopicPartitions", nil, n("", nil, n("Partitions", nil, ps...)))))
	}
	later := 4 + int(took.Milliseconds())
	return entries(heartbeat(1, 0, 1, "a", 0), answer(2, 0, 1, "a", 1, 0, 1), heartbeat(3, 0, 2, "a", 1), answer(4, 0, 2, "a", 1, 0),
		heartbeat(later, 1, 1, "b", 0), answer(later+1, 1, 1, "b", 2, 1))
}

// fetches is a consumer's Fetch requests of partition 0 of topic t at offsets, each answered
// at once with the high watermark of hws: request and response in frames 1 and 2, 3 and 4...
func fetches(offsets, hws []int64) []event {
	n := func(name string, v any, kids ...*codec.Node) *codec.Node {
		return &codec.Node{Name: name, Value: v, Children: kids}
	}
	array := func(name string, kids ...*codec.Node) *codec.Node {
		return &codec.Node{Name: name, Type: wire.Array, Value: int64(len(kids)), Children: kids}
	}
	var out []*model.Entry
	for i, offset := range offsets {
		req := request(2*i+1, 0, codec.KeyFetch, int32(i), "c")
		req.Msg.Fields = []*codec.Node{array("Topics", n("", nil, n("Topic", "t"),
			array("Partitions", n("", nil, n("Partition", int64(0)), n("FetchOffset", offset)))))}
		out = append(out, req, response(2*i+2, 0, codec.KeyFetch, int32(i), n("ErrorCode", int64(0)), array("Responses", n("", nil, n("Topic", "t"),
			array("Partitions", n("", nil, n("PartitionIndex", int64(0)), n("ErrorCode", int64(0)), n("HighWatermark", hws[i])))))))
	}
	return entries(out...)
}

// repeat is n times v.
func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// evens are the frames 2, 4... of n fetches' responses.
func evens(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 2 * (i + 1)
	}
	return out
}

// answers are Produce requests on stream to broker from frame first, one every 2 frames,
// each answered in the next frame after its latency.
func answers(stream int, broker string, first int, latencies ...time.Duration) []*model.Entry {
	var out []*model.Entry
	for i, l := range latencies {
		f := first + 2*i
		resp := response(f+1, stream, codec.KeyProduce, int32(f), &codec.Node{Name: "ErrorCode", Value: int64(0)})
		resp.Src, resp.RequestFrame, resp.Latency, resp.Msg.APIName = broker, f, l, "Produce"
		out = append(out, request(f, stream, codec.KeyProduce, int32(f), "p"), resp)
	}
	return out
}

// latencies is n times l.
func latencies(l time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = l
	}
	return out
}

// stall is two brokers answering 20 Produce requests in a millisecond each, then, 6 seconds
// in (in the next latency window), LatencyStallCount requests each, slowly on the first
// slowBrokers of them.
func stall(slow time.Duration, slowBrokers int) []event {
	var out []*model.Entry
	for b := range 2 {
		broker := fmt.Sprint("broker", b, ":9092")
		out = append(out, answers(b, broker, 1+1000*b, latencies(time.Millisecond, 20)...)...)
		later := time.Millisecond
		if b < slowBrokers {
			later = slow
		}
		out = append(out, answers(b, broker, 6001+1000*b, latencies(later, LatencyStallCount)...)...)
	}
	return entries(out...)
}

// outlier is three brokers answering LatencyOutlierCount Produce requests each, the first two
// in a millisecond, the third in slow.
func outlier(slow time.Duration) []event {
	var out []*model.Entry
	for b, l := range []time.Duration{time.Millisecond, time.Millisecond, slow} {
		out = append(out, answers(b, fmt.Sprint("broker", b, ":9092"), 1+1000*b, latencies(l, LatencyOutlierCount)...)...)
	}
	return entries(out...)
}

// produces is a producer's Produce requests, unanswered yet, one a frame from frame 1, each
// with a batch of [first sequence, records] of partition 0, uncompressed and small.
func produces(batches [][2]int64) []event {
	n := func(name string, v any, kids ...*codec.Node) *codec.Node {
		return &codec.Node{Name: name, Value: v, Children: kids}
	}
	var out []*model.Entry
	for i, b := range batches {
		batch := &codec.Node{Name: "batch", Type: wire.RecordBatch, Size: 100, Children: []*codec.Node{
			n("producerId", int64(7)), n("producerEpoch", int64(0)), n("baseSequence", b[0]), n("recordsCount", b[1]),
			n("attributes", int64(0)), {Name: "records", Size: 50}}}
		e := request(i+1, 0, codec.KeyProduce, int32(i), "p")
		e.Msg.Fields = []*codec.Node{n("TopicData", nil, n("", nil, n("Name", "t"), n("PartitionData", nil,
			n("", nil, n("Index", int64(0)), &codec.Node{Name: "Records", Type: wire.Records, Children: []*codec.Node{batch}}))))}
		out = append(out, e)
	}
	return entries(out...)
}

// ones is n batches of one record, in sequence.
func ones(n int) [][2]int64 {
	out := make([][2]int64, n)
	for i := range out {
		out[i] = [2]int64{int64(i), 1}
	}
	return out
}

// count is the frames from first, n of them.
func count(first, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = first + i
	}
	return out
}

func frames(es []*model.Entry) []int {
	var out []int
	for _, e := range es {
		out = append(out, e.Frame)
	}
	return out
}

// TestChecksTable: every check has an id, once, and the texts the docs show.
func TestChecksTable(t *testing.T) {
	ids := map[string]bool{}
	for _, c := range Checks() {
		if c.ID == "" || ids[c.ID] || c.Threshold == "" || c.Why == "" || c.Advice == "" || c.find == nil {
			t.Errorf("check %q: incomplete or repeated", c.ID)
		}
		ids[c.ID] = true
	}
}
