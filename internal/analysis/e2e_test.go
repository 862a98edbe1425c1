package analysis_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
)

// e2eKey is a topic, partition and consuming client id.
type e2eKey struct {
	part   jsonPart
	client string
}

// e2eFromJSON computes the e2e table from JSON lines, record by record: each record of a
// Produce request gets its offset from the response's base offset and its place among the
// request's records; each record of a Fetch response is delivered at its batch's base offset
// plus its offset delta, and counts the first time it reaches a client.
func e2eFromJSON(lines []jsonLine) [][]any {
	type produce struct {
		at     time.Time
		counts map[jsonPart]int64
	}
	producing := map[[2]int64]*produce{}
	fetching := map[[2]int64]string{}
	producedAt := map[jsonPart]map[int64]time.Time{}
	delivered := map[e2eKey]map[int64]bool{}
	latencies := map[e2eKey][]time.Duration{}
	for _, l := range lines {
		k := [2]int64{int64(l.Stream), int64(l.CorrelationID)}
		switch {
		case l.APIKey == 0 && l.Kind == "request":
			p := &produce{at: l.Time, counts: map[jsonPart]int64{}}
			partitions(l.Fields, "TopicData", func(tp jsonPart, f []*jsonNode) {
				p.counts[tp] += int64(len(records(child(f, "Records"))))
			})
			producing[k] = p
		case l.APIKey == 0:
			p := producing[k]
			if p == nil {
				continue
			}
			partitions(l.Fields, "Responses", func(tp jsonPart, f []*jsonNode) {
				base, _ := num(f, "BaseOffset")
				if code, _ := num(f, "ErrorCode"); code != 0 || base < 0 {
					return
				}
				if producedAt[tp] == nil {
					producedAt[tp] = map[int64]time.Time{}
				}
				for o := base; o < base+p.counts[tp]; o++ {
					producedAt[tp][o] = p.at
				}
			})
		case l.APIKey == 1 && l.Kind == "request":
			fetching[k] = *l.ClientID
		case l.APIKey == 1:
			client, ok := fetching[k]
			if !ok {
				continue
			}
			partitions(l.Fields, "Responses", func(tp jsonPart, f []*jsonNode) {
				key := e2eKey{tp, client}
				for _, o := range records(child(f, "Records")) {
					at, ok := producedAt[tp][o]
					if !ok || delivered[key][o] {
						continue
					}
					if delivered[key] == nil {
						delivered[key] = map[int64]bool{}
					}
					delivered[key][o] = true
					latencies[key] = append(latencies[key], l.Time.Sub(at))
				}
			})
		}
	}
	var rows [][]any
	for k, ls := range latencies {
		slices.Sort(ls)
		rank := func(p float64) time.Duration { return ls[int(math.Ceil(float64(len(ls))*p))-1] }
		rows = append(rows, []any{k.part.Topic, int64(k.part.Partition), k.client, int64(len(ls)), rank(0.5), rank(0.99), ls[len(ls)-1]})
	}
	sortRows(rows)
	return rows
}

// records is the offsets of the records of a records field's batches (control batches left
// out), from each batch's base offset and each record's offset delta.
func records(field *jsonNode) []int64 {
	if field == nil {
		return nil
	}
	var out []int64
	for _, b := range field.Fields {
		if b.Type != "record_batch" {
			continue
		}
		base, _ := num(b.Fields, "baseOffset")
		if a := child(b.Fields, "attributes"); a != nil && a.Bits["isControlBatch"] != 0 {
			continue
		}
		var walk func(ns []*jsonNode)
		walk = func(ns []*jsonNode) {
			for _, n := range ns {
				if n.Type == "record" {
					d, _ := num(n.Fields, "offsetDelta")
					out = append(out, base+d)
					continue
				}
				walk(n.Fields)
			}
		}
		walk(b.Fields)
	}
	return out
}

func TestE2EMatchesJSON(t *testing.T) {
	for _, capture := range realCaptures {
		t.Run(capture, func(t *testing.T) {
			want := e2eFromJSON(jsonLines(t, capture))
			x := analysis.NewE2E()
			analyse(t, capture, x)
			tables := x.Tables()
			if len(tables) != 1 || tables[0].Name != "e2e" {
				t.Fatalf("tables %v", tables)
			}
			if len(want) == 0 {
				t.Fatal("no record produced and fetched in the capture")
			}
			compareRows(t, tables[0], want)
		})
	}
}
