package analysis

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

// E2E answers "how long does a record take from its producer to each consumer": for each
// topic, partition and consuming client id, the time from the Produce request that holds a
// record to the first Fetch response that delivers the record's offset to that client.
//
// A record's offset comes from the Produce response (its partition's base offset, plus the
// record's place among the request's records); a Fetch response delivers every offset of the
// record batches it holds. Records produced with acks=0 get no offset and are left out.
type E2E struct {
	names topicNamer
	// produced holds Produce requests until their responses, with the record count of each
	// partition; fetching holds the client ids of Fetch requests until theirs.
	produced inFlight[*produceRequest]
	fetching inFlight[string]
	parts    map[partKey]*e2ePartition
}

// maxRanges bounds the produced ranges kept for one partition: past it, the oldest go, and
// records of theirs delivered later are not counted. Ranges are kept after every consumer seen
// has been given them, for consumers that come later (another group reading from the start).
const maxRanges = 1 << 14

// NewE2E returns an E2E that has seen no message.
func NewE2E() *E2E {
	return &E2E{parts: map[partKey]*e2ePartition{}}
}

type produceRequest struct {
	at     time.Time
	counts map[partKey]int64
}

// e2ePartition is what E2E keeps of a partition: the offsets produced (the last maxRanges
// Produce requests' worth, by offset), the consumers seen on it, and how many records took
// each latency to each consumer (by its index in consumers).
type e2ePartition struct {
	ranges    []produced
	consumers []string
	latencies []latencies
}

// produced is the offsets [base, end) of one Produce request's records in a partition, when
// they were produced, and how far each consumer got in them (by its index in consumers).
type produced struct {
	base, end int64
	at        time.Time
	next      []int64
}

// latencies holds how many records took each latency (in microseconds), as appended: a
// latency may come more than once until merge sorts and sums them. Appending costs less per
// delivery than a map; merging once the list has doubled keeps it near one entry a latency.
type latencies struct {
	seen   []latencyCount
	merged int // len(seen) after the last merge
}

type latencyCount struct{ us, n int64 }

func (l *latencies) add(us, n int64) {
	l.seen = append(l.seen, latencyCount{us, n})
	if len(l.seen) >= 2*l.merged+4096 {
		l.merge()
	}
}

// merge sorts seen by latency and sums the counts of each latency into one entry.
func (l *latencies) merge() {
	slices.SortFunc(l.seen, func(a, b latencyCount) int { return cmp.Compare(a.us, b.us) })
	out := l.seen[:0]
	for _, s := range l.seen {
		if len(out) > 0 && out[len(out)-1].us == s.us {
			out[len(out)-1].n += s.n
			continue
		}
		out = append(out, s)
	}
	l.seen, l.merged = out, len(out)
}

// Reads names the fields E2E reads beyond the facts: the base offsets of Produce responses,
// and the record batches of Fetch responses with their headers' baseOffset, lastOffsetDelta,
// attributes and recordsCount (named as codec/records names them): a decode that keeps only
// record counts (records.Options.CountsOnly) does not keep the offsets.
func (x *E2E) Reads() []Read {
	return []Read{
		{APIKey: codec.KeyProduce, Fields: []string{"TopicData", "Name", "TopicId", "PartitionData", "Index", "Records", "recordsCount"}},
		{APIKey: codec.KeyProduce, Response: true, Fields: []string{"Responses", "Name", "TopicId", "PartitionResponses", "Index", "ErrorCode", "BaseOffset"}},
		{APIKey: codec.KeyFetch, Response: true, Fields: []string{"Responses", "Topic", "TopicId", "Partitions", "PartitionIndex", "ErrorCode", "Records",
			"baseOffset", "lastOffsetDelta", "attributes", "recordsCount"}},
	}
}

// Add reads Produce and Fetch requests and their responses, and learns topic names from every
// message.
func (x *E2E) Add(e *model.Entry) {
	x.names.learn(e.Msg)
	stream, id := e.Stream, e.Msg.CorrelationID
	switch {
	case e.Msg.APIKey == codec.KeyProduce && e.Request && !e.NoResponse:
		x.produced.add(stream, id, x.produceRequest(e))
	case e.Msg.APIKey == codec.KeyProduce && !e.Request:
		if r, ok := x.produced.take(stream, id); ok {
			x.produceResponse(e, r)
		}
	case e.Msg.APIKey == codec.KeyFetch && e.Request:
		x.fetching.add(stream, id, clientID(e.Msg))
	case e.Msg.APIKey == codec.KeyFetch:
		if client, ok := x.fetching.take(stream, id); ok {
			x.fetchResponse(e, client)
		}
	}
}

// produceRequest counts the records a Produce request writes to each partition.
func (x *E2E) produceRequest(e *model.Entry) *produceRequest {
	r := &produceRequest{at: e.Time, counts: map[partKey]int64{}}
	x.names.eachPartition(bodyOf(e.Msg), "TopicData", func(p partKey, n *codec.Node) {
		var count int64
		eachBatch(findTop(n.Children, "Records"), func(b *codec.Node) {
			c, _ := intField(b, "recordsCount")
			count += max(c, 0)
		})
		if count > 0 {
			r.counts[p] += count
		}
	})
	return r
}

// produceResponse gives the records of r their offsets, from the base offset of each partition
// the broker wrote.
func (x *E2E) produceResponse(e *model.Entry, r *produceRequest) {
	x.names.eachPartition(bodyOf(e.Msg), "Responses", func(p partKey, n *codec.Node) {
		base, ok := intField(n, "BaseOffset")
		code, _ := intField(n, "ErrorCode")
		count := r.counts[p]
		if !ok || code != 0 || base < 0 || count == 0 || base > math.MaxInt64-count {
			return
		}
		part := x.parts[p]
		if part == nil {
			part = &e2ePartition{}
			x.parts[p] = part
		}
		rg := produced{base: base, end: base + count, at: r.at, next: make([]int64, len(part.consumers))}
		for i := range rg.next {
			rg.next[i] = base
		}
		// Responses come in the order the broker wrote, but those of several producers'
		// connections may be seen out of it.
		i, found := slices.BinarySearchFunc(part.ranges, base, func(g produced, b int64) int { return cmp.Compare(g.base, b) })
		if found {
			return // a retried batch the broker had written already: its records date from the first
		}
		part.ranges = slices.Insert(part.ranges, i, rg)
		if len(part.ranges) > maxRanges {
			part.ranges = slices.Delete(part.ranges, 0, len(part.ranges)-maxRanges)
		}
	})
}

// fetchResponse takes the offsets a Fetch response delivers to client.
func (x *E2E) fetchResponse(e *model.Entry, client string) {
	x.names.eachPartition(bodyOf(e.Msg), "Responses", func(p partKey, n *codec.Node) {
		part := x.parts[p]
		if code, _ := intField(n, "ErrorCode"); code != 0 || part == nil {
			return
		}
		c := part.consumer(client)
		eachBatch(findTop(n.Children, "Records"), func(b *codec.Node) {
			base, ok := intField(b, "baseOffset")
			delta, ok2 := intField(b, "lastOffsetDelta")
			if attrs, _ := intField(b, "attributes"); !ok || !ok2 || wire.Attributes(attrs).Has(wire.Control) {
				return
			}
			part.deliver(c, base, base+delta+1, e.Time)
		})
	})
}

// deliver counts the records of part in [lo, hi) that consumer c had not been given yet,
// delivered at t.
func (part *e2ePartition) deliver(c int, lo, hi int64, t time.Time) {
	// Ranges do not overlap, so they are sorted by their ends too.
	first := sort.Search(len(part.ranges), func(i int) bool { return part.ranges[i].end > lo })
	for i := first; i < len(part.ranges) && part.ranges[i].base < hi; i++ {
		g := &part.ranges[i]
		from, to := max(lo, g.next[c]), min(hi, g.end)
		if from >= to {
			continue
		}
		g.next[c] = to
		part.latencies[c].add(t.Sub(g.at).Microseconds(), to-from)
	}
}

// consumer is the index of client among the consumers of p, which it joins if it is new.
func (p *e2ePartition) consumer(client string) int {
	if i := slices.Index(p.consumers, client); i >= 0 {
		return i
	}
	p.consumers = append(p.consumers, client)
	p.latencies = append(p.latencies, latencies{})
	for i := range p.ranges {
		p.ranges[i].next = append(p.ranges[i].next, p.ranges[i].base)
	}
	return len(p.consumers) - 1
}

// eachBatch calls fn with each record batch of a records field.
func eachBatch(records *codec.Node, fn func(*codec.Node)) {
	if records == nil {
		return
	}
	for _, b := range records.Children {
		if b.Type == wire.RecordBatch {
			fn(b)
		}
	}
}

// Tables returns the e2e table, by topic, partition and consumer.
func (x *E2E) Tables() []model.Table {
	t := model.Table{Name: "e2e", Title: "End-to-end latency per topic, partition and consumer (ms, from the Produce request to the Fetch response delivering the record)",
		Columns: []model.Column{
			{Name: "topic", Kind: model.String},
			{Name: "partition", Kind: model.Int},
			{Name: "client_id", Head: "consumer", Kind: model.String},
			{Name: "records", Kind: model.Int},
			{Name: "p50_us", Head: "p50", Kind: model.Duration},
			{Name: "p99_us", Head: "p99", Kind: model.Duration},
			{Name: "max_us", Head: "max", Kind: model.Duration},
		}}
	type row struct {
		part   partKey
		client string
		h      histogram
	}
	var rows []row
	for p, part := range x.parts {
		for c := range part.latencies {
			if len(part.latencies[c].seen) > 0 { // a consumer that was given none of the records produced
				rows = append(rows, row{p, part.consumers[c], newHistogram(&part.latencies[c])})
			}
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.part.topic, b.part.topic), cmp.Compare(a.part.partition, b.part.partition), cmp.Compare(a.client, b.client))
	})
	for _, r := range rows {
		t.AddRow(r.part.topic, int64(r.part.partition), r.client, r.h.n, r.h.percentile(0.5), r.h.percentile(0.99), r.h.percentile(1))
	}
	return []model.Table{t}
}

// histogram is how many records took each latency, sorted by latency.
type histogram struct {
	us, count []int64
	n         int64
}

// newHistogram is the histogram of l, which it merges.
func newHistogram(l *latencies) histogram {
	l.merge()
	h := histogram{us: make([]int64, len(l.seen)), count: make([]int64, len(l.seen))}
	for i, s := range l.seen {
		h.us[i], h.count[i] = s.us, s.n
		h.n += s.n
	}
	return h
}

// percentile is the smallest latency at or above fraction p of the records, as the latency
// statistics take it: the ⌈n·p⌉-th smallest.
func (h histogram) percentile(p float64) time.Duration {
	rank := max(int64(float64(h.n)*p+0.999999), 1)
	var seen int64
	for i, c := range h.count {
		seen += c
		if seen >= rank {
			return time.Duration(h.us[i]) * time.Microsecond
		}
	}
	return time.Duration(h.us[len(h.us)-1]) * time.Microsecond
}
