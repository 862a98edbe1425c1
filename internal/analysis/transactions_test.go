package analysis_test

import (
	"encoding/json"
	"fmt"
	"slices"
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

// wantTransactions computes the transactions table from a capture's messages: a transaction
// opens with the first partition or group its transactional id adds, and ends with EndTxn.
func wantTransactions(t *testing.T, ms []msg) [][]any {
	open, last := map[string]*wantTxn{}, map[string]*wantTxn{}
	var order []*wantTxn
	held := map[string]*wantTxn{}
	add := func(list []string, s string) []string {
		if s == "" || slices.Contains(list, s) {
			return list
		}
		return append(list, s)
	}
	begin := func(id string, pid, epoch int64, at time.Time) *wantTxn {
		if open[id] == nil {
			open[id] = &wantTxn{id: id, producer: pid, epoch: epoch, start: at}
			order = append(order, open[id])
		}
		return open[id]
	}
	for _, m := range ms {
		if !m.request() {
			r := held[m.key()]
			if r == nil {
				continue
			}
			e := errs(m)
			for _, s := range e {
				r.errs = add(r.errs, s)
			}
			if m.api() == "EndTxn" && len(e) == 0 {
				r.end = m.time(t)
			}
			continue
		}
		id := get(m, "TransactionalId").str()
		switch m.api() {
		case "AddPartitionsToTxn":
			groups := []node{node(m)}
			if tx := get(m, "Transactions"); tx != nil {
				groups = fields(tx)
			}
			for _, g := range groups {
				id := get(g, "TransactionalId").str() + get(g, "V3AndBelowTransactionalId").str()
				pid, epoch := get(g, "ProducerId"), get(g, "ProducerEpoch")
				if pid == nil {
					pid, epoch = get(g, "V3AndBelowProducerId"), get(g, "V3AndBelowProducerEpoch")
				}
				r := begin(id, pid.int(t), epoch.int(t), m.time(t))
				topics := get(g, "Topics")
				if topics == nil {
					topics = get(g, "V3AndBelowTopics")
				}
				for _, topic := range fields(topics) {
					for _, p := range fields(get(topic, "Partitions")) {
						r.partitions = add(r.partitions, fmt.Sprintf("%s[%d]", get(topic, "Name").str(), p.int(t)))
					}
				}
				held[m.key()] = r
			}
		case "AddOffsetsToTxn", "TxnOffsetCommit":
			r := begin(id, get(m, "ProducerId").int(t), get(m, "ProducerEpoch").int(t), m.time(t))
			r.groups = add(r.groups, get(m, "GroupId").str())
			held[m.key()] = r
		case "Produce":
			if id == "" {
				continue
			}
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
						r := begin(id, get(b, "producerId").int(t), get(b, "producerEpoch").int(t), m.time(t))
						r.partitions = add(r.partitions, fmt.Sprintf("%s[%d]", name, get(p, "Index").int(t)))
						r.records += get(b, "recordsCount").int(t)
					}
				}
			}
		case "EndTxn":
			r := open[id]
			pid, epoch := get(m, "ProducerId").int(t), get(m, "ProducerEpoch").int(t)
			if r == nil && last[id] != nil && last[id].producer == pid && last[id].epoch == epoch {
				r = last[id]
			}
			if r == nil {
				continue
			}
			r.result = map[bool]string{true: "commit", false: "abort"}[get(m, "Committed")["value"] == true]
			r.end = m.time(t)
			delete(open, id)
			last[id] = r
			held[m.key()] = r
		}
	}
	var rows [][]any
	for _, r := range order {
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
