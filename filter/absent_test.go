package filter

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsHeartbeat is a StreamsGroupHeartbeat pair (v0) whose nullable fields are all set, or
// all null: in the request InstanceId "x-1", Topology {Epoch 3}, ActiveTasks [{SubtopologyId
// "s1", Partitions [0 3]}]; in the response ErrorCode 5, ErrorMessage "x-1", ActiveTasks as in
// the request.
func streamsHeartbeat(null bool) (kmsg.Request, kmsg.Response) {
	str := func(s string) *string {
		if null {
			return nil
		}
		return &s
	}
	var tasks []kmsg.TaskIDs
	if !null {
		tasks = []kmsg.TaskIDs{{SubtopologyID: "s1", Partitions: []int32{0, 3}}}
	}
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = "streams", "m-1", 5
	req.InstanceID = str("x-1")
	req.ActiveTasks = tasks
	if !null {
		topology := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		topology.Epoch = 3
		req.Topology = &topology
	}
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.ErrorCode = 5
	resp.ErrorMessage = str("x-1")
	resp.ActiveTasks = tasks
	return req, resp
}

// consumerHeartbeat is a ConsumerGroupHeartbeat pair (v0) whose response's Assignment is null,
// or {TopicPartitions [{Partitions [3]}]}.
func consumerHeartbeat(null bool) (kmsg.Request, kmsg.Response) {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group = "consumers"
	resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	if !null {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		a.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{{Partitions: []int32{3}}}
		resp.Assignment = &a
	}
	return req, resp
}

// TestAbsentAndNull: the filter's rule for fields that are absent or null, over a field of each
// kind in a request and in a response. F stands for the field, M for a scalar inside it (a
// struct's field, an array's element's), whose value is 3 where the field is present; a
// present scalar or string holds 5 or "x-1". The truth of each expression is the rule's: a
// comparison with an absent value is false (`!=` and `== nil` too); null is nil (`== nil`
// true, `!= nil` false, an ordering false); a field or element of a null or absent value is
// absent; a builtin sees an absent or null list as empty; `not` negates what it is given.
func TestAbsentAndNull(t *testing.T) {
	c := newCodec(t)
	full, fullResp := streamsHeartbeat(false)
	nulls, nullsResp := streamsHeartbeat(true)
	cgh, cghResp := consumerHeartbeat(false)
	cghNull, cghNullResp := consumerHeartbeat(true)
	produceReq, produceResp := produce(-1, "orders")
	pairs := map[string]testPair{
		"full":    pair(t, c, full, fullResp, 0),
		"nulls":   pair(t, c, nulls, nullsResp, 0),
		"cgh":     pair(t, c, cgh, cghResp, 0),
		"cghNull": pair(t, c, cghNull, cghNullResp, 0),
		// The fields above are not in a Produce message, nor in a side of a pair that was not
		// captured.
		"produce":   pair(t, c, produceReq, produceResp, 9),
		"reqAlone":  {req: pair(t, c, full, fullResp, 0).req},
		"respAlone": {resp: pair(t, c, full, fullResp, 0).resp},
	}
	type truth struct{ present, null, absent bool }
	type row struct {
		expr string
		want truth
	}
	scalar := []row{ // null is not asked: a scalar is never null
		{`F == 5`, truth{true, false, false}},
		{`F != 5`, truth{false, false, false}},
		{`F != 4`, truth{true, false, false}},
		{`F < 6`, truth{true, false, false}},
		{`F > 4`, truth{true, false, false}},
		{`F in [5, 6]`, truth{true, false, false}},
		{`F not in [7]`, truth{true, false, true}},
		{`not (F == 5)`, truth{false, false, true}},
		{`F == nil`, truth{false, false, false}},
		{`F != nil`, truth{true, false, false}},
		{`F + 1 == 6`, truth{true, false, false}},
		{`(F ?? 9) == 9`, truth{false, false, true}},
	}
	str := []row{
		{`F == "x-1"`, truth{true, false, false}},
		{`F != "x-1"`, truth{false, true, false}},
		{`F < "y"`, truth{true, false, false}},
		{`F > "a"`, truth{true, false, false}},
		{`F in ["x-1", "x-2"]`, truth{true, false, false}},
		{`F == nil`, truth{false, true, false}},
		{`F != nil`, truth{true, false, false}},
		{`F startsWith "x"`, truth{true, false, false}},
		{`(F ?? "none") == "none"`, truth{false, true, true}},
	}
	nested := []row{
		{`F == nil`, truth{false, true, false}},
		{`F != nil`, truth{true, false, false}},
		{`M == 3`, truth{true, false, false}},
		{`M != 3`, truth{false, false, false}},
		{`M != 4`, truth{true, false, false}},
		{`M < 4`, truth{true, false, false}},
		{`M > 2`, truth{true, false, false}},
		{`M in [3]`, truth{true, false, false}},
		{`M == nil`, truth{false, false, false}},
		{`M != nil`, truth{true, false, false}},
	}
	array := []row{
		{`len(F) == 1`, truth{true, false, false}},
		{`len(F) == 0`, truth{false, true, true}},
		{`F[1] == nil`, truth{false, false, false}}, // past the end
		{`F[1].SubtopologyId != "s1"`, truth{false, false, false}},
		{`F[0].SubtopologyId == "s1"`, truth{true, false, false}},
		{`"s1" in map(F, .SubtopologyId)`, truth{true, false, false}},
		{`3 in F[0].Partitions`, truth{true, false, false}},
		{`any(F, .SubtopologyId == "s1")`, truth{true, false, false}},
		{`all(F, .SubtopologyId == "s2")`, truth{false, true, true}},
	}
	for _, f := range []struct {
		side, kind, field, member string
		present, null             string // pairs holding the field present, null; absent in produce and in the side not captured
		rows                      []row
	}{
		{"request", "scalar", "req.MemberEpoch", "", "full", "", scalar},
		{"request", "string", "req.InstanceId", "", "full", "nulls", str},
		{"request", "struct", "req.Topology", "req.Topology.Epoch", "full", "nulls", nested},
		{"request", "array", "req.ActiveTasks", "req.ActiveTasks[0].Partitions[1]", "full", "nulls", nested},
		{"request", "array", "req.ActiveTasks", "", "full", "nulls", array},
		{"response", "scalar", "resp.ErrorCode", "", "full", "", scalar},
		{"response", "string", "resp.ErrorMessage", "", "full", "nulls", str},
		{"response", "struct", "resp.Assignment", "resp.Assignment.TopicPartitions[0].Partitions[0]", "cgh", "cghNull", nested},
		{"response", "array", "resp.ActiveTasks", "resp.ActiveTasks[0].Partitions[-1]", "full", "nulls", nested},
		{"response", "array", "resp.ActiveTasks", "", "full", "nulls", array},
	} {
		absent := []string{"produce", "respAlone"}
		if f.side == "response" {
			absent = []string{"produce", "reqAlone"}
		}
		check := func(expr string, want truth) {
			src := strings.NewReplacer("F", f.field, "M", f.member).Replace(expr)
			fl, err := Compile(src)
			if err != nil {
				t.Errorf("%s: %v", src, err)
				return
			}
			type state struct {
				name  string
				pairs []string
				want  bool
			}
			states := []state{{"present", []string{f.present}, want.present}, {"absent", absent, want.absent}}
			if f.null != "" {
				states = append(states, state{"null", []string{f.null}, want.null})
			}
			for _, s := range states {
				for _, name := range s.pairs {
					p := pairs[name]
					got, err := fl.Match(p.req, p.resp)
					if err != nil || got != s.want {
						t.Errorf("%s %s %s (%s): %s is %v (error %v), want %v", f.side, f.kind, s.name, name, src, got, err, s.want)
					}
				}
			}
		}
		for _, r := range f.rows {
			check(r.expr, r.want)
		}
	}
}
