package codec

import (
	"cmp"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchSessionSteps follows one connection's fetch session through a shallow and a full
// decode alike: opened, changed, an epoch skipped, an epoch used again, closed and used after.
func TestFetchSessionSteps(t *testing.T) {
	fetch := func(version int16, corr, id, epoch int32, topics map[string][]int32, forget map[string][]int32) []byte {
		r := kmsg.NewPtrFetchRequest()
		r.ReplicaID, r.SessionID, r.SessionEpoch = -1, id, epoch
		for _, name := range []string{"orders", "payments"} {
			if ps, ok := topics[name]; ok {
				ft := kmsg.NewFetchRequestTopic()
				ft.Topic = name
				for _, p := range ps {
					fp := kmsg.NewFetchRequestTopicPartition()
					fp.Partition = p
					ft.Partitions = append(ft.Partitions, fp)
				}
				r.Topics = append(r.Topics, ft)
			}
			if ps, ok := forget[name]; ok {
				ft := kmsg.NewFetchRequestForgottenTopic()
				ft.Topic, ft.Partitions = name, ps
				r.ForgottenTopics = append(r.ForgottenTopics, ft)
			}
		}
		return convRequest(r, version, corr, clientID)
	}
	answer := func(version int16, corr, id int32, code int16) []byte {
		r := kmsg.NewPtrFetchResponse()
		r.SessionID, r.ErrorCode = id, code
		return convResponse(r, version, corr)
	}
	type step struct {
		request, response []byte
		want, wantResp    string // the steps, as sessionString shows them
		warn, warnResp    string // a warning's start, or ""
	}
	steps := []step{
		{fetch(12, 1, 0, 0, map[string][]int32{"orders": {0, 1}}, nil), answer(12, 1, 7, 0),
			"open 0/0 +[orders[0] orders[1]] -[] =[orders[0] orders[1]] followed", "open 7/0 +[orders[0] orders[1]] -[] =[orders[0] orders[1]] followed", "", ""},
		{fetch(12, 2, 7, 1, map[string][]int32{"payments": {3}, "orders": {1}}, map[string][]int32{"orders": {0}}), answer(12, 2, 7, 0),
			"incremental 7/1 +[payments[3]] -[orders[0]] =[orders[1] payments[3]] followed", "incremental 7/1 +[] -[] =[] followed", "", ""},
		// Refused: the partition it adds is not in the session after.
		{fetch(12, 3, 7, 3, map[string][]int32{"orders": {1, 5}}, nil), answer(12, 3, 7, ErrInvalidFetchSessionEpoch),
			"incremental 7/3 +[orders[5]] -[] =[orders[1] orders[5] payments[3]] followed", "incremental 7/3 +[] -[] =[] followed",
			"fetch session 7: epoch 3 skips epoch 2", "the broker refused epoch 3"},
		{fetch(12, 4, 7, 1, map[string][]int32{"orders": {1}}, nil), answer(12, 4, 7, ErrInvalidFetchSessionEpoch),
			"incremental 7/1 +[] -[] =[orders[1] payments[3]] followed", "incremental 7/1 +[] -[] =[] followed",
			"fetch session 7: epoch 1 was used already", "the broker refused epoch 1"},
		{fetch(12, 5, 7, -1, map[string][]int32{"orders": {1}}, nil), answer(12, 5, 0, 0),
			"close 7/-1 +[] -[] =[]", "close 7/-1 +[] -[] =[]", "", ""},
		{fetch(12, 6, 7, 2, nil, nil), answer(12, 6, 0, ErrFetchSessionIDNotFound),
			"incremental 7/2 +[] -[] =[] followed closed", "incremental 7/2 +[] -[] =[] followed",
			"fetch session 7 was closed (by a request with epoch -1)", "the broker does not know fetch session 7"},
		// A session this connection did not see open: followed from here on, partially.
		{fetch(12, 7, 9, 4, map[string][]int32{"orders": {2}}, nil), answer(12, 7, 9, 0),
			"incremental 9/4 +[orders[2]] -[] =[orders[2]]", "incremental 9/4 +[] -[] =[]", "", ""},
		// No session: no step.
		{fetch(12, 8, 0, -1, map[string][]int32{"orders": {0}}, nil), answer(12, 8, 0, 0), "<nil>", "<nil>", "", ""},
	}
	for _, shallow := range []bool{false, true} {
		c := testCodec(t)
		c.Shallow = shallow
		cv := c.NewConversation()
		for i, s := range steps {
			for j, side := range []struct {
				frame      []byte
				want, warn string
			}{{s.request, s.want, s.warn}, {s.response, s.wantResp, s.warnResp}} {
				var r Result
				if j == 0 {
					r = cv.ClientFrame(side.frame, i)
				} else {
					r = cv.ServerFrame(side.frame)
				}
				what := fmt.Sprintf("shallow %v, step %d, %s", shallow, i, []string{"request", "response"}[j])
				if got := sessionString(r.Session); got != side.want {
					t.Errorf("%s: %s, want %s", what, got, side.want)
				}
				switch ws := r.Msg.Warnings; {
				case side.warn == "" && len(ws) > 0:
					t.Errorf("%s: warnings %v", what, ws)
				case side.warn != "" && (len(ws) != 1 || !strings.HasPrefix(ws[0].Msg, side.warn)):
					t.Errorf("%s: warnings %v, want one starting %q", what, ws, side.warn)
				}
			}
		}
	}
}

// sessionString shows a step for comparison: action id/epoch +added -forgotten =partitions.
func sessionString(s *SessionStep) string {
	if s == nil {
		return "<nil>"
	}
	list := func(ps []SessionPartition) string {
		var out []string
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%s[%d]", p.TopicKey(), p.Partition))
		}
		return "[" + strings.Join(out, " ") + "]"
	}
	out := fmt.Sprintf("%s %d/%d +%s -%s =%s", s.Action, s.ID, s.Epoch, list(s.Added), list(s.Forgotten), list(s.Partitions))
	if s.Followed {
		out += " followed"
	}
	if s.Closed {
		out += " closed"
	}
	return out
}

// TestSessionStepsSharePartitions checks that incremental fetches that leave their session as
// it was share the session's sorted partitions, which naming the topics of one step
// (TopicNames.ResolveSession) leaves as they were: each step gets the names known when it is
// resolved, in order by name, a name learnt between two steps included.
func TestSessionStepsSharePartitions(t *testing.T) {
	a, b := UUID{1}, UUID{2}
	set := map[sessionKey]SessionPartition{}
	for _, p := range []SessionPartition{{TopicID: b, Partition: 1}, {TopicID: a, Partition: 2}, {TopicID: a, Partition: 0}} {
		set[p.key()] = p
	}
	s := &sessionState{open: map[int32]*fetchSession{7: {set: set, followed: true}}, closed: map[int32]string{}}
	warn := func(format string, args ...any) { t.Errorf("warning: "+format, args...) }
	var steps []*SessionStep
	for epoch := int32(1); epoch <= 5; epoch++ {
		st := &SessionStep{ID: 7, Epoch: epoch, Action: SessionIncremental}
		next := s.incremental(st, []SessionPartition{{TopicID: a, Partition: 0}}, nil, warn)
		kept := *st // the conversation's copy, which becomes the response's step
		s.fetchResponse(&Message{}, &kept, next)
		steps = append(steps, st)
	}
	shared := sortedPartitions(slicesOf(set))
	for i, st := range steps {
		if fmt.Sprint(st.Partitions) != fmt.Sprint(shared) {
			t.Errorf("step %d: partitions %v, want %v", i+1, st.Partitions, shared)
		}
		if len(st.Updated) != 1 || len(st.Added) != 0 {
			t.Errorf("step %d: updated %v, added %v: want one updated", i+1, st.Updated, st.Added)
		}
	}
	if &steps[0].Partitions[0] != &steps[4].Partitions[0] {
		t.Error("the steps that leave the session as it was do not share its partitions")
	}

	var names TopicNames
	for i, tc := range []struct {
		learn []TopicIDName
		want  string
	}{
		{nil, fmt.Sprint(shared)},
		{[]TopicIDName{{ID: b, Name: "beta"}}, "[{ AQAAAAAAAAAAAAAAAAAAAA 0} { AQAAAAAAAAAAAAAAAAAAAA 2} {beta AgAAAAAAAAAAAAAAAAAAAA 1}]"},
		{nil, "[{ AQAAAAAAAAAAAAAAAAAAAA 0} { AQAAAAAAAAAAAAAAAAAAAA 2} {beta AgAAAAAAAAAAAAAAAAAAAA 1}]"},
		{[]TopicIDName{{ID: a, Name: "zeta"}}, "[{beta AgAAAAAAAAAAAAAAAAAAAA 1} {zeta AQAAAAAAAAAAAAAAAAAAAA 0} {zeta AQAAAAAAAAAAAAAAAAAAAA 2}]"},
	} {
		names.Add(tc.learn)
		names.ResolveSession(steps[i])
		if got := fmt.Sprint(steps[i].Partitions); got != tc.want {
			t.Errorf("step %d named %v, want %s", i+1, got, tc.want)
		}
	}
	if got := fmt.Sprint(steps[4].Partitions); got != fmt.Sprint(shared) {
		t.Errorf("naming the other steps changed the partitions step 5 shares: %s", got)
	}
	if got := fmt.Sprint(s.open[7].sorted); got != fmt.Sprint(shared) {
		t.Errorf("naming the steps changed the session's partitions: %s", got)
	}
}

// TestComparePartitions checks that comparePartitions orders as TopicKey's strings do, topic
// names and ids mixed, names longer than its buffers among them.
func TestComparePartitions(t *testing.T) {
	long := strings.Repeat("t", 100)
	ps := []SessionPartition{
		{Topic: "orders", Partition: 1}, {Topic: "orders", Partition: 0}, {Topic: "Orders"},
		{Topic: long, Partition: 3}, {Topic: long + "a"}, {Topic: "_"}, {Topic: "-"},
		{TopicID: UUID{0xff}, Partition: 2}, {TopicID: UUID{0xff}}, {TopicID: UUID{0x01, 0x02}}, {TopicID: UUID{}},
		{Topic: UUID{0xff}.String()},
	}
	for _, a := range ps {
		for _, b := range ps {
			want := strings.Compare(a.TopicKey(), b.TopicKey())
			if want == 0 {
				want = cmp.Compare(a.Partition, b.Partition)
			}
			if got := comparePartitions(a, b); got != want {
				t.Errorf("comparePartitions(%v, %v) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestFetchSessionAllocations: following an incremental fetch and its response costs their
// messages, the request's copy that the response's Result points to, and one allocation for
// the steps (the request's, the conversation's copy that
// becomes the response's); the session, unchanged, is not copied, and the lists of partitions
// are carved from chunks that the connection's fetches share.
func TestFetchSessionAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops some of what it is given under the race detector")
	}
	c := testCodec(t)
	c.Shallow = true
	fetch := func(corr, id, epoch int32) []byte {
		r := kmsg.NewPtrFetchRequest()
		r.ReplicaID, r.SessionID, r.SessionEpoch = -1, id, epoch
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "orders"
		for p := range int32(2) {
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition = p
			ft.Partitions = append(ft.Partitions, fp)
		}
		r.Topics = append(r.Topics, ft)
		return convRequest(r, 12, corr, clientID)
	}
	answer := func(corr int32) []byte {
		r := kmsg.NewPtrFetchResponse()
		r.SessionID = 7
		return convResponse(r, 12, corr)
	}
	cv := c.NewConversation()
	pair := func(request, response []byte) {
		req := cv.ClientFrame(request, nil)
		resp := cv.ServerFrame(response)
		if len(req.Msg.Warnings)+len(resp.Msg.Warnings) > 0 || req.Session == nil || resp.Session == nil {
			t.Fatalf("warnings %v %v, steps %v %v", req.Msg.Warnings, resp.Msg.Warnings, req.Session, resp.Session)
		}
		c.Release(req.Msg)
		c.Release(resp.Msg)
	}
	pair(fetch(1, 0, 0), answer(1)) // opens session 7
	const runs = 100
	var requests, responses [][]byte
	for i := range int32(runs + 1) {
		requests, responses = append(requests, fetch(2+i, 7, 1+i)), append(responses, answer(2+i))
	}
	i := 0
	allocs := testing.AllocsPerRun(runs, func() {
		pair(requests[i], responses[i])
		i++
	})
	// The two messages, the request the response's Result points to, and the steps (the
	// chunks of partitions are shared by dozens of fetches). Eight before the steps were
	// allocated together and the session's set shared.
	if allocs > 4 {
		t.Errorf("%.2f allocations per incremental fetch and its response, want at most 4", allocs)
	}
	t.Logf("%.2f allocations per incremental fetch and its response", allocs)
}
