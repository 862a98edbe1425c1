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

// The scenarios of kdissect doctor's findings of clients' habits and of brokers that throttle
// or do not answer. Each has a broker port of its own, 19400-19405, which pcaps.Ports lists.

// smallRecords makes n small records with fixed keys, values and timestamps, to partition 0.
func smallRecords(prefix string, n int) []*kgo.Record {
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{
			Key:       fmt.Appendf(nil, "%s-%d", prefix, i%8),
			Value:     fmt.Appendf(nil, `{"n":%d}`, i),
			Timestamp: fixedTime.Add(time.Duration(i) * time.Millisecond),
		}
	}
	return recs
}

// kgoSmallBatches: one broker on 19400. A franz-go idempotent producer with linger 0 (kgo's
// default) writes 150 small records, one every 3 ms, without waiting for them: each record
// leaves at once, in a batch of its own, in a Produce request of its own.
func kgoSmallBatches(ctx context.Context, file string) error {
	const topic = "kdissect-doctor-ticks"
	ports := []int{19400}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic))
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		cl, err := kgo.NewClient(kgoOpts(seeds, "kdissect-doctor-ticker",
			kgo.DefaultProduceTopic(topic),
			kgo.ProducerLinger(0),
		)...)
		if err != nil {
			return err
		}
		defer cl.Close()
		var failed atomic.Pointer[error]
		for _, r := range smallRecords("tick", 150) {
			cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					failed.CompareAndSwap(nil, &err)
				}
			})
			if err := sleepCtx(ctx, 3*time.Millisecond); err != nil {
				return err
			}
		}
		if err := cl.Flush(ctx); err != nil {
			return err
		}
		if err := failed.Load(); err != nil {
			return fmt.Errorf("produce: %w", *err)
		}
		return nil
	})
}

// kgoThrottled: one broker on 19401. A franz-go producer writes 4 records; a consumer (no
// fetch session) reads them from the start. The broker answers the consumer's first three
// Fetch requests as a broker whose fetch quota the client went past does: at once, with no
// data and a throttle time of throttleMs (Kafka's throttled Fetch response); the client
// waits that long before its next Fetch (KIP-219). Then the broker serves it.
func kgoThrottled(ctx context.Context, file string) error {
	const (
		topic      = "kdissect-doctor-quota"
		throttleMs = 250
		throttled  = 3
	)
	ports := []int{19401}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic))
	if err != nil {
		return err
	}
	defer c.Close()
	n := 0 // the Fetch requests throttled so far; read on the cluster's goroutine
	c.ControlKey(int16(kmsg.Fetch), func(r kmsg.Request) (kmsg.Response, error, bool) {
		if n++; n > throttled {
			c.DropControl()
			return nil, nil, false
		}
		c.KeepControl() // a control that answers is dropped, unless kept
		req := r.(*kmsg.FetchRequest)
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.Version = req.Version
		resp.ThrottleMillis = throttleMs
		return resp, nil, true
	})
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := kgo.NewClient(kgoOpts(seeds, "kdissect-doctor-quota-producer", kgo.DefaultProduceTopic(topic))...)
		if err != nil {
			return err
		}
		defer prod.Close()
		if err := prod.ProduceSync(ctx, smallRecords("quota", 4)...).FirstErr(); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		cons, err := kgo.NewClient(kgoOpts(seeds, "kdissect-doctor-quota-consumer",
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.DisableFetchSessions(),
		)...)
		if err != nil {
			return err
		}
		defer cons.Close()
		_, err = pollN(ctx, cons, 4)
		return err
	})
}

// kgoChurn: one broker on 19402. An application that makes a new franz-go producer for each
// record it sends, and closes it: 12 records, 12 clients with the same client id, each
// opening its own connections to the broker.
func kgoChurn(ctx context.Context, file string) error {
	const topic = "kdissect-doctor-churn"
	ports := []int{19402}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic))
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		for i, r := range smallRecords("churn", 12) {
			cl, err := kgo.NewClient(kgoOpts(seeds, "kdissect-doctor-churner", kgo.DefaultProduceTopic(topic))...)
			if err != nil {
				return err
			}
			err = cl.ProduceSync(ctx, r).FirstErr()
			cl.Close()
			if err != nil {
				return fmt.Errorf("produce record %d: %w", i, err)
			}
		}
		return nil
	})
}

// kgoMetadataStorm: one broker on 19403. A franz-go producer whose metadata is refreshed
// every 100 ms (MetadataMaxAge, metadata.max.age.ms elsewhere; MetadataMinAge lets it) writes
// a record every 100 ms for 6 s: it asks for metadata about as often as it produces.
func kgoMetadataStorm(ctx context.Context, file string) error {
	const topic = "kdissect-doctor-eager"
	ports := []int{19403}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic))
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		cl, err := kgo.NewClient(kgoOpts(seeds, "kdissect-doctor-eager-producer",
			kgo.DefaultProduceTopic(topic),
			kgo.MetadataMinAge(50*time.Millisecond),
			kgo.MetadataMaxAge(100*time.Millisecond),
		)...)
		if err != nil {
			return err
		}
		defer cl.Close()
		for i, r := range smallRecords("eager", 60) {
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				return fmt.Errorf("produce record %d: %w", i, err)
			}
			if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
				return err
			}
		}
		return nil
	})
}
