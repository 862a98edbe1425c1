package doctor

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
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
