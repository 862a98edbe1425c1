package analysis

import (
	"cmp"
	"slices"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

// Producers answers "who produced what, how, and did anything go missing?": one row per
// producer (client id, producer id and epoch) with the record batches of its Produce requests,
// their compression, and the checks an idempotent producer's sequence numbers allow, per
// partition: a batch that starts past the next sequence (a gap), one whose sequences were all
// seen before (a duplicate: a retry), one that starts before the next sequence with some never
// seen (out of order).
type Producers struct {
	rows  map[producerKey]*producerRow
	order []*producerRow
	held  pairs[[]*producerRow]
	// scratch holds the nodes of records fields decoded one batch at a time (EachRecord).
	scratch codec.Nodes
}

// NewProducers returns an empty Producers.
func NewProducers() *Producers { return &Producers{rows: map[producerKey]*producerRow{}} }

// producerKey identifies a producer; producer id and epoch are -1 for one that is not
// idempotent.
type producerKey struct {
	client string
	id     int64
	epoch  int64
}

type producerRow struct {
	producerKey
	transactional bool
	records       int64
	// perBatch and batchBytes hold each batch's record count and size.
	perBatch, batchBytes     []int64
	codecs                   []string
	compressed, decompressed int64
	// inflatedUnknown: some compressed batch was not decompressed, so decompressed is not known.
	inflatedUnknown bool
	partitions      map[topicPartition]*sequences
	gaps, dups, ooo int64
	errs            []string
	// frames, gapFrames and dupFrames are the frames of the Produce requests that carried the
	// producer's batches, and those with a gap or a duplicate (with the first sending of the
	// batch, when it is among the partition's recent ones): the first MaxFrames of each.
	frames, gapFrames, dupFrames []FrameRef
}

type topicPartition struct {
	topic     string
	partition int64
}

// sequences are the sequence numbers seen of one producer on one partition: ranges [lo, hi),
// sorted, apart; and the last recentBatches batches sent, where a retry finds its first
// sending.
type sequences struct {
	seen   [][2]int64
	recent [recentBatches]sentBatch
	sent   int // batches noted in recent, in all: the next goes to recent[sent%recentBatches]
}

// recentBatches is how many batches of a partition are remembered for their retries: a
// producer retries the batches it has in flight, 5 per connection by default
// (max.in.flight.requests.per.connection).
const recentBatches = 8

// sentBatch is a batch sent: its first sequence number, and the request that carried it.
type sentBatch struct {
	base  int64
	frame FrameRef
}

// note notes the batch from sequence base sent in frame; first returns the request that
// first sent the batch from base, among the recent ones.
func (s *sequences) note(base int64, frame FrameRef) {
	s.recent[s.sent%recentBatches] = sentBatch{base, frame}
	s.sent++
}

func (s *sequences) first(base int64) (FrameRef, bool) {
	for i := max(0, s.sent-recentBatches); i < s.sent; i++ {
		if b := s.recent[i%recentBatches]; b.base == base {
			return b.frame, true
		}
	}
	return FrameRef{}, false
}

// check classifies a batch of n records from sequence base against the sequences seen, then
// notes them as seen.
func (s *sequences) check(base, n int64) (gap, dup, outOfOrder bool) {
	if len(s.seen) > 0 && n > 0 {
		next := s.seen[len(s.seen)-1][1]
		switch {
		case s.covers(base, base+n):
			dup = true
		case base > next:
			gap = true
		case base < next:
			outOfOrder = true
		}
	}
	if n > 0 {
		s.add(base, base+n)
	}
	return gap, dup, outOfOrder
}

func (s *sequences) covers(lo, hi int64) bool {
	for _, r := range s.seen {
		if r[0] <= lo && hi <= r[1] {
			return true
		}
	}
	return false
}

// add merges [lo, hi) into the ranges seen.
func (s *sequences) add(lo, hi int64) {
	out := s.seen[:0:0]
	for _, r := range s.seen {
		switch {
		case r[1] < lo || hi < r[0]:
			out = append(out, r)
		default:
			lo, hi = min(lo, r[0]), max(hi, r[1])
		}
	}
	out = append(out, [2]int64{lo, hi})
	slices.SortFunc(out, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	s.seen = out
}

// Reads names the fields of Produce requests the producers analysis reads: their batches'
// headers.
func (p *Producers) Reads() []Read {
	return []Read{{APIKey: codec.KeyProduce, Fields: []string{"Name", "TopicId", "Index", "PartitionIndex", "Records",
		"producerId", "producerEpoch", "baseSequence", "recordsCount", "attributes"}}}
}

// Add reads the batches of Produce requests, and the errors of their responses.
func (p *Producers) Add(e *model.Entry) {
	m := e.Msg
	if m.APIKey != codec.KeyProduce {
		return
	}
	if !e.Request {
		if rows, ok := p.held.answer(e); ok {
			if errs := errorNames(body(m)); len(errs) > 0 {
				for _, r := range rows {
					r.errs = addStrings(r.errs, errs...)
				}
			}
		}
		return
	}
	client := ""
	if m.ClientID != nil {
		client = *m.ClientID
	}
	var touched []*producerRow
	eachRecords(e, func(tp topicPartition, records *codec.Node) {
		m.EachRecord(records, &p.scratch, func(b *codec.Node) {
			if r := p.batch(client, tp, b, FrameRef{e.Frame, e.Stream, e.Time}); r != nil && !slices.Contains(touched, r) {
				touched = append(touched, r)
			}
		})
	})
	if !e.NoResponse && len(touched) > 0 {
		p.held.hold(e, touched)
	}
}

// eachRecords calls fn with each records field of a Produce request and its partition; topics
// named by id are named by the facts where the capture taught the name.
func eachRecords(e *model.Entry, fn func(topicPartition, *codec.Node)) {
	for _, t := range elems(body(e.Msg), "TopicData") {
		name := str(t.Children, "Name")
		var id codec.UUID
		if n := child(t.Children, "TopicId"); n != nil {
			id, _ = n.Value.(codec.UUID)
		}
		for _, pd := range elems(t.Children, "PartitionData") {
			part, ok := num(pd.Children, "Index")
			if !ok {
				part, _ = num(pd.Children, "PartitionIndex")
			}
			topic := name
			if topic == "" {
				topic = topicByID(e.Facts, id, int32(part))
			}
			if rec := child(pd.Children, "Records"); rec != nil {
				fn(topicPartition{topic, part}, rec)
			}
		}
	}
}

// topicByID names the topic of id as the facts do, else as Kafka prints ids.
func topicByID(f *codec.Facts, id codec.UUID, part int32) string {
	if f != nil {
		for _, r := range f.RecordSets {
			if r.TopicID == id && r.Partition == part && r.Topic != "" {
				return r.Topic
			}
		}
	}
	return id.String()
}

// batchHeader is what a record batch's header says of its producer and records.
type batchHeader struct {
	producer, epoch, sequence, count int64
	attrs                            wire.Attributes
	size, compressed, decompressed   int64
	inflated                         bool
}

// readBatch reads a record batch node (magic 2); ok is false for anything else.
func readBatch(b *codec.Node) (h batchHeader, ok bool) {
	if b.Type != wire.RecordBatch {
		return h, false
	}
	h.producer, h.epoch, h.sequence = -1, -1, -1
	for _, c := range b.Children {
		v, _ := c.Value.(int64)
		switch c.Name {
		case "producerId":
			h.producer = v
		case "producerEpoch":
			h.epoch = v
		case "baseSequence":
			h.sequence = v
		case "recordsCount":
			h.count = v
		case "attributes":
			h.attrs = wire.Attributes(v)
		case "records":
			h.compressed = int64(c.Size)
			h.decompressed, h.inflated = decompressedSize(c, h.attrs.Codec())
		}
	}
	h.size = int64(b.Size)
	return h, true
}

// decompressedSize is the size of a batch's records once decompressed: the extent of the
// records decoded from the decompressed bytes (which they tile), or the records' own size
// when the batch is not compressed. ok is false when they were not decompressed.
func decompressedSize(records *codec.Node, c wire.Codec) (size int64, ok bool) {
	if c == wire.NoCompression {
		return int64(records.Size), true
	}
	if n := len(records.Children); n > 0 && records.Children[0].Decompressed {
		last := records.Children[n-1]
		return int64(last.Offset + last.Size), true
	}
	return 0, false
}

// batch adds a record batch of the request in frame to its producer's row, and returns the row.
func (p *Producers) batch(client string, tp topicPartition, b *codec.Node, frame FrameRef) *producerRow {
	h, ok := readBatch(b)
	if !ok || h.attrs.Has(wire.Control) {
		return nil // control batches are the coordinator's, never a producer's
	}
	if h.producer < 0 {
		h.epoch = -1
	}
	k := producerKey{client, h.producer, h.epoch}
	r := p.rows[k]
	if r == nil {
		r = &producerRow{producerKey: k, partitions: map[topicPartition]*sequences{}}
		p.rows[k] = r
		p.order = append(p.order, r)
	}
	r.transactional = r.transactional || h.attrs.Has(wire.Transactional)
	r.records += h.count
	r.perBatch = append(r.perBatch, h.count)
	r.batchBytes = append(r.batchBytes, h.size)
	r.codecs = addStrings(r.codecs, h.attrs.Codec().String())
	r.compressed += h.compressed
	r.decompressed += h.decompressed
	r.inflatedUnknown = r.inflatedUnknown || !h.inflated
	s := r.partitions[tp]
	if s == nil {
		s = &sequences{}
		r.partitions[tp] = s
	}
	if h.producer >= 0 && h.sequence >= 0 {
		gap, dup, ooo := s.check(h.sequence, h.count)
		r.gaps, r.dups, r.ooo = r.gaps+b2i(gap), r.dups+b2i(dup), r.ooo+b2i(ooo)
		if gap {
			r.gapFrames = addFrame(r.gapFrames, frame)
		}
		if dup {
			if first, ok := s.first(h.sequence); ok {
				r.dupFrames = addFrame(r.dupFrames, first)
			}
			r.dupFrames = addFrame(r.dupFrames, frame)
		} else {
			s.note(h.sequence, frame)
		}
	}
	r.frames = addFrame(r.frames, frame)
	return r
}

// MaxFrames bounds the frames an analysis keeps as evidence of one thing it counts.
const MaxFrames = 100

// FrameRef is a message an analysis keeps as evidence: its frame, connection and time.
type FrameRef struct {
	Frame, Stream int
	Time          time.Time
}

// addFrame adds frame to frames, once, while they are fewer than MaxFrames.
func addFrame(frames []FrameRef, frame FrameRef) []FrameRef {
	if len(frames) >= MaxFrames || len(frames) > 0 && frames[len(frames)-1].Frame == frame.Frame {
		return frames
	}
	return append(frames, frame)
}

// ProducerSummary is one producer as the producers analysis saw it (Producers.Summaries).
type ProducerSummary struct {
	ClientID  string
	ID, Epoch int64 // -1 for a producer that is not idempotent
	Batches   int64
	Records   int64
	// RecordsPerBatchP50 is the median number of records of its batches.
	RecordsPerBatchP50 int64
	// Codecs are the compression codecs of its batches ("none", "zstd", ...).
	Codecs []string
	// Bytes is the size of its batches' records as sent (compressed when they are).
	Bytes int64
	// Gaps and Duplicates count its batches that started past the next sequence, and those
	// whose sequences were all seen before (retries).
	Gaps, Duplicates int64
	// Frames, GapFrames and DuplicateFrames are the frames of the Produce requests that
	// carried its batches, a gap and a duplicate: the first MaxFrames of each.
	Frames, GapFrames, DuplicateFrames []FrameRef
}

// Summaries returns a summary of each producer, in the order their first batch was seen.
func (p *Producers) Summaries() []ProducerSummary {
	out := make([]ProducerSummary, 0, len(p.order))
	for _, r := range p.order {
		out = append(out, ProducerSummary{ClientID: r.client, ID: r.id, Epoch: r.epoch,
			Batches: int64(len(r.perBatch)), Records: r.records,
			RecordsPerBatchP50: median(slices.Clone(r.perBatch)).(int64), Codecs: slices.Clone(r.codecs),
			Bytes: r.compressed, Gaps: r.gaps, Duplicates: r.dups,
			Frames: slices.Clone(r.frames), GapFrames: slices.Clone(r.gapFrames), DuplicateFrames: slices.Clone(r.dupFrames)})
	}
	return out
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// median is the lower middle value of v (which it sorts): the p50 of a table.
func median(v []int64) any {
	if len(v) == 0 {
		return nil
	}
	slices.Sort(v)
	return v[(len(v)-1)/2]
}

// Tables returns the producers table, producers in the order their first batch was seen.
func (p *Producers) Tables() []model.Table {
	t := model.Table{Name: "producers", Title: "Producers", Columns: []model.Column{
		{Name: "client_id", Kind: model.String},
		{Name: "producer_id", Kind: model.Int},
		{Name: "producer_epoch", Head: "epoch", Kind: model.Int},
		{Name: "transactional", Head: "txn", Kind: model.Bool},
		{Name: "partitions", Kind: model.Int},
		{Name: "batches", Kind: model.Int},
		{Name: "records", Kind: model.Int},
		{Name: "records_per_batch_p50", Head: "rec/batch p50", Kind: model.Int},
		{Name: "records_per_batch_max", Head: "rec/batch max", Kind: model.Int},
		{Name: "batch_bytes_p50", Head: "batch bytes p50", Kind: model.Int},
		{Name: "codecs", Kind: model.Strings},
		{Name: "compressed_bytes", Head: "compressed", Kind: model.Int},
		{Name: "decompressed_bytes", Head: "decompressed", Kind: model.Int},
		{Name: "ratio", Kind: model.Float},
		{Name: "gaps", Kind: model.Int},
		{Name: "duplicates", Kind: model.Int},
		{Name: "out_of_order", Head: "out of order", Kind: model.Int},
		{Name: "epoch_bump", Head: "epoch bumped", Kind: model.Bool},
		{Name: "errors", Kind: model.Strings},
	}}
	for _, r := range p.order {
		var decompressed, ratio any
		if !r.inflatedUnknown {
			decompressed = r.decompressed
			if r.compressed > 0 {
				ratio = float64(r.decompressed) / float64(r.compressed)
			}
		}
		var gaps, dups, ooo, bumped any
		if r.id >= 0 {
			gaps, dups, ooo, bumped = r.gaps, r.dups, r.ooo, p.bumped(r.producerKey)
		}
		t.AddRow(r.client, r.id, r.epoch, r.transactional, int64(len(r.partitions)), int64(len(r.perBatch)),
			r.records, median(r.perBatch), slices.Max(r.perBatch), median(r.batchBytes), list(r.codecs),
			r.compressed, decompressed, ratio, gaps, dups, ooo, bumped, list(r.errs))
	}
	return []model.Table{t}
}

// bumped reports whether the producer id of k was seen with a lower epoch: the producer's
// epoch was bumped (after an error, or a transactional producer's new transaction).
func (p *Producers) bumped(k producerKey) bool {
	for _, r := range p.order {
		if r.id == k.id && r.epoch < k.epoch {
			return true
		}
	}
	return false
}
