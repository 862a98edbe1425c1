package analysis_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
)

// txnCaptures hold transactions, each an aborted one then a committed one: kgo-transactions.pcap
// of a transactions v2 client (KIP-890: partitions added by producing), kgo-txn-groups.pcap of a
// transactions v1 client (AddPartitionsToTxn) that commits its group's offsets.
var txnCaptures = []string{"kgo-transactions.pcap", "kgo-txn-groups.pcap"}

// TestTransactions: each transaction, as the JSON lines show it.
func TestTransactions(t *testing.T) {
	for _, name := range txnCaptures {
		t.Run(name, func(t *testing.T) {
			want := wantTransactions(t, messages(t, name, "full"))
			compare(t, name, table(t, name, "full", analysis.NewTransactions()), want)
			if len(want) != 2 || want[0][9] != "abort" || want[1][9] != "commit" {
				t.Errorf("%s: the test expects an aborted transaction, then a committed one: %v", name, want)
			}
		})
	}
}

type wantTxn struct {
	id                 string
	producer, epoch    int64
	partitions, groups []string
	records            int64
	start, end         time.Time
	result             string
	errs               []string
}

// txnFollower follows the transactions of a capture for the test.
type txnFollower struct {
	t          *testing.T
	open, last map[string]*wantTxn
	order      []*wantTxn
	// held is the transaction of each request whose response is awaited.
	held map[string]*wantTxn
}

// wantTransactions computes the transactions table from a capture's messages: a transaction
// opens with the first partition or group its transactional id adds, and ends with EndTxn.
func wantTransactions(t *testing.T, ms []msg) [][]any {
	f := &txnFollower{t: t, open: map[string]*wantTxn{}, last: map[string]*wantTxn{}, held: map[string]*wantTxn{}}
	for _, m := range ms {
		if !m.request() {
			f.response(m)
			continue
		}
		switch id := get(m, "TransactionalId").str(); m.api() {
		case "AddPartitionsToTxn":
			f.addPartitions(m)
		case "AddOffsetsToTxn", "TxnOffsetCommit":
			r := f.begin(id, get(m, "ProducerId").int(t), get(m, "ProducerEpoch").int(t), m.time(t))
			r.groups = addNew(r.groups, get(m, "GroupId").str())
			f.held[m.key()] = r
		case "Produce":
			if id != "" {
				f.produce(id, m)
			}
		case "EndTxn":
			f.end(id, m)
		}
	}
	var rows [][]any
	for _, r := range f.order {
		result := r.result
		var end, took any
		if result == "" {
			result = "open"
		}
		if !r.end.IsZero() {
			end, took = r.end, r.end.Sub(r.start)
		}
		rows = append(rows, []any{r.id, r.producer, r.epoch, orEmpty(r.partitions), orEmpty(r.groups), r.records,
			r.start, end, took, result, orEmpty(r.errs)})
	}
	return rows
}

func (f *txnFollower) begin(id string, pid, epoch int64, at time.Time) *wantTxn {
	if f.open[id] == nil {
		f.open[id] = &wantTxn{id: id, producer: pid, epoch: epoch, start: at}
		f.order = append(f.order, f.open[id])
	}
	return f.open[id]
}

// response adds a response's errors to its request's transaction; EndTxn's ends it.
func (f *txnFollower) response(m msg) {
	r := f.held[m.key()]
	if r == nil {
		return
	}
	e := errs(m)
	r.errs = addNew(r.errs, e...)
	if m.api() == "EndTxn" && len(e) == 0 {
		r.end = m.time(f.t)
	}
}

// addPartitions reads AddPartitionsToTxn: one transaction before v4, a list since.
func (f *txnFollower) addPartitions(m msg) {
	t := f.t
	txns := []node{node(m)}
	if tx := get(m, "Transactions"); tx != nil {
		txns = fields(tx)
	}
	for _, g := range txns {
		id := get(g, "TransactionalId").str() + get(g, "V3AndBelowTransactionalId").str()
		pid, epoch := get(g, "ProducerId"), get(g, "ProducerEpoch")
		if pid == nil {
			pid, epoch = get(g, "V3AndBelowProducerId"), get(g, "V3AndBelowProducerEpoch")
		}
		r := f.begin(id, pid.int(t), epoch.int(t), m.time(t))
		topics := get(g, "Topics")
		if topics == nil {
			topics = get(g, "V3AndBelowTopics")
		}
		for _, topic := range fields(topics) {
			for _, p := range fields(get(topic, "Partitions")) {
				r.partitions = addNew(r.partitions, fmt.Sprintf("%s[%d]", get(topic, "Name").str(), p.int(t)))
			}
		}
		f.held[m.key()] = r
	}
}

// produce reads the transactional batches of a Produce request.
func (f *txnFollower) produce(id string, m msg) {
	t := f.t
	for _, topic := range fields(get(m, "TopicData")) {
		name := get(topic, "Name").str()
		if tid := get(topic, "TopicId"); tid != nil {
			name, _ = tid["topic"].(string)
		}
		for _, p := range fields(get(topic, "PartitionData")) {
			for _, b := range fields(get(p, "Records")) {
				bits := get(b, "attributes")["bits"].(map[string]any)
				if bits["isTransactional"].(json.Number).String() != "1" {
					continue
				}
				r := f.begin(id, get(b, "producerId").int(t), get(b, "producerEpoch").int(t), m.time(t))
				r.partitions = addNew(r.partitions, fmt.Sprintf("%s[%d]", name, get(p, "Index").int(t)))
				r.records += get(b, "recordsCount").int(t)
			}
		}
	}
}

// end reads EndTxn: it ends the open transaction, or again the last one of the same producer.
func (f *txnFollower) end(id string, m msg) {
	t := f.t
	r := f.open[id]
	pid, epoch := get(m, "ProducerId").int(t), get(m, "ProducerEpoch").int(t)
	if l := f.last[id]; r == nil && l != nil && l.producer == pid && l.epoch == epoch {
		r = l
	}
	if r == nil {
		return
	}
	r.result = map[bool]string{true: "commit", false: "abort"}[get(m, "Committed")["value"] == true]
	r.end = m.time(t)
	delete(f.open, id)
	f.last[id] = r
	f.held[m.key()] = r
}
