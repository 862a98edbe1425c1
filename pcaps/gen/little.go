package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// littleFlow is the small produce-and-fetch exchange of the SASL, TLS and
// odd-port scenarios: a franz-go producer (clientPrefix-producer) writes
// four records in one batch to topic, spread over its partitions, and a
// consumer (clientPrefix-consumer) reads them back from the start. opts go
// to both clients (SASL, TLS).
func littleFlow(ctx context.Context, seeds []string, topic string, partitions int, clientPrefix string, opts ...kgo.Opt) error {
	prod, err := kgo.NewClient(kgoOpts(seeds, clientPrefix+"-producer", append([]kgo.Opt{
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}, opts...)...)...)
	if err != nil {
		return err
	}
	defer prod.Close()
	var recs []*kgo.Record
	for i := range 4 {
		r := &kgo.Record{
			Key:       fmt.Appendf(nil, "acct-%d", i+1),
			Value:     fmt.Appendf(nil, `{"account":%d,"balance":%d}`, i+1, (i+1)*100),
			Partition: int32(i % partitions),
			Timestamp: fixedTime.Add(time.Duration(i) * time.Millisecond),
		}
		if i == 0 {
			r.Headers = []kgo.RecordHeader{{Key: "request-id", Value: []byte("req-0001")}}
		}
		recs = append(recs, r)
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}

	cons, err := kgo.NewClient(kgoOpts(seeds, clientPrefix+"-consumer", append([]kgo.Opt{
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}, opts...)...)...)
	if err != nil {
		return err
	}
	defer cons.Close()
	_, err = pollN(ctx, cons, len(recs))
	return err
}

// kgoOddPorts: two brokers on 36333 (node 0) and 19092 (node 1), nothing on
// 9092, and a topic with two partitions: partition 0 led by node 0,
// partition 1 by node 1; littleFlow, which puts two records in each.
func kgoOddPorts(ctx context.Context, file string) error {
	const topic = "kdissect-odd-ports"
	ports := []int{36333, 19092}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(2, topic))
	if err != nil {
		return err
	}
	defer c.Close()
	// kfake picks leaders at random; fix them so both ports carry records.
	for p := range int32(2) {
		if err := c.MoveTopicPartition(topic, p, p); err != nil {
			return err
		}
	}
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		return littleFlow(ctx, seeds, topic, 2, "kdissect-odd-ports")
	})
}
