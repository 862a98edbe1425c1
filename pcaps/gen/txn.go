package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoTransactions: one broker on 9092. A franz-go transactional producer
// aborts a first transaction (2 records) and commits a second one (3
// records). A read_committed consumer then reads the partition from the
// start: to reach the committed records it fetches past the aborted batch,
// so its Fetch responses carry the aborted records, both control batches
// (abort and commit markers) and an AbortedTransactions entry.
func kgoTransactions(ctx context.Context, file string) error {
	const (
		topic = "kdissect-txn"
		txnID = "kdissect-txn-id"
	)
	ports := []int{9092}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic))
	if err != nil {
		return err
	}
	defer c.Close()

	rec := func(i int, key, value string) *kgo.Record {
		return &kgo.Record{Key: []byte(key), Value: []byte(value), Timestamp: fixedTime.Add(time.Duration(i) * time.Millisecond)}
	}
	txns := []struct {
		end  kgo.TransactionEndTry
		recs []*kgo.Record
	}{
		{kgo.TryAbort, []*kgo.Record{
			rec(0, "order-1", `{"order":1,"status":"reserved"}`),
			rec(1, "order-2", `{"order":2,"status":"reserved"}`),
		}},
		{kgo.TryCommit, []*kgo.Record{
			rec(10, "order-1", `{"order":1,"status":"paid"}`),
			rec(11, "order-2", `{"order":2,"status":"paid"}`),
			rec(12, "order-3", `{"order":3,"status":"paid"}`),
		}},
	}

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := kgo.NewClient(kgoOpts(seeds, "kdissect-txn-producer",
			kgo.DefaultProduceTopic(topic),
			kgo.TransactionalID(txnID),
			kgo.TransactionTimeout(10*time.Second),
		)...)
		if err != nil {
			return err
		}
		defer prod.Close()
		for _, t := range txns {
			if err := prod.BeginTransaction(); err != nil {
				return fmt.Errorf("begin transaction: %w", err)
			}
			if err := prod.ProduceSync(ctx, t.recs...).FirstErr(); err != nil {
				return fmt.Errorf("produce: %w", err)
			}
			if err := prod.EndTransaction(ctx, t.end); err != nil {
				return fmt.Errorf("end transaction (commit %v): %w", t.end, err)
			}
		}

		cons, err := kgo.NewClient(kgoOpts(seeds, "kdissect-txn-consumer",
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		)...)
		if err != nil {
			return err
		}
		defer cons.Close()
		committed := txns[1].recs
		got, err := pollN(ctx, cons, len(committed))
		if err != nil {
			return err
		}
		for i, r := range got {
			if string(r.Value) != string(committed[i].Value) {
				return fmt.Errorf("read_committed consumer got %q, want %q", r.Value, committed[i].Value)
			}
		}
		return nil
	})
}
