package analysis_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/model"
)

// The tests check each analysis against what the test computes itself from the capture's JSON
// lines (kdissect --format json): the same capture, read by the same pipeline, but the
// expectations come from the JSON's fields, not from the analysis's code.

// msg is one JSON line of a message.
type msg map[string]any

// messages returns the messages of a capture's JSON lines.
func messages(t *testing.T, name, mode string) []msg {
	t.Helper()
	d := json.NewDecoder(jsonOutput(t, name, mode))
	d.UseNumber()
	var out []msg
	for d.More() {
		var m msg
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if m["kind"] == "request" || m["kind"] == "response" {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no messages", name)
	}
	return out
}

func (m msg) request() bool { return m["kind"] == "request" }
func (m msg) api() string   { s, _ := m["api_name"].(string); return s }

// key pairs a response with its request: connection and correlation id.
func (m msg) key() string { return fmt.Sprint(m["stream"], "/", m["correlation_id"]) }

func (m msg) time(t *testing.T) time.Time {
	at, err := time.Parse(time.RFC3339Nano, m["time"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// node is a field of the JSON's field tree.
type node map[string]any

// fields are the fields of m, or of a node.
func fields(v map[string]any) []node {
	list, _ := v["fields"].([]any)
	out := make([]node, 0, len(list))
	for _, f := range list {
		out = append(out, node(f.(map[string]any)))
	}
	return out
}

// get returns the field named name among the fields of v.
func get(v map[string]any, name string) node {
	for _, f := range fields(v) {
		if f["name"] == name {
			return f
		}
	}
	return nil
}

func (n node) str() string {
	if n == nil {
		return ""
	}
	s, _ := n["value"].(string)
	return s
}

func (n node) int(t *testing.T) int64 {
	v, err := n["value"].(json.Number).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// errs names the non-zero error codes under v, as the JSON notes them, in any order.
func errs(v map[string]any) []string {
	var out []string
	for _, f := range fields(v) {
		if strings.HasSuffix(f["name"].(string), "ErrorCode") && f["value"].(json.Number).String() != "0" {
			name := f["error"].(string)
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
		for _, e := range errs(f) {
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}

// compare checks a table's rows against the expected ones, column by column.
func compare(t *testing.T, name string, tab model.Table, want [][]any) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the test expects no %s rows: it checks nothing", name, tab.Name)
	}
	if len(tab.Rows) != len(want) {
		t.Errorf("%s: %d %s rows, want %d\ngot  %v\nwant %v", name, len(tab.Rows), tab.Name, len(want), tab.Rows, want)
		return
	}
	for i := range want {
		for j, c := range tab.Columns {
			if !reflect.DeepEqual(tab.Rows[i][j], want[i][j]) {
				t.Errorf("%s: %s row %d, %s = %#v, want %#v", name, tab.Name, i, c.Name, tab.Rows[i][j], want[i][j])
			}
		}
	}
}

// Group captures: classic groups of three clients, a classic group whose second member joins
// late (two generations), a transactional group, and a KIP-848 group whose second member
// joins late (a revocation).
var groupCaptures = []string{"kgo-group-3brokers.pcap", "sarama-produce-consume.pcap", "kafkago-produce-consume.pcap",
	"kgo-group-late-joiner.pcap", "kgo-txn-groups.pcap", "kgo-group-848.pcap", "kgo-filters.pcap",
	"kgo-member-removed.pcap", "kgo-rebalance-storm.pcap", "kgo-rebalance-slow.pcap", "kgo-partitions-unowned.pcap",
	// kgo-group-late-joiner.pcap cut in the middle of its second rebalance (editcap -r 1-90).
	"testdata/late-joiner-cut.pcap"}

// TestGroups: each generation of each classic group, as the JSON lines show it.
func TestGroups(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range groupCaptures {
		t.Run(name, func(t *testing.T) {
			ms := messages(t, name, "full")
			want := append(wantGroups(t, ms), wantHeartbeats(t, ms)...)
			slices.SortStableFunc(want, func(a, b []any) int { return strings.Compare(a[0].(string), b[0].(string)) })
			compare(t, name, table(t, name, "full", analysis.NewGroups()), want)
			for _, r := range want {
				seen["a second generation of two members"] = seen["a second generation of two members"] ||
					r[3] == int64(2) && r[4] == nil && r[5] == int64(2)
				seen["a KIP-848 member's new epoch"] = seen["a KIP-848 member's new epoch"] || r[4] != nil
				seen["a join reason"] = seen["a join reason"] || len(r[7].([]string)) > 0
				seen["an error"] = seen["an error"] || len(r[12].([]string)) > 0
				seen["a rebalance given no generation"] = seen["a rebalance given no generation"] || r[3] == nil
			}
		})
	}
	for _, what := range []string{"a second generation of two members", "a KIP-848 member's new epoch", "a join reason", "an error",
		"a rebalance given no generation"} {
		if !seen[what] {
			t.Errorf("no capture shows %s: the comparisons check little", what)
		}
	}
}

// wantGroup is a generation of a classic group, as the test sees it.
type wantGroup struct {
	group, ptype, protocol, leader string
	generation                     int64
	members, reasons, errs         []string
	start, end                     time.Time
	assignment                     map[string]int64
}

// joinWindow holds, for a group, the JoinGroup requests and errors since its last generation
// began.
type joinWindow struct {
	start         time.Time
	ptype         string
	reasons, errs []string
}

// classicGroups follows the classic groups of a capture for the test.
type classicGroups struct {
	t       *testing.T
	gens    map[string]*wantGroup // by group/generation
	order   []*wantGroup
	latest  map[string]*wantGroup
	windows map[string]*joinWindow
}

// wantGroups computes the groups table from a capture's messages. A generation starts with the
// first JoinGroup request of its group sent after the first successful JoinGroup response of
// the generation before; it ends with its last successful SyncGroup response.
func wantGroups(t *testing.T, ms []msg) [][]any {
	c := &classicGroups{t: t, gens: map[string]*wantGroup{}, latest: map[string]*wantGroup{}, windows: map[string]*joinWindow{}}
	requests := map[string]msg{}
	for _, m := range ms {
		if m.request() {
			requests[m.key()] = m
			if m.api() == "JoinGroup" {
				w := c.window(get(m, "GroupId").str(), m.time(t))
				if w.ptype == "" {
					w.ptype = get(m, "ProtocolType").str()
				}
				w.reasons = addNew(w.reasons, get(m, "Reason").str())
			}
			continue
		}
		if req, ok := requests[m.key()]; ok {
			c.response(req, m)
		}
	}
	return c.rows()
}

func (c *classicGroups) window(group string, at time.Time) *joinWindow {
	if c.windows[group] == nil {
		c.windows[group] = &joinWindow{start: at}
	}
	return c.windows[group]
}

// response reads a group API's response m to request req.
func (c *classicGroups) response(req, m msg) {
	t := c.t
	g := get(req, "GroupId").str()
	switch m.api() {
	case "JoinGroup":
		c.join(g, req, m)
	case "SyncGroup":
		r := c.gens[fmt.Sprint(g, "/", get(req, "GenerationId").int(t))]
		if r == nil {
			t.Fatalf("a SyncGroup of a generation the capture did not see begin: the test does not expect it")
		}
		for _, a := range fields(get(req, "Assignments")) {
			member := get(a, "MemberId").str()
			r.members = addNew(r.members, member)
			r.assignment[member] = countPartitions(get(a, "Assignment"))
		}
		if e := errs(m); len(e) > 0 {
			r.errs = addNew(r.errs, e...)
			return
		}
		r.end = m.time(t)
		if r.protocol == "" {
			r.protocol = get(m, "ProtocolName").str()
		}
		member := get(req, "MemberId").str()
		r.members = addNew(r.members, member)
		if a := get(m, "Assignment"); len(fields(a)) > 0 {
			r.assignment[member] = countPartitions(a)
		}
	case "Heartbeat", "LeaveGroup", "OffsetCommit":
		r := c.latest[g]
		for _, f := range []string{"GenerationId", "GenerationIdOrMemberEpoch"} {
			if n := get(req, f); n != nil {
				r = c.gens[fmt.Sprint(g, "/", n.int(t))]
			}
		}
		if r != nil {
			r.errs = addNew(r.errs, errs(m)...)
		}
	}
}

// join reads a JoinGroup response: an error, or the generation its window becomes.
func (c *classicGroups) join(g string, req, m msg) {
	t := c.t
	w := c.window(g, req.time(t))
	gen := get(m, "GenerationId").int(t)
	if e := errs(m); len(e) > 0 || gen < 0 {
		w.errs = addNew(w.errs, e...)
		return
	}
	k := fmt.Sprint(g, "/", gen)
	r := c.gens[k]
	if r == nil {
		r = &wantGroup{group: g, generation: gen, ptype: w.ptype, start: w.start, reasons: w.reasons, errs: w.errs, assignment: map[string]int64{}}
		c.gens[k], c.latest[g] = r, r
		c.order = append(c.order, r)
		delete(c.windows, g)
	} else if !w.start.After(req.time(t)) {
		// A join of this generation read after another member's answer.
		if w.start.Before(r.start) {
			r.start = w.start
		}
		r.reasons, r.errs = addNew(r.reasons, w.reasons...), addNew(r.errs, w.errs...)
		if r.ptype == "" {
			r.ptype = w.ptype
		}
		delete(c.windows, g)
	}
	if s := get(m, "ProtocolType").str(); s != "" {
		r.ptype = s
	}
	if s := get(m, "ProtocolName").str(); s != "" {
		r.protocol = s
	}
	if s := get(m, "Leader").str(); s != "" {
		r.leader = s
	}
	member := get(m, "MemberId").str()
	if member == "" {
		member = get(req, "MemberId").str()
	}
	r.members = addNew(r.members, member)
	for _, e := range fields(get(m, "Members")) {
		r.members = addNew(r.members, get(e, "MemberId").str())
	}
}

// rows are the generations' rows, by group, each group's rebalance that got no generation
// last.
func (c *classicGroups) rows() [][]any {
	var rows [][]any
	var pending []*wantGroup
	for g, w := range c.windows {
		pending = append(pending, &wantGroup{group: g, generation: -1, ptype: w.ptype, start: w.start, reasons: w.reasons, errs: w.errs})
	}
	slices.SortFunc(pending, func(a, b *wantGroup) int { return strings.Compare(a.group, b.group) })
	c.order = append(c.order, pending...)
	slices.SortStableFunc(c.order, func(a, b *wantGroup) int { return strings.Compare(a.group, b.group) })
	for _, r := range c.order {
		assignment := []string{}
		for m, n := range r.assignment {
			assignment = append(assignment, fmt.Sprintf("%s:%d", m, n))
		}
		slices.Sort(assignment)
		slices.Sort(r.errs)
		var end, took any
		if !r.end.IsZero() {
			end, took = r.end, r.end.Sub(r.start)
		}
		var gen any = r.generation
		if r.generation < 0 {
			gen = nil
		}
		rows = append(rows, []any{r.group, orNil(r.ptype), orNil(r.protocol), gen, nil, int64(len(r.members)),
			orNil(r.leader), orEmpty(r.reasons), r.start, end, took, assignment, orEmpty(r.errs)})
	}
	return rows
}

// addNew appends the strings of s that list does not hold, and no empty one.
func addNew(list []string, s ...string) []string {
	for _, v := range s {
		if v != "" && !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// countPartitions counts the partitions of a decoded ConsumerProtocolAssignment.
func countPartitions(a node) int64 {
	var n int64
	for _, tp := range fields(get(a, "AssignedPartitions")) {
		n += int64(len(fields(get(tp, "Partitions"))))
	}
	return n
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// hbMember is a KIP-848 member as the test follows it.
type hbMember struct {
	epoch, partitions int64
	assigned          bool
	revoked           time.Time
	errs              []string
	row               []any
}

// wantHeartbeats computes the rows of the KIP-848 consumer groups: one per new member epoch,
// from the response that first took partitions from the member (or the request answered by the
// new epoch) to the new epoch, or to the last response at that epoch that gave it more.
func wantHeartbeats(t *testing.T, ms []msg) [][]any {
	requests := map[string]msg{}
	members := map[string]map[string]*hbMember{}
	var rows [][]any
	for _, m := range ms {
		if m.api() != "ConsumerGroupHeartbeat" {
			continue
		}
		if m.request() {
			requests[m.key()] = m
			continue
		}
		req, ok := requests[m.key()]
		if !ok {
			continue
		}
		group := get(req, "GroupId").str()
		id := get(m, "MemberId").str()
		if id == "" {
			id = get(req, "MemberId").str()
		}
		if members[group] == nil {
			members[group] = map[string]*hbMember{}
		}
		mem := members[group][id]
		if mem == nil {
			mem = &hbMember{}
			members[group][id] = mem
		}
		for _, e := range errs(m) {
			if !slices.Contains(mem.errs, e) {
				mem.errs = append(mem.errs, e)
			}
		}
		epoch := get(m, "MemberEpoch").int(t)
		if a := get(m, "Assignment"); a != nil && get(a, "present") != nil && get(a, "present").int(t) >= 0 {
			var n int64
			for _, tp := range fields(get(a, "TopicPartitions")) {
				n += int64(len(fields(get(tp, "Partitions"))))
			}
			if mem.assigned && n < mem.partitions && mem.revoked.IsZero() {
				mem.revoked = m.time(t)
			} else if n > mem.partitions && epoch == mem.epoch && mem.row != nil {
				mem.row[9], mem.row[11] = m.time(t), []string{fmt.Sprintf("%s:%d", id, n)}
				mem.row[10] = m.time(t).Sub(mem.row[8].(time.Time))
			}
			mem.partitions, mem.assigned = n, true
		}
		if epoch == mem.epoch || epoch <= 0 {
			mem.epoch = epoch
			continue
		}
		mem.epoch = epoch
		start := req.time(t)
		if !mem.revoked.IsZero() {
			start = mem.revoked
		}
		count := int64(1)
		for other, o := range members[group] {
			if other != id && o.epoch > 0 {
				count++
			}
		}
		assignment := []string{}
		if mem.assigned {
			assignment = []string{fmt.Sprintf("%s:%d", id, mem.partitions)}
		}
		slices.Sort(mem.errs)
		row := []any{group, "consumer", orNil(get(req, "ServerAssignor").str()), epoch, id, count, nil, []string{},
			start, m.time(t), m.time(t).Sub(start), assignment, orEmpty(mem.errs)}
		rows = append(rows, row)
		mem.row, mem.revoked, mem.errs = row, time.Time{}, nil
	}
	return rows
}
