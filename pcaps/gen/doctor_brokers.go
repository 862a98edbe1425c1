package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The scenarios of kdissect doctor's latency findings: brokers made slow by a kfake control
// function that sleeps before letting the broker answer a Produce request. Each has three
// brokers of its own (19410-19412, 19413-19415) and a topic with one partition led by each,
// so that every round of a producer sends one Produce request to each broker.

// kgoLatencyStall: three brokers on 19410-19412. A franz-go producer writes a record to each
// partition every 20 ms, 20 rounds, answered at once; then, in the next 10 s of the clock,
// all three brokers take stallDelay to answer each of 4 rounds together.
func kgoLatencyStall(ctx context.Context, file string) error {
	const stallDelay = 400 * time.Millisecond
	return slowBrokers(ctx, file, []int{19410, 19411, 19412}, "kdissect-doctor-stall",
		func(p *roundProducer, delays []atomic.Int64) error {
			if err := p.rounds(ctx, 20); err != nil {
				return err
			}
			// The doctor cuts time into windows of the clock's 10 s
			// (analysis.LatencyWindowLength): start the stall with one, so
			// that it falls in a window of its own rather than across two.
			if err := sleepCtx(ctx, time.Until(time.Now().Truncate(10*time.Second).Add(10*time.Second))); err != nil {
				return err
			}
			for i := range delays {
				delays[i].Store(int64(stallDelay))
			}
			return p.rounds(ctx, 4)
		})
}

// kgoBrokerOutlier: three brokers on 19413-19415. A franz-go producer writes a record to each
// partition every 20 ms, 25 rounds; broker 2 takes outlierDelay to answer each Produce
// request, the others answer at once.
func kgoBrokerOutlier(ctx context.Context, file string) error {
	const outlierDelay = 80 * time.Millisecond
	return slowBrokers(ctx, file, []int{19413, 19414, 19415}, "kdissect-doctor-outlier",
		func(p *roundProducer, delays []atomic.Int64) error {
			delays[2].Store(int64(outlierDelay))
			return p.rounds(ctx, 25)
		})
}

// slowBrokers starts a broker on each of ports and a topic (named name) with one partition
// led by each, and captures run, which drives a producer (client id name-producer). Each
// broker waits delays[node id] before answering a Produce request; run sets them.
func slowBrokers(ctx context.Context, file string, ports []int, name string,
	run func(p *roundProducer, delays []atomic.Int64) error) error {
	c, seeds, err := newCluster(ports, kfake.SeedTopics(int32(len(ports)), name))
	if err != nil {
		return err
	}
	defer c.Close()
	for p := range int32(len(ports)) {
		if err := c.MoveTopicPartition(name, p, p); err != nil {
			return err
		}
	}
	delays := make([]atomic.Int64, len(ports))
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if node := c.CurrentNode(); node >= 0 && int(node) < len(delays) {
			if d := time.Duration(delays[node].Load()); d > 0 {
				// SleepControl lets the brokers answer other requests meanwhile.
				c.SleepControl(func() { time.Sleep(d) })
			}
		}
		return nil, nil, false
	})
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		cl, err := kgo.NewClient(kgoOpts(seeds, name+"-producer",
			kgo.DefaultProduceTopic(name),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
		)...)
		if err != nil {
			return err
		}
		defer cl.Close()
		return run(&roundProducer{cl: cl, partitions: int32(len(ports))}, delays)
	})
}

// roundProducer writes rounds of records: one to each partition, together.
type roundProducer struct {
	cl         *kgo.Client
	partitions int32
	n          int // records written so far
}

// roundPause is the pause between rounds: a steady producer, not a burst.
const roundPause = 20 * time.Millisecond

// rounds writes n rounds, waiting for each to be answered.
func (p *roundProducer) rounds(ctx context.Context, n int) error {
	for range n {
		var recs []*kgo.Record
		for part := range p.partitions {
			recs = append(recs, &kgo.Record{
				Key:       fmt.Appendf(nil, "sensor-%d", part),
				Value:     fmt.Appendf(nil, `{"reading":%d}`, p.n),
				Partition: part,
				Timestamp: fixedTime.Add(time.Duration(p.n) * time.Millisecond),
			})
			p.n++
		}
		if err := p.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("produce round %d: %w", p.n/int(p.partitions), err)
		}
		if err := sleepCtx(ctx, roundPause); err != nil {
			return err
		}
	}
	return nil
}

// sleepCtx sleeps for d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
