package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoLag: one broker on 19100, a topic of two partitions. A franz-go
// consumer that takes one record batch per partition and Fetch falls behind
// a producer that writes three records to partition 0 between its polls;
// partition 1 gets a record only every other round, so that the consumer's
// incremental fetch session (KIP-227) holds it without naming it while the
// broker answers it with records. The consumer then catches up, and a second
// consumer reads the whole topic at once.
func kgoLag(ctx context.Context, file string) error {
	const topic = "kdissect-lag"
	ports := []int{19100}
	c, seeds, err := newCluster(ports)
	if err != nil {
		return err
	}
	defer c.Close()

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := kgo.NewClient(kgoOpts(seeds, "kdissect-lag-producer", kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
		if err != nil {
			return err
		}
		defer prod.Close()
		if _, err := kadm.NewClient(prod).CreateTopic(ctx, 2, 1, nil, topic); err != nil {
			return fmt.Errorf("create topic: %w", err)
		}
		n := 0
		produce := func(partition int32) error {
			r := &kgo.Record{Topic: topic, Partition: partition, Key: fmt.Appendf(nil, "k-%d", n),
				Value: fmt.Appendf(nil, "record %d", n), Timestamp: fixedTime.Add(time.Duration(n) * time.Millisecond)}
			n++
			return prod.ProduceSync(ctx, r).FirstErr()
		}
		slow, err := kgo.NewClient(kgoOpts(seeds, "kdissect-lag-slow",
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchMaxPartitionBytes(1), // one batch per partition and Fetch
		)...)
		if err != nil {
			return err
		}
		defer slow.Close()
		consumed := 0
		for round := range 5 {
			for range 3 {
				if err := produce(0); err != nil {
					return fmt.Errorf("produce: %w", err)
				}
			}
			if round%2 == 1 {
				if err := produce(1); err != nil {
					return fmt.Errorf("produce: %w", err)
				}
			}
			got, err := pollN(ctx, slow, 1)
			if err != nil {
				return err
			}
			consumed += len(got)
		}
		if _, err := pollN(ctx, slow, n-consumed); err != nil {
			return err
		}
		slow.Close()

		reader, err := kgo.NewClient(kgoOpts(seeds, "kdissect-lag-reader",
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		)...)
		if err != nil {
			return err
		}
		defer reader.Close()
		_, err = pollN(ctx, reader, n)
		return err
	})
}
