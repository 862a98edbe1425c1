package main

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoFilters is a capture for display filters (-Y) and export (-w): one broker on 9092, topics
// "orders" and "payments". A producer with acks=0 writes small records to orders (Produce
// requests without responses); a producer with acks=all writes two large records (66 KB
// each, more than a loopback segment, so that frames span several segments) to payments; a
// group member with a session timeout of 6 s and another with 45 s read orders and payments;
// a consumer asks a topic that does not exist (error codes). The consumers wait for records (FetchMaxWait), so Fetch latencies vary.
func kgoFilters(ctx context.Context, file string) error {
	ports := []int{9092}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(2, "orders", "payments"), kfakeShortSessions())
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		fire, err := produceOrders(ctx, seeds)
		if err != nil {
			return err
		}
		defer fire.Close()
		prod, err := producePayments(ctx, seeds)
		if err != nil {
			return err
		}
		defer prod.Close()
		if err := consumeOrdersAndPayments(ctx, seeds); err != nil {
			return err
		}
		// A topic that does not exist: Metadata answers UNKNOWN_TOPIC_OR_PARTITION.
		lost, err := kgo.NewClient(kgoOpts(seeds, "kdissect-lost", kgo.ConsumeTopics("no-such-topic"))...)
		if err != nil {
			return err
		}
		defer lost.Close()
		pctx, cancel := context.WithTimeout(ctx, 600*time.Millisecond)
		defer cancel()
		lost.PollFetches(pctx)
		return nil
	})
}

// produceOrders writes four small records to "orders" with acks=0; the producer is left open
// (for the caller to close) so that its connection ends with the capture's others.
func produceOrders(ctx context.Context, seeds []string) (*kgo.Client, error) {
	fire, err := kgo.NewClient(kgoOpts(seeds, "kdissect-acks0",
		kgo.DefaultProduceTopic("orders"),
		kgo.RequiredAcks(kgo.NoAck()),
		kgo.DisableIdempotentWrite(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)...)
	if err != nil {
		return nil, err
	}
	for i := range 4 {
		r := &kgo.Record{Key: fmt.Appendf(nil, "order-%d", i), Value: fmt.Appendf(nil, `{"order":%d}`, i),
			Partition: int32(i % 2), Timestamp: fixedTime.Add(time.Duration(i) * time.Millisecond)}
		if err := fire.ProduceSync(ctx, r).FirstErr(); err != nil {
			fire.Close()
			return nil, fmt.Errorf("produce acks=0: %w", err)
		}
	}
	return fire, nil
}

// producePayments writes two records of 66 KB to "payments" with acks=all; the producer is
// left open, as produceOrders's is.
func producePayments(ctx context.Context, seeds []string) (*kgo.Client, error) {
	prod, err := kgo.NewClient(kgoOpts(seeds, "kdissect-payments",
		kgo.DefaultProduceTopic("payments"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(1<<20),
	)...)
	if err != nil {
		return nil, err
	}
	for i := range 2 {
		r := &kgo.Record{Key: fmt.Appendf(nil, "payment-%d", i),
			Value:     bytes.Repeat(fmt.Appendf(nil, "payment %d;", i), 6000),
			Partition: int32(i % 2), Timestamp: fixedTime.Add(time.Duration(i) * time.Millisecond)}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			prod.Close()
			return nil, fmt.Errorf("produce payments: %w", err)
		}
	}
	return prod, nil
}

// consumeOrdersAndPayments has two group members, with session timeouts of 6 s and 45 s, read
// the six records and leave their groups.
func consumeOrdersAndPayments(ctx context.Context, seeds []string) error {
	for _, m := range []struct {
		id      string
		session time.Duration
	}{{"kdissect-short-session", 6 * time.Second}, {"kdissect-long-session", 45 * time.Second}} {
		cons, err := kgo.NewClient(kgoOpts(seeds, m.id,
			kgo.ConsumerGroup(m.id+"-group"),
			kgo.ConsumeTopics("orders", "payments"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.SessionTimeout(m.session),
			kgo.FetchMaxBytes(4<<20),
			kgo.DisableAutoCommit(),
		)...)
		if err != nil {
			return err
		}
		_, err = pollN(ctx, cons, 6)
		if err == nil {
			err = cons.LeaveGroupContext(ctx)
		}
		cons.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", m.id, err)
		}
	}
	return nil
}
