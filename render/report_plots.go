package render

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/internal/doctor"
)

// The four pictures of the doctor's report (Report).

// writeLatencyPlot draws the latency of every answered request over time, a colour per broker:
// the answers in one panel, the waits by design in another under it, each with its own scale.
func writeLatencyPlot(b *strings.Builder, s doctor.Series, ax timeAxis) {
	answers, waits := s.Latency.Marks(), s.Waits.Marks()
	empty := ""
	if len(answers)+len(waits) == 0 {
		empty = "No answered request in this capture: no response whose request was captured too."
	}
	caption := "Each mark is one answer: how long the broker took (ms) from the request to the response, at the response's time." +
		" Waits are answers that wait by design (a Fetch answered empty after most of its MaxWaitMs, a JoinGroup, a follower's SyncGroup):" +
		" they are drawn apart, as they say nothing of the broker's speed. A vertical bar is a bucket of answers, from the fastest to the slowest, its dot their mean." +
		bucketNote(s.Latency) + bucketNote(s.Waits)
	figure(b, "latency", "Latency per broker", caption, empty, func() {
		lines := lineNames(answers, waits)
		latencyPanel(b, "latency-answers", "Answers (waits left out)", answers, lines, ax)
		latencyPanel(b, "latency-waits", "Waits by design", waits, lines, ax)
	})
}

// latencyPanel draws one panel of the latency plot: a mark per answer, or per bucket of them.
func latencyPanel(b *strings.Builder, plot, title string, marks []analysis.Mark, lines []string, ax timeAxis) {
	svgOpen(b, plot, title, plotSVGH)
	fmt.Fprintf(b, "<text class=\"t\" x=\"%d\" y=\"%d\">%s (%d)</text>\n", plotLeft+4, plotTop-10, title, count(marks))
	va := newValueAxis(maxOf(marks))
	valueTicks(b, va, "ms")
	timeTicks(b, ax, plotLeft, plotRight, plotTop, plotBottom)
	colour := colours(lines)
	for _, m := range marks {
		x := px(ax.x(m.Start.Add(m.Width/2), plotLeft, plotRight))
		tip := fmt.Sprintf("%s: %.3f ms at %s", m.Line, m.Mean(), m.Start.UTC().Format("15:04:05.000000"))
		if m.Width == 0 {
			fmt.Fprintf(b, "<circle class=\"mark\" cx=\"%s\" cy=\"%s\" r=\"2.5\" fill=\"%s\"><title>%s</title></circle>\n",
				x, px(va.y(m.Max, plotTop, plotBottom)), colour[m.Line], esc(tip))
			continue
		}
		tip = fmt.Sprintf("%s: %d answers from %s, %.3f to %.3f ms, mean %.3f", m.Line, m.Count,
			m.Start.UTC().Format("15:04:05.000000"), m.Min, m.Max, m.Mean())
		fmt.Fprintf(b, "<g class=\"mark\" data-count=\"%d\"><title>%s</title><line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\"/>"+
			"<circle cx=\"%s\" cy=\"%s\" r=\"2\" fill=\"%s\"/></g>\n", m.Count, esc(tip), x, px(va.y(m.Min, plotTop, plotBottom)),
			x, px(va.y(m.Max, plotTop, plotBottom)), colour[m.Line], x, px(va.y(m.Mean(), plotTop, plotBottom)), colour[m.Line])
	}
	legend(b, lines)
	b.WriteString("</svg>\n")
}

// count is how many values the marks hold.
func count(ms []analysis.Mark) int {
	n := 0
	for _, m := range ms {
		n += m.Count
	}
	return n
}

// writeLagPlot draws each client's lag on each partition over time: a line per partition.
func writeLagPlot(b *strings.Builder, s doctor.Series, ax timeAxis) {
	marks := s.Lag.Marks()
	empty := ""
	if len(marks) == 0 {
		empty = "No lag measured: no Fetch response in this capture gave a high watermark for a partition whose fetch offset was seen."
	}
	caption := "The lag of each consumer (client id) on each partition it fetched: the high watermark a Fetch response gave," +
		" minus the fetch offset of its request, in records, at the response's time. A point is one response" +
		" (or the largest lag of a bucket)." + bucketNote(s.Lag)
	figure(b, "lag", "Lag per partition of each consumer", caption, empty, func() {
		lines := lineNames(marks)
		svgOpen(b, "lag", "lag per partition", plotSVGH)
		va := newValueAxis(maxOf(marks))
		valueTicks(b, va, "records")
		timeTicks(b, ax, plotLeft, plotRight, plotTop, plotBottom)
		colour := colours(lines)
		polylines(b, marks, colour, func(m analysis.Mark) (float64, float64) {
			return ax.x(m.Start.Add(m.Width/2), plotLeft, plotRight), va.y(m.Max, plotTop, plotBottom)
		}, "")
		for _, m := range marks {
			fmt.Fprintf(b, "<circle class=\"mark\" cx=\"%s\" cy=\"%s\" r=\"2\" fill=\"%s\"><title>%s</title></circle>\n",
				px(ax.x(m.Start.Add(m.Width/2), plotLeft, plotRight)), px(va.y(m.Max, plotTop, plotBottom)), colour[m.Line],
				esc(fmt.Sprintf("%s: lag %.0f at %s", m.Line, m.Max, m.Start.UTC().Format("15:04:05.000000"))))
		}
		legend(b, lines)
		b.WriteString("</svg>\n")
	})
}

// polylines draws a line through the marks of each line (marks are by line, then time).
func polylines(b *strings.Builder, marks []analysis.Mark, colour map[string]string, at func(analysis.Mark) (float64, float64), dash string) {
	for i := 0; i < len(marks); {
		j := i
		var pts []string
		for ; j < len(marks) && marks[j].Line == marks[i].Line; j++ {
			x, y := at(marks[j])
			pts = append(pts, px(x)+","+px(y))
		}
		if dash != "" {
			dash = " stroke-dasharray=\"" + dash + "\""
		}
		fmt.Fprintf(b, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s/>\n", strings.Join(pts, " "), colour[marks[i].Line], dash)
		i = j
	}
}

// writeThroughputPlot draws the bytes per second each topic carried: produced (solid) and
// fetched (dashed), per bucket of time.
func writeThroughputPlot(b *strings.Builder, s doctor.Series, ax timeAxis) {
	produced, fetched := fill(s.Produced), fill(s.Fetched)
	empty := ""
	if len(produced)+len(fetched) == 0 {
		empty = "No records in this capture: no Produce request or Fetch response carried any."
	}
	width := max(s.Produced.Width(), s.Fetched.Width())
	caption := fmt.Sprintf("The bytes of records each topic carried per second, in buckets of %s: produced (Produce requests, solid)"+
		" and fetched (Fetch responses, dashed). A consumer fetching a topic twice counts its bytes twice.", width)
	figure(b, "throughput", "Throughput per topic", caption, empty, func() {
		lines := lineNames(produced, fetched)
		rate := func(m analysis.Mark) float64 { return m.Sum / m.Width.Seconds() }
		top := 0.0
		for _, m := range slices.Concat(produced, fetched) {
			top = max(top, rate(m))
		}
		scale, unit := byteUnit(top)
		svgOpen(b, "throughput", "throughput per topic", plotSVGH)
		va := newValueAxis(top / scale)
		valueTicks(b, va, unit)
		timeTicks(b, ax, plotLeft, plotRight, plotTop, plotBottom)
		colour := colours(lines)
		polylines(b, stepped(produced), colour, func(m analysis.Mark) (float64, float64) {
			return ax.x(m.Start, plotLeft, plotRight), va.y(rate(m)/scale, plotTop, plotBottom)
		}, "")
		polylines(b, stepped(fetched), colour, func(m analysis.Mark) (float64, float64) {
			return ax.x(m.Start, plotLeft, plotRight), va.y(rate(m)/scale, plotTop, plotBottom)
		}, "5 3")
		legend(b, lines, fmt.Sprintf("<line x1=\"%d\" y1=\"$Y\" x2=\"%d\" y2=\"$Y\" stroke=\"#7f7f7f\" stroke-width=\"1.5\"/><text x=\"%d\" y=\"$Y\" dominant-baseline=\"middle\">produced</text>", legendX, legendX+10, legendX+14),
			fmt.Sprintf("<line x1=\"%d\" y1=\"$Y\" x2=\"%d\" y2=\"$Y\" stroke=\"#7f7f7f\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/><text x=\"%d\" y=\"$Y\" dominant-baseline=\"middle\">fetched</text>", legendX, legendX+10, legendX+14))
		b.WriteString("</svg>\n")
	})
}

// fill returns the buckets of a bucketed series with the empty buckets between the first and
// the last of each line, as zeros: a line drops to 0 where nothing was carried.
func fill(s *analysis.Series) []analysis.Mark {
	var out []analysis.Mark
	ms := s.Marks()
	for i, m := range ms {
		if i > 0 && ms[i-1].Line == m.Line {
			for t := ms[i-1].Start.Add(m.Width); t.Before(m.Start) && len(out) < 4*analysis.SeriesLimit; t = t.Add(m.Width) {
				out = append(out, analysis.Mark{Line: m.Line, Start: t, Width: m.Width})
			}
		}
		out = append(out, m)
	}
	return out
}

// stepped returns each bucket twice, at its start and at its end, so that a line through them
// draws each bucket as a step, as wide as the bucket: one bucket is a line too.
func stepped(ms []analysis.Mark) []analysis.Mark {
	out := make([]analysis.Mark, 0, 2*len(ms))
	for _, m := range ms {
		end := m
		end.Start = m.Start.Add(m.Width)
		out = append(out, m, end)
	}
	return out
}

// byteUnit is the unit of a rate of up to top bytes per second, and its size.
func byteUnit(top float64) (float64, string) {
	switch {
	case top >= 1e9:
		return 1e9, "GB/s"
	case top >= 1e6:
		return 1e6, "MB/s"
	case top >= 1e4:
		return 1e3, "kB/s"
	}
	return 1, "B/s"
}

// spanOf is when a rebalance began and ended, in the capture when it does not show either.
func spanOf(r analysis.RebalanceSummary, first, last time.Time) (time.Time, time.Time) {
	start, end := r.Start, r.End
	if start.IsZero() {
		start = first
	}
	if end.IsZero() {
		end = last
	}
	return start, end
}

// groupLanes is one group's part of the timeline: its members, in the order they first show,
// its rebalances and its members' joins and leaves.
type groupLanes struct {
	name       string
	members    []string
	rebalances []analysis.RebalanceSummary
	events     []analysis.MemberEvent
}

// maxGroups bounds the groups the timeline draws.
const maxGroups = 20

// timelineGroups gathers each group's lanes from the series, by group name.
func timelineGroups(s doctor.Series) []*groupLanes {
	byName := map[string]*groupLanes{}
	var names []string
	get := func(name string) *groupLanes {
		g := byName[name]
		if g == nil {
			g = &groupLanes{name: name}
			byName[name] = g
			names = append(names, name)
		}
		return g
	}
	type seen struct {
		member string
		at     time.Time
	}
	firsts := map[string][]seen{}
	for _, r := range s.Rebalances {
		g := get(r.Group)
		g.rebalances = append(g.rebalances, r)
		start, _ := spanOf(r, s.First, s.Last)
		for _, m := range slices.Concat([]string{r.Member}, r.Members) {
			if m != "" {
				firsts[r.Group] = append(firsts[r.Group], seen{m, start})
			}
		}
	}
	for _, e := range s.Events {
		g := get(e.Group)
		g.events = append(g.events, e)
		firsts[e.Group] = append(firsts[e.Group], seen{e.Member, e.Time})
	}
	slices.Sort(names)
	out := make([]*groupLanes, 0, len(names))
	for _, name := range names {
		g := byName[name]
		fs := firsts[name]
		slices.SortStableFunc(fs, func(a, b seen) int { return a.at.Compare(b.at) })
		for _, f := range fs {
			if !slices.Contains(g.members, f.member) {
				g.members = append(g.members, f.member)
			}
		}
		out = append(out, g)
	}
	return out
}

// writeTimeline draws each consumer group: its members as lanes, its generations (or members'
// epochs) as bands, its rebalances shaded, and its members' joins and leaves marked.
func writeTimeline(b *strings.Builder, s doctor.Series, ax timeAxis) {
	groups := timelineGroups(s)
	empty := ""
	if len(groups) == 0 {
		empty = "No consumer group in this capture: no JoinGroup, SyncGroup, LeaveGroup or group heartbeat was seen."
	}
	caption := "A lane per member, named by its member id. A classic group's generations are bands across its lanes," +
		" from the end of the rebalance that made them to the start of the next; the rebalances themselves, from the first" +
		" JoinGroup request to the last SyncGroup response, are shaded. A heartbeat-protocol group (KIP-848) rebalances member" +
		" by member: on each member's lane, its rebalances are shaded, from the partitions revoked (or its heartbeat)" +
		" to its new epoch and the last partitions it waited for, and marked with the epoch it got (e2)." +
		" ▲ a member joined (its JoinGroup, or first heartbeat, answered), ✕ it left (LeaveGroup, or a heartbeat with a negative epoch)."
	if s.MoreEvents > 0 {
		caption += fmt.Sprintf(" The first %d joins and leaves are marked; %d more are not.", len(s.Events), s.MoreEvents)
	}
	if len(groups) > maxGroups {
		caption += fmt.Sprintf(" The first %d groups of %d, by name.", maxGroups, len(groups))
		groups = groups[:maxGroups]
	}
	figure(b, "timeline", "Consumer group timeline", caption, empty, func() {
		for _, g := range groups {
			groupTimeline(b, g, s, ax)
		}
	})
}

// groupTimeline draws one group's lanes.
func groupTimeline(b *strings.Builder, g *groupLanes, s doctor.Series, ax timeAxis) {
	top := plotTop + 14
	bottom := top + laneHeight*max(len(g.members), 1)
	svgOpen(b, "timeline", "group "+g.name, bottom+44)
	fmt.Fprintf(b, "<text class=\"t\" x=\"4\" y=\"%d\">group %s (%d members, %d rebalances)</text>\n", plotTop-8, esc(g.name),
		len(g.members), len(g.rebalances))
	xf := func(t time.Time) float64 { return ax.x(t, laneLeft, plotRight) }
	x := func(t time.Time) string { return px(xf(t)) }
	lane := func(member string) int { return top + laneHeight*slices.Index(g.members, member) }
	generationBands(b, g, s, xf, top, bottom)
	for _, m := range g.members {
		y := lane(m)
		fmt.Fprintf(b, "<g class=\"lane\" data-lane=\"%s\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><text x=\"4\" y=\"%d\">%s<title>%s</title></text></g>\n",
			esc(m), laneLeft, y+laneHeight, plotRight, y+laneHeight, y+laneHeight/2+4, esc(short(m)), esc(m))
	}
	for _, r := range g.rebalances {
		if r.Member == "" || !slices.Contains(g.members, r.Member) {
			continue
		}
		start, end := spanOf(r, s.First, s.Last)
		y := lane(r.Member)
		fmt.Fprintf(b, "<rect class=\"rebalance\" x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\"><title>%s</title></rect><text x=\"%s\" y=\"%d\">e%d</text>\n",
			x(start), y+3, px(max(xf(end)-xf(start), 2)), laneHeight-6,
			esc(fmt.Sprintf("%s: epoch %d, %s", r.Member, r.Generation, end.Sub(start).Round(time.Microsecond))), x(end), y+laneHeight/2+4, r.Generation)
	}
	for _, e := range g.events {
		y := lane(e.Member) + laneHeight/2
		cx := xf(e.Time)
		what, shape := "joined", fmt.Sprintf("<path d=\"M%s %s L%s %s L%s %s Z\" fill=\"#009e73\"", px(cx), px(float64(y-5)), px(cx-5), px(float64(y+4)), px(cx+5), px(float64(y+4)))
		if e.Leave {
			what = "left"
			shape = fmt.Sprintf("<path d=\"M%s %s L%s %s M%s %s L%s %s\" stroke=\"#d55e00\" stroke-width=\"2\"", px(cx-4), px(float64(y-4)), px(cx+4), px(float64(y+4)),
				px(cx-4), px(float64(y+4)), px(cx+4), px(float64(y-4)))
		}
		fmt.Fprintf(b, "%s class=\"event\"><title>%s</title></path>\n", shape, esc(fmt.Sprintf("%s %s at %s", e.Member, what, e.Time.UTC().Format("15:04:05.000000"))))
	}
	timeTicks(b, ax, laneLeft, plotRight, float64(top), float64(bottom))
	b.WriteString("</svg>\n")
}

// generationBands draws a classic group's generations across its lanes: the rebalance that
// made each shaded, then the generation until the next one's rebalance begins.
func generationBands(b *strings.Builder, g *groupLanes, s doctor.Series, x func(time.Time) float64, top, bottom int) {
	var classic []analysis.RebalanceSummary
	for _, r := range g.rebalances {
		if r.Member == "" {
			classic = append(classic, r)
		}
	}
	slices.SortStableFunc(classic, func(a, b analysis.RebalanceSummary) int {
		as, _ := spanOf(a, s.First, s.Last)
		bs, _ := spanOf(b, s.First, s.Last)
		return as.Compare(bs)
	})
	for i, r := range classic {
		start, end := spanOf(r, s.First, s.Last)
		until := s.Last
		if i+1 < len(classic) {
			until, _ = spanOf(classic[i+1], s.First, s.Last)
		}
		if until.After(end) {
			fmt.Fprintf(b, "<rect class=\"gen\" x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\"/><text x=\"%s\" y=\"%d\">generation %d</text>\n",
				px(x(end)), top, px(x(until)-x(end)), bottom-top, px(x(end)+2), top-2, r.Generation)
		}
		fmt.Fprintf(b, "<rect class=\"rebalance\" x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\"><title>%s</title></rect>\n",
			px(x(start)), top, px(max(x(end)-x(start), 2)), bottom-top,
			esc(fmt.Sprintf("rebalance to generation %d: %s", r.Generation, end.Sub(start).Round(time.Microsecond))))
	}
}
