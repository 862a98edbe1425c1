package analysis

import (
	"fmt"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

// Transactions answers "which transactions ran, on what, and how did they end?": one row per
// transaction of a transactional id. A transaction begins with the first thing it adds: a
// partition (AddPartitionsToTxn, or a transactional Produce batch: clients of transactions v2,
// KIP-890, add partitions by producing to them), or a group's offsets (AddOffsetsToTxn,
// TxnOffsetCommit). It ends with EndTxn: its response, or its request when the response is
// missing; a transaction not ended when the capture ends is open.
type Transactions struct {
	ids  map[string]*txnState
	rows []*txnRow
	held pairs[txnRequest]
	// scratch holds the nodes of records fields decoded one batch at a time (EachRecord).
	scratch codec.Nodes
}

// NewTransactions returns an empty Transactions.
func NewTransactions() *Transactions { return &Transactions{ids: map[string]*txnState{}} }

// txnState is what is known of one transactional id.
type txnState struct {
	producer, epoch int64
	open            *txnRow
	// last is the last transaction ended: a retried EndTxn is its own again.
	last *txnRow
}

type txnRow struct {
	id              string
	producer, epoch int64
	partitions      []string
	groups          []string
	records         int64
	start, end      time.Time
	result          string
	errs            []string
}

// txnRequest is what a transaction request leaves for its response.
type txnRequest struct {
	key int16
	id  string
	row *txnRow
}

// Reads names the fields the transactions analysis reads beyond the facts.
func (t *Transactions) Reads() []Read {
	ids := []string{"TransactionalId", "ProducerId", "ProducerEpoch"}
	return []Read{
		{APIKey: codec.KeyInitProducerID, Fields: ids},
		{APIKey: codec.KeyInitProducerID, Response: true, Fields: ids},
		{APIKey: codec.KeyAddPartitionsToTxn, Fields: append([]string{"V3AndBelowTransactionalId", "V3AndBelowProducerId",
			"V3AndBelowProducerEpoch", "V3AndBelowTopics", "Transactions", "Topics", "Name", "Partitions"}, ids...)},
		{APIKey: codec.KeyAddOffsetsToTxn, Fields: append([]string{"GroupId"}, ids...)},
		{APIKey: codec.KeyTxnOffsetCommit, Fields: append([]string{"GroupId"}, ids...)},
		{APIKey: codec.KeyEndTxn, Fields: append([]string{"Committed"}, ids...)},
		{APIKey: codec.KeyProduce, Fields: []string{"TransactionalId", "Name", "TopicId", "Index", "PartitionIndex",
			"Records", "producerId", "producerEpoch", "recordsCount", "attributes"}},
	}
}

// Add follows the transaction APIs and the transactional Produce requests.
func (t *Transactions) Add(e *model.Entry) {
	m := e.Msg
	b := body(m)
	if !e.Request {
		t.response(e, b)
		return
	}
	req := txnRequest{key: m.APIKey}
	switch m.APIKey {
	case codec.KeyInitProducerID:
		req.id = str(b, "TransactionalId")
	case codec.KeyAddPartitionsToTxn:
		t.addPartitions(e, b)
	case codec.KeyAddOffsetsToTxn, codec.KeyTxnOffsetCommit:
		req.id = str(b, "TransactionalId")
		if req.id != "" {
			req.row = t.begin(req.id, b, "ProducerId", "ProducerEpoch", e.Time)
			req.row.groups = addStrings(req.row.groups, str(b, "GroupId"))
		}
	case codec.KeyEndTxn:
		req.id = str(b, "TransactionalId")
		req.row = t.endRequest(req.id, b, e.Time)
	case codec.KeyProduce:
		t.produce(e, str(b, "TransactionalId"))
	default:
		return
	}
	if req.id != "" && !e.NoResponse {
		t.held.hold(e, req)
	}
}

// response reads the producer id InitProducerId gives, and the errors and ends of the others.
func (t *Transactions) response(e *model.Entry, b []*codec.Node) {
	req, ok := t.held.answer(e)
	if !ok {
		return
	}
	errs := errorNames(b)
	if req.row != nil {
		req.row.errs = addStrings(req.row.errs, errs...)
	}
	if len(errs) > 0 {
		return
	}
	switch req.key {
	case codec.KeyInitProducerID, codec.KeyEndTxn:
		// EndTxn's response names the producer's next epoch since v5 (KIP-890).
		if id, ok := num(b, "ProducerId"); ok {
			s := t.state(req.id)
			s.producer = id
			s.epoch, _ = num(b, "ProducerEpoch")
		}
		if req.key == codec.KeyEndTxn && req.row != nil {
			req.row.end = e.Time
		}
	}
}

func (t *Transactions) state(id string) *txnState {
	s := t.ids[id]
	if s == nil {
		s = &txnState{producer: -1, epoch: -1}
		t.ids[id] = s
	}
	return s
}

// begin returns the open transaction of id, opened now if none is; the request's fields
// named pidField and epochField give its producer, if it has them.
func (t *Transactions) begin(id string, b []*codec.Node, pidField, epochField string, at time.Time) *txnRow {
	pid, ok := num(b, pidField)
	epoch, _ := num(b, epochField)
	return t.beginAs(id, pid, epoch, ok, at)
}

// beginAs is begin for a producer id and epoch known (known) from elsewhere.
func (t *Transactions) beginAs(id string, pid, epoch int64, known bool, at time.Time) *txnRow {
	s := t.state(id)
	if known && pid >= 0 {
		s.producer, s.epoch = pid, epoch
	}
	if s.open == nil {
		s.open = &txnRow{id: id, producer: s.producer, epoch: s.epoch, start: at}
		t.rows = append(t.rows, s.open)
	}
	return s.open
}

// addPartitions opens or adds to the transactions of an AddPartitionsToTxn request: one before
// v4, any number (Transactions) since.
func (t *Transactions) addPartitions(e *model.Entry, b []*codec.Node) {
	add := func(nodes []*codec.Node, idField, pidField, epochField, topicsField string) {
		id := str(nodes, idField)
		if id == "" {
			return
		}
		r := t.begin(id, nodes, pidField, epochField, e.Time)
		for _, topic := range elems(nodes, topicsField) {
			name := str(topic.Children, "Name")
			for _, p := range elems(topic.Children, "Partitions") {
				if v, ok := p.Value.(int64); ok {
					r.partitions = addStrings(r.partitions, partitionName(name, v))
				}
			}
		}
		if !e.NoResponse {
			t.held.hold(e, txnRequest{key: e.Msg.APIKey, id: id, row: r})
		}
	}
	add(b, "V3AndBelowTransactionalId", "V3AndBelowProducerId", "V3AndBelowProducerEpoch", "V3AndBelowTopics")
	for _, tx := range elems(b, "Transactions") {
		add(tx.Children, "TransactionalId", "ProducerId", "ProducerEpoch", "Topics")
	}
}

// partitionName names a partition as kdissect's summaries do: topic[partition].
func partitionName(topic string, p int64) string { return fmt.Sprintf("%s[%d]", topic, p) }

// produce adds the partitions and records of a Produce request's transactional batches to the
// transaction of id.
func (t *Transactions) produce(e *model.Entry, id string) {
	if id == "" {
		return
	}
	eachRecords(e, func(tp topicPartition, records *codec.Node) {
		e.Msg.EachRecord(records, &t.scratch, func(b *codec.Node) {
			h, ok := readBatch(b)
			if !ok || !h.attrs.Has(wire.Transactional) || h.attrs.Has(wire.Control) {
				return
			}
			r := t.beginAs(id, h.producer, h.epoch, true, e.Time)
			r.partitions = addStrings(r.partitions, partitionName(tp.topic, tp.partition))
			r.records += h.count
		})
	})
}

// endRequest ends the open transaction of id as EndTxn asks; a retried EndTxn (the
// transaction already ended, by the same producer and epoch) ends it again.
func (t *Transactions) endRequest(id string, b []*codec.Node, at time.Time) *txnRow {
	if id == "" {
		return nil
	}
	s := t.state(id)
	pid, _ := num(b, "ProducerId")
	epoch, _ := num(b, "ProducerEpoch")
	r := s.open
	if r == nil {
		if s.last == nil || s.last.producer != pid || s.last.epoch != epoch {
			return nil // nothing to end: a transaction with nothing in it
		}
		r = s.last
	}
	if c := child(b, "Committed"); c != nil {
		if commit, ok := c.Value.(bool); ok {
			r.result = map[bool]string{true: "commit", false: "abort"}[commit]
		}
	}
	r.end = at
	if r.producer < 0 {
		r.producer, r.epoch = pid, epoch
	}
	s.open, s.last = nil, r
	return r
}

// Tables returns the transactions table, transactions in the order they began.
func (t *Transactions) Tables() []model.Table {
	tab := model.Table{Name: "transactions", Title: "Transactions (times UTC, duration in ms)", Columns: []model.Column{
		{Name: "transactional_id", Kind: model.String},
		{Name: "producer_id", Kind: model.Int},
		{Name: "producer_epoch", Head: "epoch", Kind: model.Int},
		{Name: "partitions", Kind: model.Strings},
		{Name: "groups", Kind: model.Strings},
		{Name: "records", Kind: model.Int},
		{Name: "start", Kind: model.Time},
		{Name: "end", Kind: model.Time},
		{Name: "duration_us", Head: "duration", Kind: model.Duration},
		{Name: "result", Kind: model.String},
		{Name: "errors", Kind: model.Strings},
	}}
	for _, r := range t.rows {
		result := r.result
		if result == "" {
			result = "open"
		}
		var pid, epoch any
		if r.producer >= 0 {
			pid, epoch = r.producer, r.epoch
		}
		tab.AddRow(r.id, pid, epoch, list(r.partitions), list(r.groups), r.records, timeOrNil(r.start),
			timeOrNil(r.end), span(r.start, r.end), result, list(r.errs))
	}
	return []model.Table{tab}
}
