package analysis_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
)

// TestUnowned: the spans partitions of KIP-848 groups had no owner, as the JSON lines show
// them when each partition is followed by its topic and number (the analysis counts them).
func TestUnowned(t *testing.T) {
	found := false
	for _, name := range groupCaptures {
		t.Run(name, func(t *testing.T) {
			g := analysis.NewGroups()
			analyse(t, name, g)
			var got []string
			for _, s := range g.Unowned() {
				var frames []int
				for _, f := range s.Frames {
					frames = append(frames, f.Frame)
				}
				got = append(got, fmt.Sprint(s.Group, " ", s.Partitions, " ", s.End.Sub(s.Start), " ", s.Open, " ", frames))
			}
			want := wantUnowned(t, messages(t, name, "full"))
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("unowned\n%q, want\n%q", got, want)
			}
			found = found || len(want) > 0
		})
	}
	if !found {
		t.Error("no capture shows a partition without an owner")
	}
}

// wantUnowned follows each KIP-848 member's partitions, by topic and number: a partition taken
// from its member (or whose member left) has no owner until a member is given it.
func wantUnowned(t *testing.T, ms []msg) []string {
	requests := map[string]msg{}
	owned := map[string]map[string][]string{} // group, member: partitions
	unowned := map[string]map[string]bool{}   // group: partitions without an owner
	open := map[string]*[2]any{}              // group: start time, frames
	most, last := map[string]int{}, map[string]time.Time{}
	var out []string
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
		group, id := get(req, "GroupId").str(), get(m, "MemberId").str()
		if id == "" {
			id = get(req, "MemberId").str()
		}
		if owned[group] == nil {
			owned[group], unowned[group] = map[string][]string{}, map[string]bool{}
		}
		last[group] = m.time(t)
		var now []string
		a := get(m, "Assignment")
		switch {
		case a != nil && get(a, "present") != nil && get(a, "present").int(t) >= 0:
			for _, tp := range fields(get(a, "TopicPartitions")) {
				for _, p := range fields(get(tp, "Partitions")) {
					now = append(now, fmt.Sprint(get(tp, "TopicId")["value"], "/", p["value"]))
				}
			}
		case get(m, "MemberEpoch").int(t) < 0:
		default:
			continue
		}
		changed := false
		for _, p := range owned[group][id] {
			if !slices.Contains(now, p) {
				unowned[group][p], changed = true, true
			}
		}
		for _, p := range now {
			if unowned[group][p] {
				delete(unowned[group], p)
				changed = true
			}
		}
		owned[group][id] = now
		if !changed {
			continue
		}
		s := open[group]
		if s == nil {
			s = &[2]any{m.time(t), []int{}}
			open[group] = s
		}
		s[1] = append(s[1].([]int), frameOf(m))
		most[group] = max(most[group], len(unowned[group]))
		if len(unowned[group]) == 0 {
			out = append(out, fmt.Sprint(group, " ", most[group], " ", m.time(t).Sub(s[0].(time.Time)), " false ", s[1]))
			delete(open, group)
			most[group] = 0
		}
	}
	for _, group := range slices.Sorted(maps.Keys(open)) {
		s := open[group]
		out = append(out, fmt.Sprint(group, " ", most[group], " ", last[group].Sub(s[0].(time.Time)), " true ", s[1]))
	}
	return out
}

func frameOf(m msg) int {
	n, _ := m["frame"].(json.Number).Int64()
	return int(n)
}
