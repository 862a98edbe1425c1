package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// heartbeatProtocols are the group types whose members heartbeat their way through rebalances
// (KIP-848 and its share and streams kin): the protocol type each API's groups have.
var heartbeatProtocols = map[int16]string{
	codec.KeyConsumerGroupHeartbeat: "consumer",
	codec.KeyShareGroupHeartbeat:    "share",
	codec.KeyStreamsGroupHeartbeat:  "streams",
}

// Groups answers "what did the consumer groups do?": one row per rebalance. A classic group
// (JoinGroup and SyncGroup) rebalances into generations: a row runs from the first JoinGroup
// request of a generation to the last SyncGroup response in it. A group of the heartbeat
// protocols (KIP-848 consumer, share and streams groups) rebalances member by member: a row
// runs from the moment a member's partitions were revoked (or its heartbeat asked to join) until
// the coordinator gave it a new member epoch and, at that epoch, the last partitions it
// waited for (those another member still had to give up).
type Groups struct {
	groups map[string]*groupState
	// rows holds the rows in the order they were opened.
	rows []*rebalance
	held pairs[groupRequest]
	// current is the message being added, noted as evidence by the rows it touches.
	current FrameRef
	// unowned holds the spans that partitions of heartbeat-protocol groups had no owner,
	// ended.
	unowned []UnownedSpan
	// events are the members' joins and leaves, the first SeriesLimit; dropped counts the
	// others.
	events  []MemberEvent
	dropped int
}

// NewGroups returns an empty Groups.
func NewGroups() *Groups { return &Groups{groups: map[string]*groupState{}} }

// groupState is what is known of one group while the capture goes.
type groupState struct {
	name string
	// pending is the classic rebalance under way whose generation is not known yet: it starts
	// with a JoinGroup request and gets its generation from the first JoinGroup response
	// that names one.
	pending     *rebalance
	generations map[int64]*rebalance
	latest      *rebalance
	// members are the heartbeat protocols' members.
	members map[string]*memberState
	// owned is how many partitions the heartbeat protocols' members hold, most the most they
	// held at once; unowned is the span under way while they hold fewer, and last the group's
	// last heartbeat response, which ends a span still open when the capture does.
	owned, most int64
	unowned     *UnownedSpan
	last        FrameRef
}

// memberState is a heartbeat-protocol member as the group's heartbeats show it.
type memberState struct {
	epoch      int64
	partitions int64
	assigned   bool
	// revoked is the response by which the coordinator first took partitions from the member
	// since its last epoch (zero: none); errs the errors its heartbeats got since then.
	revoked FrameRef
	errs    []string
	// row is the member's last rebalance: partitions given at its epoch later end it later.
	row *rebalance
}

// rebalance is one row of the groups table.
type rebalance struct {
	group, protocolType, protocol string
	generation                    int64
	member, leader                string // member: heartbeat protocols only
	members                       []string
	reasons, errs                 []string
	start, end                    time.Time
	// assignment holds the number of partitions given to each member.
	assignment map[string]int64
	// frames are the group messages that made the row: the first MaxFrames.
	frames []FrameRef
}

// groupRequest is what a group request's response needs of it.
type groupRequest struct {
	key        int16
	group      string
	member     string
	generation int64
	hasGen     bool
	at         time.Time
	assignor   string
	frame      FrameRef
}

// Reads names the fields the groups analysis reads beyond the facts.
func (g *Groups) Reads() []Read {
	classic := []string{"GenerationId", "MemberId", "Leader", "ProtocolType", "ProtocolName", "Members",
		"Reason", "Assignments", "Assignment", "AssignedPartitions", "Partitions", "Topic"}
	heartbeat := []string{"MemberId", "MemberEpoch", "ServerAssignor", "Assignment", "TopicPartitions",
		"ActiveTasks", "Partitions"}
	var out []Read
	for _, k := range []int16{codec.KeyJoinGroup, codec.KeySyncGroup, codec.KeyHeartbeat, codec.KeyLeaveGroup, codec.KeyOffsetCommit} {
		out = append(out, Read{APIKey: k, Fields: classic}, Read{APIKey: k, Response: true, Fields: classic})
	}
	for _, k := range []int16{codec.KeyConsumerGroupHeartbeat, codec.KeyShareGroupHeartbeat, codec.KeyStreamsGroupHeartbeat} {
		out = append(out, Read{APIKey: k, Fields: heartbeat}, Read{APIKey: k, Response: true, Fields: heartbeat})
	}
	return out
}

// Add follows the group APIs' requests and responses.
func (g *Groups) Add(e *model.Entry) {
	m := e.Msg
	switch m.APIKey {
	case codec.KeyJoinGroup, codec.KeySyncGroup, codec.KeyHeartbeat, codec.KeyLeaveGroup, codec.KeyOffsetCommit:
	case codec.KeyConsumerGroupHeartbeat, codec.KeyShareGroupHeartbeat, codec.KeyStreamsGroupHeartbeat:
	default:
		return
	}
	b := body(m)
	g.current = FrameRef{e.Frame, e.Stream, e.Time}
	if e.Request {
		g.request(e, b)
		return
	}
	req, ok := g.held.answer(e)
	if !ok || req.group == "" {
		return
	}
	gs := g.group(req.group)
	switch m.APIKey {
	case codec.KeyJoinGroup:
		g.joinResponse(gs, req, e.Time, b)
	case codec.KeySyncGroup:
		g.syncResponse(gs, req, e.Time, b)
	case codec.KeyConsumerGroupHeartbeat, codec.KeyShareGroupHeartbeat, codec.KeyStreamsGroupHeartbeat:
		g.heartbeatResponse(gs, req, e.Time, b)
	default:
		if errs := errorNames(b); len(errs) > 0 {
			r := gs.latest
			if req.hasGen && gs.generations[req.generation] != nil {
				r = gs.generations[req.generation]
			}
			if r != nil {
				r.errs = addStrings(r.errs, errs...)
			}
		}
	}
}

// request notes what a group request starts and holds what its response needs.
func (g *Groups) request(e *model.Entry, b []*codec.Node) {
	req := groupRequest{key: e.Msg.APIKey, group: str(b, "GroupId"), member: str(b, "MemberId"), at: e.Time, frame: g.current}
	req.generation, req.hasGen = num(b, "GenerationId")
	if !req.hasGen {
		req.generation, req.hasGen = num(b, "GenerationIdOrMemberEpoch")
	}
	if req.group == "" {
		return
	}
	gs := g.group(req.group)
	switch req.key {
	case codec.KeyJoinGroup:
		if gs.pending == nil {
			gs.pending = &rebalance{group: req.group, start: e.Time, assignment: map[string]int64{}}
		}
		gs.pending.frames = addFrame(gs.pending.frames, g.current)
		gs.pending.protocolType = first(gs.pending.protocolType, str(b, "ProtocolType"))
		if reason := str(b, "Reason"); reason != "" {
			gs.pending.reasons = addStrings(gs.pending.reasons, reason)
		}
	case codec.KeySyncGroup:
		if r := gs.generations[req.generation]; r != nil {
			r.frames = addFrame(r.frames, g.current)
			for _, a := range elems(b, "Assignments") {
				member := str(a.Children, "MemberId")
				r.members = addStrings(r.members, member)
				r.assignment[member] = assignedPartitions(child(a.Children, "Assignment"))
			}
		}
	case codec.KeyLeaveGroup:
		g.event(req.group, req.member, e.Time, true)
		for _, m := range elems(b, "Members") {
			g.event(req.group, str(m.Children, "MemberId"), e.Time, true)
		}
	case codec.KeyConsumerGroupHeartbeat, codec.KeyShareGroupHeartbeat, codec.KeyStreamsGroupHeartbeat:
		req.generation, req.hasGen = num(b, "MemberEpoch")
		req.assignor = str(b, "ServerAssignor")
		if req.hasGen && req.generation < 0 {
			g.event(req.group, req.member, e.Time, true)
		}
	}
	if !e.NoResponse {
		g.held.hold(e, req)
	}
}

// joinResponse gives the pending rebalance its generation, or its error.
func (g *Groups) joinResponse(gs *groupState, req groupRequest, at time.Time, b []*codec.Node) {
	if gs.pending == nil {
		gs.pending = &rebalance{group: gs.name, start: req.at, assignment: map[string]int64{}}
	}
	errs := errorNames(b)
	gen, ok := num(b, "GenerationId")
	if len(errs) > 0 || !ok || gen < 0 {
		gs.pending.errs = addStrings(gs.pending.errs, errs...)
		return
	}
	r := gs.generations[gen]
	switch p := gs.pending; {
	case r == nil:
		r, p.generation = p, gen
		gs.generations[gen], gs.latest, gs.pending = r, r, nil
		g.rows = append(g.rows, r)
	case !p.start.After(req.at):
		// A member's join of this generation that comes after another member's answer (the
		// capture's connections are read apart): its rebalance is this generation's.
		if p.start.Before(r.start) {
			r.start = p.start
		}
		r.reasons, r.errs = addStrings(r.reasons, p.reasons...), addStrings(r.errs, p.errs...)
		for _, f := range p.frames {
			r.frames = addFrame(r.frames, f)
		}
		r.protocolType = first(r.protocolType, p.protocolType)
		gs.pending = nil
	}
	r.frames = addFrame(r.frames, g.current)
	r.protocolType = first(str(b, "ProtocolType"), r.protocolType)
	r.protocol = first(str(b, "ProtocolName"), r.protocol)
	r.leader = first(str(b, "Leader"), r.leader)
	r.members = addStrings(r.members, first(str(b, "MemberId"), req.member))
	g.event(gs.name, first(str(b, "MemberId"), req.member), req.at, false)
	for _, m := range elems(b, "Members") {
		r.members = addStrings(r.members, str(m.Children, "MemberId"))
	}
}

// syncResponse ends the generation's rebalance (for now: the last SyncGroup response ends it)
// and notes the member's assignment.
func (g *Groups) syncResponse(gs *groupState, req groupRequest, at time.Time, b []*codec.Node) {
	r := gs.generations[req.generation]
	if r == nil {
		// A generation whose JoinGroup the capture missed: its start is not known.
		r = &rebalance{group: gs.name, generation: req.generation, assignment: map[string]int64{}}
		gs.generations[req.generation] = r
		gs.latest = r
		g.rows = append(g.rows, r)
	}
	if errs := errorNames(b); len(errs) > 0 {
		r.errs = addStrings(r.errs, errs...)
		return
	}
	r.end = at
	r.frames = addFrame(r.frames, g.current)
	r.protocolType = first(r.protocolType, str(b, "ProtocolType"))
	r.protocol = first(r.protocol, str(b, "ProtocolName"))
	r.members = addStrings(r.members, req.member)
	if a := child(b, "Assignment"); a != nil && len(a.Children) > 0 {
		r.assignment[req.member] = assignedPartitions(a)
	}
}

// heartbeatResponse follows a heartbeat-protocol member: a new member epoch ends its rebalance.
func (g *Groups) heartbeatResponse(gs *groupState, req groupRequest, at time.Time, b []*codec.Node) {
	id := first(str(b, "MemberId"), req.member)
	if id == "" {
		return
	}
	gs.last = g.current
	m := gs.members[id]
	if m == nil {
		m = &memberState{}
		gs.members[id] = m
	}
	m.errs = addStrings(m.errs, errorNames(b)...)
	epoch, ok := num(b, "MemberEpoch")
	if !ok {
		return
	}
	if req.hasGen && req.generation == 0 && epoch > 0 {
		g.event(gs.name, id, req.at, false)
	}
	if parts, given := heartbeatPartitions(b); given {
		switch {
		case m.assigned && parts < m.partitions && m.revoked.Time.IsZero():
			m.revoked = g.current
		case parts > m.partitions && epoch == m.epoch && m.row != nil:
			// Partitions that were still another member's when the epoch came.
			m.row.end, m.row.assignment[id] = at, parts
			m.row.frames = addFrame(m.row.frames, g.current)
		}
		g.own(gs, parts-m.partitions)
		m.partitions, m.assigned = parts, true
	}
	if epoch < 0 && m.partitions > 0 {
		g.own(gs, -m.partitions) // the member left: its partitions wait for new owners
		m.partitions = 0
	}
	if epoch == m.epoch || epoch <= 0 {
		m.epoch = epoch
		return
	}
	m.epoch = epoch
	r := &rebalance{group: gs.name, protocolType: heartbeatProtocols[req.key], protocol: req.assignor,
		generation: epoch, member: id, start: req.at, end: at, errs: m.errs, assignment: map[string]int64{},
		frames: []FrameRef{req.frame, g.current}}
	if !m.revoked.Time.IsZero() {
		// The rebalance began with the revocation: its evidence too.
		r.start, r.frames = m.revoked.Time, []FrameRef{m.revoked, req.frame, g.current}
	}
	if m.assigned {
		r.assignment[id] = m.partitions
	}
	r.members = []string{id}
	for other, s := range gs.members {
		if other != id && s.epoch > 0 {
			r.members = append(r.members, other)
		}
	}
	m.revoked, m.errs, m.row = FrameRef{}, nil, r
	gs.latest = r
	g.rows = append(g.rows, r)
}

// heartbeatPartitions counts the partitions a heartbeat response assigns (a consumer or share
// group's Assignment, a streams group's ActiveTasks); given is false when it leaves the
// assignment as it was (a null Assignment).
func heartbeatPartitions(b []*codec.Node) (n int64, given bool) {
	a := child(b, "Assignment")
	if a == nil {
		a = child(b, "ActiveTasks")
	}
	if a == nil || a.Null() {
		return 0, false
	}
	codec.Walk(a.Children, func(c *codec.Node, _ int) bool {
		if c.Name == "Partitions" {
			n += int64(len(c.Children))
			return false
		}
		return true
	})
	return n, true
}

// assignedPartitions counts the partitions of a decoded ConsumerProtocolAssignment.
func assignedPartitions(a *codec.Node) int64 {
	var n int64
	if a == nil {
		return 0
	}
	for _, tp := range elems(a.Children, "AssignedPartitions") {
		if p := child(tp.Children, "Partitions"); p != nil {
			n += int64(len(p.Children))
		}
	}
	return n
}

func (g *Groups) group(name string) *groupState {
	gs := g.groups[name]
	if gs == nil {
		gs = &groupState{name: name, generations: map[int64]*rebalance{}, members: map[string]*memberState{}}
		g.groups[name] = gs
	}
	return gs
}

// Tables returns the groups table: rebalances by group, each group's in the order they began.
func (g *Groups) Tables() []model.Table {
	t := model.Table{Name: "groups", Title: "Consumer group rebalances (times UTC, rebalance in ms)", Columns: []model.Column{
		{Name: "group", Kind: model.String},
		{Name: "protocol_type", Head: "type", Kind: model.String},
		{Name: "protocol", Kind: model.String},
		{Name: "generation", Head: "gen/epoch", Kind: model.Int}, // null: a rebalance given none
		{Name: "member", Kind: model.String},
		{Name: "members", Kind: model.Int},
		{Name: "leader", Kind: model.String},
		{Name: "join_reasons", Head: "reasons", Kind: model.Strings},
		{Name: "start", Kind: model.Time},
		{Name: "end", Kind: model.Time},
		{Name: "rebalance_us", Head: "rebalance", Kind: model.Duration},
		{Name: "assignment", Head: "partitions per member", Kind: model.Strings}, // "member:count"
		{Name: "errors", Kind: model.Strings},
	}}
	rows := slices.Clone(g.rows)
	// A classic rebalance that no JoinGroup response gave a generation: still under way when
	// the capture ended, or failed.
	var pending []*rebalance
	for _, gs := range g.groups {
		if gs.pending != nil {
			pending = append(pending, gs.pending)
		}
	}
	slices.SortFunc(pending, func(a, b *rebalance) int { return cmp.Compare(a.group, b.group) })
	rows = append(rows, pending...)
	slices.SortStableFunc(rows, func(a, b *rebalance) int { return cmp.Compare(a.group, b.group) })
	for _, r := range rows {
		var assignment []string
		for m, n := range r.assignment {
			assignment = append(assignment, fmt.Sprintf("%s:%d", m, n))
		}
		slices.Sort(assignment)
		slices.Sort(r.errs)
		var generation any = r.generation
		if slices.Contains(pending, r) {
			generation = nil
		}
		t.AddRow(r.group, orNil(r.protocolType), orNil(r.protocol), generation, orNil(r.member),
			int64(len(r.members)), orNil(r.leader), list(r.reasons), timeOrNil(r.start), timeOrNil(r.end),
			span(r.start, r.end), list(assignment), list(r.errs))
	}
	return []model.Table{t}
}

// Reading fields. Messages are read by their definitions' field names, at one level of the
// tree: a name found deeper belongs to something else (a member's MemberId in a list).

// body returns the fields of m after its header.
func body(m *codec.Message) []*codec.Node {
	return m.Fields[min(m.HeaderFields, len(m.Fields)):]
}

// child returns the node named name among nodes, or nil.
func child(nodes []*codec.Node, name string) *codec.Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// str returns the value of the string field named name among nodes; "" when there is none or
// it is null.
func str(nodes []*codec.Node, name string) string {
	if n := child(nodes, name); n != nil {
		s, _ := n.Value.(string)
		return s
	}
	return ""
}

// num returns the value of the integer field named name among nodes.
func num(nodes []*codec.Node, name string) (int64, bool) {
	if n := child(nodes, name); n != nil {
		v, ok := n.Value.(int64)
		return v, ok
	}
	return 0, false
}

// elems returns the elements of the array named name among nodes.
func elems(nodes []*codec.Node, name string) []*codec.Node {
	if n := child(nodes, name); n != nil {
		return n.Children
	}
	return nil
}

// errorNames names the non-zero error codes of a message's fields, at any depth, without
// repeats.
func errorNames(nodes []*codec.Node) []string {
	var out []string
	codec.Walk(nodes, func(n *codec.Node, _ int) bool {
		if v, ok := n.Value.(int64); ok && v != 0 && codec.IsErrorCode(n) {
			out = addStrings(out, codec.ErrorName(int16(v)))
		}
		return true
	})
	return out
}

// addStrings appends to list those of add it does not hold yet, and no empty string.
func addStrings(list []string, add ...string) []string {
	for _, s := range add {
		if s != "" && !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// first returns the first of its arguments that is not empty.
func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Table values: nil for what is not known.

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// span is the time from start to end, or nil when either is not known.
func span(start, end time.Time) any {
	if start.IsZero() || end.IsZero() {
		return nil
	}
	return end.Sub(start)
}

// list is s as a table value: an empty list rather than nil, for a list known to be empty.
func list(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// pairs holds what requests leave for their responses, found by connection and correlation
// id.
type pairs[T any] struct {
	open map[pairKey]T
}

type pairKey struct {
	stream int
	corr   int32
}

// hold keeps v for request e's response; a request that reuses a correlation id replaces the
// one before it, which will not be answered now.
func (p *pairs[T]) hold(e *model.Entry, v T) {
	if p.open == nil {
		p.open = map[pairKey]T{}
	}
	p.open[pairKey{e.Stream, e.Msg.CorrelationID}] = v
}

// answer returns and lets go of what response e's request left.
func (p *pairs[T]) answer(e *model.Entry) (T, bool) {
	k := pairKey{e.Stream, e.Msg.CorrelationID}
	v, ok := p.open[k]
	if ok {
		delete(p.open, k)
	}
	return v, ok
}

// RebalanceSummary is one rebalance as the groups analysis saw it (Groups.Rebalances).
type RebalanceSummary struct {
	Group string
	// Generation is the classic group's generation, or the member's epoch (heartbeat
	// protocols); Member names the member of those.
	Generation int64
	Member     string
	// Members are the members the rebalance gave the generation (epoch) to, or saw in it.
	Members []string
	// Start and End are when the rebalance began and ended; either is zero when the capture
	// does not show it.
	Start, End time.Time
	Errors     []string
	// Frames are the group messages that made it: the first MaxFrames.
	Frames []FrameRef
}

// Rebalances returns the rebalances whose generation is known, in the order they were opened.
func (g *Groups) Rebalances() []RebalanceSummary {
	out := make([]RebalanceSummary, 0, len(g.rows))
	for _, r := range g.rows {
		out = append(out, RebalanceSummary{Group: r.group, Generation: r.generation, Member: r.member, Members: slices.Clone(r.members),
			Start: r.start, End: r.end, Errors: slices.Clone(r.errs), Frames: slices.Clone(r.frames)})
	}
	return out
}

// UnownedSpan is a time some partitions of a heartbeat-protocol group (KIP-848) had no owner:
// the coordinator had taken them from a member (or the member left) and given them to no other
// yet (Groups.Unowned).
type UnownedSpan struct {
	Group string
	// Partitions is the most partitions without an owner at once during the span.
	Partitions int64
	// Start is the response that took them; End the one that gave the last of them again, or
	// the group's last heartbeat response when the capture ends first (Open).
	Start, End time.Time
	Open       bool
	// Frames are the heartbeat responses that took or gave them: the first MaxFrames.
	Frames []FrameRef
}

// own follows a change of how many partitions a heartbeat-protocol group's members hold, made
// by the message being added: fewer than the most they held means some have no owner.
func (g *Groups) own(gs *groupState, change int64) {
	if change == 0 {
		return
	}
	gs.owned += change
	s := gs.unowned
	switch {
	case gs.owned >= gs.most && s != nil:
		s.End, s.Frames = g.current.Time, addFrame(s.Frames, g.current)
		g.unowned = append(g.unowned, *s)
		gs.unowned = nil
	case gs.owned < gs.most && s == nil:
		gs.unowned = &UnownedSpan{Group: gs.name, Partitions: gs.most - gs.owned, Start: g.current.Time, Frames: []FrameRef{g.current}}
	case s != nil:
		s.Partitions, s.Frames = max(s.Partitions, gs.most-gs.owned), addFrame(s.Frames, g.current)
	}
	gs.most = max(gs.most, gs.owned)
}

// Unowned returns the spans partitions of heartbeat-protocol groups had no owner, ended first
// in the order they ended, then those still open when the capture ended, by group.
func (g *Groups) Unowned() []UnownedSpan {
	out := slices.Clone(g.unowned)
	var open []UnownedSpan
	for _, gs := range g.groups {
		if s := gs.unowned; s != nil {
			o := *s
			o.End, o.Open, o.Frames = gs.last.Time, true, slices.Clone(s.Frames)
			open = append(open, o)
		}
	}
	slices.SortFunc(open, func(a, b UnownedSpan) int { return cmp.Compare(a.Group, b.Group) })
	return append(out, open...)
}

// MemberEvent is a member joining or leaving its group (Groups.Events): a JoinGroup answered
// with a generation (at its request), a first heartbeat answered with an epoch, a LeaveGroup,
// or a heartbeat with a negative epoch.
type MemberEvent struct {
	Group, Member string
	Time          time.Time
	Leave         bool
}

// event notes a member joining (leave false) or leaving its group at t.
func (g *Groups) event(group, member string, t time.Time, leave bool) {
	if member == "" {
		return
	}
	if len(g.events) >= SeriesLimit {
		g.dropped++
		return
	}
	g.events = append(g.events, MemberEvent{Group: group, Member: member, Time: t, Leave: leave})
}

// Events returns the members' joins and leaves in the order seen, the first SeriesLimit, and
// how many more there were.
func (g *Groups) Events() (events []MemberEvent, more int) { return slices.Clone(g.events), g.dropped }
