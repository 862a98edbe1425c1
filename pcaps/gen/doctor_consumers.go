package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoLagGrowing: one broker on 19304, a topic of 1 partition. A franz-go producer writes two
// batches of 50 records between the polls of a franz-go consumer that takes one batch per
// Fetch, 6 times: the consumer's lag rises by 50 records a round and it never catches up.
func kgoLagGrowing(ctx context.Context, file string) error {
	const topic = "kdissect-doctor-lag"
	ports := []int{19304}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic))
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := kgo.NewClient(kgoOpts(seeds, topic+"-producer", kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
		if err != nil {
			return err
		}
		defer prod.Close()
		slow, err := kgo.NewClient(kgoOpts(seeds, topic+"-slow",
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchMaxPartitionBytes(1), // one batch per partition and Fetch
		)...)
		if err != nil {
			return err
		}
		defer slow.Close()
		n := 0
		for range 6 {
			for range 2 {
				recs := answerRecords("lag", 50)
				for i, r := range recs {
					r.Partition, r.Timestamp = 0, fixedTime.Add(time.Duration(n+i)*time.Millisecond)
				}
				n += len(recs)
				if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
					return fmt.Errorf("produce: %w", err)
				}
			}
			if _, err := pollN(ctx, slow, 1); err != nil {
				return err
			}
		}
		return nil
	})
}

// kgoConsumerStalled: one broker on 19305, a topic of 1 partition holding 5 records. A franz-go
// consumer fails on the first record it is given (as on a record it cannot deserialize), and
// seeks back to it to try again (SetOffsets), 12 times: it fetches offset 0 again and again
// and never gets past it.
func kgoConsumerStalled(ctx context.Context, file string) error {
	const topic = "kdissect-doctor-stalled"
	ports := []int{19305}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic))
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := kgo.NewClient(kgoOpts(seeds, topic+"-producer", kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
		if err != nil {
			return err
		}
		defer prod.Close()
		recs := answerRecords("stalled", 5)
		for _, r := range recs {
			r.Partition = 0
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		cons, err := kgo.NewClient(kgoOpts(seeds, topic+"-consumer",
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}),
		)...)
		if err != nil {
			return err
		}
		defer cons.Close()
		for range 12 {
			// One record at a time, so that the rest stay buffered and no Fetch goes past it.
			fs := cons.PollRecords(ctx, 1)
			if err := ctx.Err(); err != nil {
				return err
			}
			if errs := fs.Errors(); len(errs) > 0 {
				return fmt.Errorf("fetch: %w", errs[0].Err)
			}
			if rs := fs.Records(); len(rs) != 1 || rs[0].Offset != 0 {
				return fmt.Errorf("polled %d records, want the one at offset 0", len(rs))
			}
			cons.SetOffsets(map[string]map[int32]kgo.EpochOffset{topic: {0: {Epoch: -1, Offset: 0}}})
		}
		return nil
	})
}
