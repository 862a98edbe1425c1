package doctor

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/internal/plural"
)

// The latency checks, over the latency analysis: a window where several brokers slowed down
// together, and a broker slower than the others.

// waitingAPIs are the APIs whose answers wait by design, for data (Fetch, ShareFetch: up to
// fetch.max.wait.ms) or for the other members of a group (JoinGroup, SyncGroup): their latency
// says little of the broker's speed, even when the latency analysis does not count them as
// waits.
var waitingAPIs = []int16{codec.KeyFetch, codec.KeyJoinGroup, codec.KeySyncGroup, codec.KeyShareFetch}

// brokerP50s returns the median latency of each API and broker with enough answers to say it.
func (d *Doctor) brokerP50s(minCount int) map[int16][]analysis.BrokerLatency {
	out := map[int16][]analysis.BrokerLatency{}
	for _, b := range d.latency.Brokers() {
		if b.Count >= minCount && !slices.Contains(waitingAPIs, b.APIKey) {
			out[b.APIKey] = append(out[b.APIKey], b)
		}
	}
	return out
}

// stalled reports whether window w is slow for its broker, whose median latency is p50.
func stalled(w analysis.LatencyWindow, p50 time.Duration) bool {
	mean := w.Total / time.Duration(w.Count)
	return w.Count >= LatencyStallCount && mean >= LatencyStallMin && mean >= LatencyStallFactor*p50
}

func (d *Doctor) latencyStallFindings() []Finding {
	p50 := map[[2]any]time.Duration{}
	for _, bs := range d.brokerP50s(1) {
		for _, b := range bs {
			p50[[2]any{b.APIKey, b.Broker}] = b.P50
		}
	}
	type stall struct {
		api     string
		windows int
		brokers []string
		frames  []analysis.FrameRef
	}
	stalls := map[int16]*stall{}
	ws := d.latency.Windows() // by API, start, broker: a window's brokers follow each other
	for i := 0; i < len(ws); {
		j := i
		var slow []analysis.LatencyWindow
		for ; j < len(ws) && ws[j].APIKey == ws[i].APIKey && ws[j].Start.Equal(ws[i].Start); j++ {
			if base, ok := p50[[2]any{ws[j].APIKey, ws[j].Broker}]; ok && stalled(ws[j], base) {
				slow = append(slow, ws[j])
			}
		}
		i = j
		if len(slow) < LatencyStallBrokers {
			continue
		}
		s := stalls[slow[0].APIKey]
		if s == nil {
			s = &stall{api: slow[0].API}
			stalls[slow[0].APIKey] = s
		}
		s.windows++
		for _, w := range slow {
			s.brokers = addNames(s.brokers, []string{w.Broker})
			s.frames = append(s.frames, w.Slowest)
		}
	}
	var out []Finding
	for _, api := range sortedKeys(stalls, cmp.Compare[int16]) {
		s := stalls[api]
		slices.Sort(s.brokers)
		out = append(out, Finding{Severity: Warning, Evidence: framesEvidence(s.frames[:min(len(s.frames), analysis.MaxFrames)]),
			Title: fmt.Sprintf("%s: latency jumped on %d brokers together (%s) in %s of %s", s.api, len(s.brokers),
				strings.Join(s.brokers, ", "), plural.Count(s.windows, "window"), analysis.LatencyWindowLength)})
	}
	return out
}

func (d *Doctor) latencyOutlierFindings() []Finding {
	var out []Finding
	byAPI := d.brokerP50s(LatencyOutlierCount)
	for _, api := range sortedKeys(byAPI, cmp.Compare[int16]) {
		bs := byAPI[api]
		if len(bs) < 2 {
			continue
		}
		for _, b := range bs {
			var others []time.Duration
			for _, o := range bs {
				if o.Broker != b.Broker {
					others = append(others, o.P50)
				}
			}
			slices.Sort(others)
			typical := analysis.Percentile(others, 0.5)
			if b.P50 < LatencyOutlierFactor*typical || b.P50-typical < LatencyOutlierMin {
				continue
			}
			var frames []analysis.FrameRef
			for _, w := range d.latency.Windows() {
				if w.APIKey == api && w.Broker == b.Broker && len(frames) < analysis.MaxFrames {
					frames = append(frames, w.Slowest)
				}
			}
			out = append(out, Finding{Severity: Warning, Evidence: framesEvidence(frames),
				Title: fmt.Sprintf("%s: broker %s answers in %s (median of %d), the other brokers in %s", b.API, b.Broker,
					b.P50.Round(time.Microsecond), b.Count, typical.Round(time.Microsecond))})
		}
	}
	return out
}
