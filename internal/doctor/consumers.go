package doctor

import (
	"fmt"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
)

// The consumers' checks, over the lag analysis: lag rising, and partitions a consumer fetches
// without getting anywhere.

// partitionName names a client's partition in a title.
func partitionName(p analysis.LagSummary) string {
	return fmt.Sprintf("client id %q, %s[%d]", p.ClientID, p.Topic, p.Partition)
}

func (d *Doctor) lagGrowingFindings() []Finding {
	var out []Finding
	for _, p := range d.lag.Partitions() {
		if !p.HasLag || p.LastLag-p.FirstLag < LagGrowingMin {
			continue
		}
		out = append(out, Finding{Severity: Warning, Evidence: framesEvidence([]analysis.FrameRef{p.FirstLagAt, p.LastLagAt}),
			Title: fmt.Sprintf("%s: lag rose from %d to %d records in %s", partitionName(p), p.FirstLag, p.LastLag,
				p.LastLagAt.Time.Sub(p.FirstLagAt.Time).Round(time.Millisecond))})
	}
	return out
}

func (d *Doctor) stalledFindings() []Finding {
	var out []Finding
	for _, p := range d.lag.Partitions() {
		if p.Fetches < StalledFetchesMin || p.Moved || p.Offset < 0 || p.Readable <= 0 {
			continue
		}
		out = append(out, Finding{Severity: Warning, Evidence: framesEvidence(p.Frames),
			Title: fmt.Sprintf("%s: %d fetches, all at offset %d, with %d records to read", partitionName(p), p.Fetches, p.Offset, p.Readable)})
	}
	return out
}
