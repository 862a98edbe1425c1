package analysis_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/kdissect/kdissect/internal/analysis"
)

// producerCaptures hold Produce requests of idempotent, plain and transactional producers,
// with every codec.
var producerCaptures = []string{"kgo-codecs.pcap", "sarama-codecs.pcap", "kgo-produce-fetch.pcap",
	"sarama-produce-consume.pcap", "kafkago-produce-consume.pcap", "kgo-transactions.pcap", "kgo-group-3brokers.pcap",
	"kgo-txn-groups.pcap", "kgo-produce-retry.pcap"}

// TestProducers: each producer's batches, as the JSON lines show them, with records decoded
// in full (decompressed sizes known) and headers only (not known).
func TestProducers(t *testing.T) {
	seen := map[string]bool{}
	for _, mode := range []string{"full", "headers"} {
		for _, name := range producerCaptures {
			t.Run(mode+"/"+name, func(t *testing.T) {
				got := table(t, name, mode, analysis.NewProducers())
				want := wantProducers(t, messages(t, name, mode))
				compare(t, name, got, want)
				for _, r := range want {
					seen["retry"] = seen["retry"] || r[15] == int64(1)
					seen["unknown size"] = seen["unknown size"] || r[12] == nil
					seen["compressed"] = seen["compressed"] || r[13] != nil && r[13].(float64) > 1
					seen["epoch bump"] = seen["epoch bump"] || r[17] == true
					seen["error"] = seen["error"] || len(r[18].([]string)) > 0
				}
			})
		}
	}
	// The captures must show what the table is for, or the comparisons check little.
	for _, what := range []string{"retry", "unknown size", "compressed", "epoch bump", "error"} {
		if !seen[what] {
			t.Errorf("no capture shows a producer with %s", what)
		}
	}
}

// wantProducer is a producer's row as the test sees it.
type wantProducer struct {
	client                   string
	id, epoch                int64
	transactional            bool
	perBatch, sizes          []int64
	codecs, errs             []string
	compressed, decompressed int64
	unknown                  bool
	// seen holds every sequence number seen per partition.
	seen            map[string]map[int64]bool
	gaps, dups, ooo int64
}

var codecNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// wantProducers computes the producers table from a capture's messages.
func wantProducers(t *testing.T, ms []msg) [][]any {
	rows := map[string]*wantProducer{}
	var order []*wantProducer
	touched := map[string][]*wantProducer{}
	for _, m := range ms {
		if m.api() != "Produce" {
			continue
		}
		if !m.request() {
			for _, r := range touched[m.key()] {
				for _, e := range errs(m) {
					if !slices.Contains(r.errs, e) {
						r.errs = append(r.errs, e)
					}
				}
			}
			continue
		}
		client, _ := m["client_id"].(string)
		for _, topic := range fields(get(m, "TopicData")) {
			name := get(topic, "Name").str()
			if id := get(topic, "TopicId"); id != nil {
				name, _ = id["topic"].(string)
			}
			for _, p := range fields(get(topic, "PartitionData")) {
				part := fmt.Sprint(name, "/", get(p, "Index").int(t))
				for _, b := range fields(get(p, "Records")) {
					if b["type"] != "record_batch" {
						continue
					}
					r := wantBatch(t, rows, &order, client, part, b)
					if r != nil && !slices.Contains(touched[m.key()], r) {
						touched[m.key()] = append(touched[m.key()], r)
					}
				}
			}
		}
	}
	var out [][]any
	for _, r := range order {
		out = append(out, r.row(order))
	}
	return out
}

// wantBatch adds a record batch to its producer's row.
func wantBatch(t *testing.T, rows map[string]*wantProducer, order *[]*wantProducer, client, part string, b node) *wantProducer {
	bits := get(b, "attributes")["bits"].(map[string]any)
	bit := func(name string) int64 { v, _ := bits[name].(json.Number).Int64(); return v }
	if bit("isControlBatch") == 1 {
		return nil
	}
	id, epoch, seq := get(b, "producerId").int(t), get(b, "producerEpoch").int(t), get(b, "baseSequence").int(t)
	if id < 0 {
		epoch = -1
	}
	k := fmt.Sprint(client, "/", id, "/", epoch)
	r := rows[k]
	if r == nil {
		r = &wantProducer{client: client, id: id, epoch: epoch, seen: map[string]map[int64]bool{}}
		rows[k] = r
		*order = append(*order, r)
	}
	count := get(b, "recordsCount").int(t)
	r.transactional = r.transactional || bit("isTransactional") == 1
	r.perBatch = append(r.perBatch, count)
	r.sizes = append(r.sizes, b.int64("size"))
	codec := codecNames[bit("compression")]
	if !slices.Contains(r.codecs, codec) {
		r.codecs = append(r.codecs, codec)
	}
	recs := get(b, "records")
	r.compressed += recs.int64("size")
	switch inner := fields(recs); {
	case codec == "none":
		r.decompressed += recs.int64("size")
	case len(inner) > 0:
		last := inner[len(inner)-1]
		r.decompressed += last.int64("offset") + last.int64("size")
	default:
		r.unknown = true
	}
	seen := r.seen[part]
	if seen == nil {
		seen = map[int64]bool{}
		r.seen[part] = seen
	}
	if id >= 0 && seq >= 0 && count > 0 {
		if len(seen) > 0 {
			next := int64(-1)
			all := true
			for s := range seen {
				next = max(next, s+1)
			}
			for s := seq; s < seq+count; s++ {
				all = all && seen[s]
			}
			switch {
			case all:
				r.dups++
			case seq > next:
				r.gaps++
			case seq < next:
				r.ooo++
			}
		}
		for s := seq; s < seq+count; s++ {
			seen[s] = true
		}
	}
	return r
}

func (n node) int64(key string) int64 {
	v, _ := n[key].(json.Number).Int64()
	return v
}

// row is the producer's row of the table.
func (r *wantProducer) row(all []*wantProducer) []any {
	mid := func(v []int64) int64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return s[(len(s)-1)/2]
	}
	var decompressed, ratio any
	if !r.unknown {
		decompressed, ratio = r.decompressed, float64(r.decompressed)/float64(r.compressed)
	}
	var gaps, dups, ooo, bumped any
	if r.id >= 0 {
		b := false
		for _, o := range all {
			b = b || o.id == r.id && o.epoch < r.epoch
		}
		gaps, dups, ooo, bumped = r.gaps, r.dups, r.ooo, b
	}
	var total int64
	for _, n := range r.perBatch {
		total += n
	}
	return []any{r.client, r.id, r.epoch, r.transactional, int64(len(r.seen)), int64(len(r.perBatch)), total,
		mid(r.perBatch), slices.Max(r.perBatch), mid(r.sizes), r.codecs, r.compressed, decompressed, ratio,
		gaps, dups, ooo, bumped, orEmpty(r.errs)}
}
