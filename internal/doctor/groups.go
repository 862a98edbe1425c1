package doctor

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/model"
)

// The consumer groups' checks: rebalances too frequent, partitions left without an owner, and
// members the coordinator removed.

// stormFindings makes a finding of each group whose generations (member epochs, for the
// heartbeat protocols) changed more than RebalanceStormPerMinute times within a minute.
func (d *Doctor) stormFindings() []Finding {
	byGroup := map[string][]analysis.RebalanceSummary{}
	for _, r := range d.groups.Rebalances() {
		if at := rebalanceTime(r); !at.IsZero() {
			byGroup[r.Group] = append(byGroup[r.Group], r)
		}
	}
	var out []Finding
	for _, group := range sortedKeys(byGroup, strings.Compare) {
		rs := byGroup[group]
		slices.SortStableFunc(rs, func(a, b analysis.RebalanceSummary) int { return rebalanceTime(a).Compare(rebalanceTime(b)) })
		from, to, n := densestMinute(rs)
		if n <= RebalanceStormPerMinute {
			continue
		}
		var frames []analysis.FrameRef
		for _, r := range rs[from:to] {
			frames = append(frames, r.Frames...)
		}
		out = append(out, Finding{Severity: Warning, Evidence: framesEvidence(frames[:min(len(frames), analysis.MaxFrames)]),
			Title: fmt.Sprintf("group %q: %d generations or member epochs within a minute (%d rebalances in all)", group, n, countGenerations(rs))})
	}
	return out
}

// rebalanceTime is when a rebalance began, or ended when its beginning is not known.
func rebalanceTime(r analysis.RebalanceSummary) time.Time {
	if !r.Start.IsZero() {
		return r.Start
	}
	return r.End
}

// densestMinute finds the minute of rs (in time order) with the most distinct generations: the
// rows rs[from:to], and how many generations they hold. A KIP-848 group's members each get
// the group's new epoch: one epoch, one rebalance, however many members.
func densestMinute(rs []analysis.RebalanceSummary) (from, to, n int) {
	gens := map[int64]int{}
	lo := 0
	for hi, r := range rs {
		gens[r.Generation]++
		for rebalanceTime(r).Sub(rebalanceTime(rs[lo])) >= time.Minute {
			if gens[rs[lo].Generation]--; gens[rs[lo].Generation] == 0 {
				delete(gens, rs[lo].Generation)
			}
			lo++
		}
		if len(gens) > n {
			from, to, n = lo, hi+1, len(gens)
		}
	}
	return from, to, n
}

// countGenerations counts the distinct generations of rs.
func countGenerations(rs []analysis.RebalanceSummary) int {
	gens := map[int64]bool{}
	for _, r := range rs {
		gens[r.Generation] = true
	}
	return len(gens)
}

// members follows the group members' requests, to tell a member the coordinator removed from
// one that left: a member silent for a while whose next request is answered as unknown or
// fenced, without its LeaveGroup (or leaving heartbeat) in between.
type members struct {
	seen map[memberKey]*memberSeen
	// asked holds the member requests awaiting their responses, by stream and correlation id.
	asked map[[2]int]memberRequest
	// order lists the members removed, in the order found; removed their evidence.
	order   []memberKey
	removed map[memberKey]*memberRemoved
}

type memberKey struct{ group, member string }

type memberSeen struct {
	last analysis.FrameRef
	left bool
}

type memberRequest struct {
	key  memberKey
	gap  time.Duration
	prev analysis.FrameRef
	at   analysis.FrameRef
}

type memberRemoved struct {
	ev     Evidence
	gap    time.Duration
	errors []string
}

// memberAPIs are the requests a group member sends under its member id: OffsetCommit,
// OffsetFetch (v9 on), JoinGroup, Heartbeat, LeaveGroup, SyncGroup, TxnOffsetCommit (v3 on),
// and the heartbeats of KIP-848 and its kin. Each tells the coordinator the member is alive.
var memberAPIs = []int16{codec.KeyOffsetCommit, codec.KeyOffsetFetch, codec.KeyJoinGroup, codec.KeyHeartbeat, codec.KeyLeaveGroup,
	codec.KeySyncGroup, codec.KeyTxnOffsetCommit, codec.KeyConsumerGroupHeartbeat, codec.KeyShareGroupHeartbeat, codec.KeyStreamsGroupHeartbeat}

// removedErrors are the answers a coordinator gives a member it no longer has.
var removedErrors = []string{"UNKNOWN_MEMBER_ID", "FENCED_MEMBER_EPOCH"}

func newMembers() members {
	return members{seen: map[memberKey]*memberSeen{}, asked: map[[2]int]memberRequest{}, removed: map[memberKey]*memberRemoved{}}
}

// request notes a member's request: when it was last heard of before, and whether it leaves.
func (ms *members) request(e *model.Entry) {
	if e.Facts == nil || len(e.Facts.Groups) == 0 || len(e.Facts.Members) == 0 || !slices.Contains(memberAPIs, e.Msg.APIKey) {
		return
	}
	at := analysis.FrameRef{Frame: e.Frame, Stream: e.Stream, Time: e.Time}
	leaving := e.Msg.APIKey == codec.KeyLeaveGroup || leavingEpoch(e.Msg)
	for i, member := range e.Facts.Members {
		k := memberKey{e.Facts.Groups[0], member}
		s := ms.seen[k]
		if s == nil {
			s = &memberSeen{last: at}
			ms.seen[k] = s
		}
		if i == 0 && !e.NoResponse {
			ms.asked[[2]int{e.Stream, int(e.Msg.CorrelationID)}] = memberRequest{key: k, gap: e.Time.Sub(s.last.Time), prev: s.last, at: at}
		}
		s.last, s.left = at, s.left || leaving
	}
}

// leavingEpoch reports whether a KIP-848 heartbeat leaves its group: member epoch -1 (or -2,
// a static member leaving for now).
func leavingEpoch(m *codec.Message) bool {
	for _, n := range m.Fields[min(m.HeaderFields, len(m.Fields)):] {
		if n.Name == "MemberEpoch" {
			v, _ := n.Value.(int64)
			return v < 0
		}
	}
	return false
}

// response notes a member request's answer that says the coordinator removed the member.
func (ms *members) response(e *model.Entry) {
	k := [2]int{e.Stream, int(e.Msg.CorrelationID)}
	r, ok := ms.asked[k]
	if !ok {
		return
	}
	delete(ms.asked, k)
	var errs []string
	if e.Facts != nil {
		for _, code := range e.Facts.Errors {
			if name := codec.ErrorName(code); slices.Contains(removedErrors, name) {
				errs = append(errs, name)
			}
		}
	}
	if len(errs) == 0 || r.gap < MemberGapMin || ms.seen[r.key].left {
		return
	}
	rm := ms.removed[r.key]
	if rm == nil {
		rm = &memberRemoved{}
		ms.removed[r.key] = rm
		ms.order = append(ms.order, r.key)
	}
	rm.gap, rm.errors = max(rm.gap, r.gap), addNames(rm.errors, errs)
	for _, f := range []analysis.FrameRef{r.prev, r.at, {Frame: e.Frame, Stream: e.Stream, Time: e.Time}} {
		rm.ev.add(f.Frame, f.Stream, f.Time)
	}
}

// addNames appends to list those of add it does not hold yet.
func addNames(list, add []string) []string {
	for _, s := range add {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

func (d *Doctor) removedFindings() []Finding {
	var out []Finding
	for _, k := range d.members.order {
		rm := d.members.removed[k]
		out = append(out, Finding{Severity: Warning, Evidence: rm.ev,
			Title: fmt.Sprintf("group %q member %s: answered %s after %s without a request", k.group, k.member,
				strings.Join(rm.errors, ", "), rm.gap.Round(time.Millisecond))})
	}
	return out
}

func (d *Doctor) unownedFindings() []Finding {
	var out []Finding
	for _, s := range d.groups.Unowned() {
		took := s.End.Sub(s.Start)
		if took < PartitionsUnownedMax {
			continue
		}
		until := "before another member got them"
		if s.Open {
			until = "and no member got them before the capture ended"
		}
		out = append(out, Finding{Severity: Warning, Evidence: framesEvidence(s.Frames),
			Title: fmt.Sprintf("group %q: %d partition(s) without an owner for %s, %s", s.Group, s.Partitions, took.Round(time.Millisecond), until)})
	}
	return out
}
