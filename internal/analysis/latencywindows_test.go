package analysis_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
)

// TestLatencyWindows: the windows and per-broker medians the doctor reads (Latency.Windows,
// Latency.Brokers) add up to the latency table's broker rows: as many answers, waits left out,
// the same slowest, the same median; and each window's slowest answer is in it.
func TestLatencyWindows(t *testing.T) {
	for _, capture := range append(slices.Clone(realCaptures), "kgo-produce-retry.pcap", "kgo-group-848.pcap") {
		t.Run(capture, func(t *testing.T) {
			l := analysis.NewLatency()
			analyse(t, capture, l)
			type sum struct {
				count int64
				max   time.Duration
			}
			windows := map[string]*sum{}
			for _, w := range l.Windows() {
				if w.Count == 0 || w.Start != w.Start.Truncate(analysis.LatencyWindowLength) ||
					w.Slowest.Time.Before(w.Start) || !w.Slowest.Time.Before(w.Start.Add(analysis.LatencyWindowLength)) {
					t.Errorf("window %+v: empty, or its slowest answer is not in it", w)
				}
				k := fmt.Sprint(w.APIKey, " ", w.Broker)
				if windows[k] == nil {
					windows[k] = &sum{}
				}
				windows[k].count += int64(w.Count)
				windows[k].max = max(windows[k].max, w.Max)
			}
			medians := map[string]time.Duration{}
			for _, b := range l.Brokers() {
				medians[fmt.Sprint(b.APIKey, " ", b.Broker)] = b.P50
			}
			rows := 0
			for _, r := range l.Tables()[0].Rows {
				if r[2] != "broker" || r[6] == nil {
					continue
				}
				rows++
				k := fmt.Sprint(r[0], " ", r[3])
				w := windows[k]
				if w == nil || w.count != r[4].(int64)-r[5].(int64) || w.max != r[9] || medians[k] != r[6] {
					t.Errorf("%s: windows %+v, median %s; the table says %v", k, w, medians[k], r)
				}
			}
			if rows == 0 || rows != len(windows) || rows != len(medians) {
				t.Errorf("%d broker rows, %d APIs and brokers in windows, %d medians", rows, len(windows), len(medians))
			}
		})
	}
}
