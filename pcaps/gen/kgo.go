package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoOpts are the options every franz-go client here shares: short waits
// so that captures stay small, and no compression so records are readable.
func kgoOpts(seeds []string, clientID string, more ...kgo.Opt) []kgo.Opt {
	return append([]kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID(clientID),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.FetchMaxWait(100 * time.Millisecond),
		kgo.RetryTimeout(10 * time.Second),
		kgo.DialTimeout(5 * time.Second),
	}, more...)
}

// pollN polls cl until it has n records or ctx ends.
func pollN(ctx context.Context, cl *kgo.Client, n int) ([]*kgo.Record, error) {
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return got, fmt.Errorf("consumed %d of %d records: %w", len(got), n, err)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return got, fmt.Errorf("fetch %s[%d]: %w", errs[0].Topic, errs[0].Partition, errs[0].Err)
		}
		got = append(got, fs.Records()...)
	}
	return got, nil
}

// kgoProduceFetch: one broker on 9092; a franz-go client creates a topic,
// produces records (one with headers, one with a null key, one with a null
// value) and a second client reads them back from the start.
func kgoProduceFetch(ctx context.Context, file string) error {
	const topic = "kdissect-events"
	ports := []int{9092}
	c, seeds, err := newCluster(ports)
	if err != nil {
		return err
	}
	defer c.Close()

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := kgo.NewClient(kgoOpts(seeds, "kdissect-producer", kgo.DefaultProduceTopic(topic))...)
		if err != nil {
			return err
		}
		defer prod.Close()

		adm := kadm.NewClient(prod)
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			return fmt.Errorf("create topic: %w", err)
		}

		batches := [][]*kgo.Record{
			{
				{Key: []byte("user-1"), Value: []byte(`{"event":"login","user":1}`)},
				{Key: []byte("user-2"), Value: []byte(`{"event":"login","user":2}`), Headers: []kgo.RecordHeader{
					{Key: "trace-id", Value: []byte("4bf92f3577b34da6")},
					{Key: "content-type", Value: []byte("application/json")},
				}},
				{Key: nil, Value: []byte("a record with a null key")},
			},
			{
				{Key: []byte("user-1"), Value: nil}, // a tombstone: null value
				{Key: []byte("bin"), Value: []byte{0x00, 0x01, 0x02, 0xfe, 0xff}},
			},
		}
		n := 0
		for i, batch := range batches {
			for j, r := range batch {
				r.Timestamp = fixedTime.Add(time.Duration(i*10+j) * time.Millisecond)
			}
			if err := prod.ProduceSync(ctx, batch...).FirstErr(); err != nil {
				return fmt.Errorf("produce: %w", err)
			}
			n += len(batch)
		}

		cons, err := kgo.NewClient(kgoOpts(seeds, "kdissect-consumer",
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		)...)
		if err != nil {
			return err
		}
		defer cons.Close()
		_, err = pollN(ctx, cons, n)
		return err
	})
}

// kgoGroup3Brokers: three brokers on 9092-9094, a topic with three
// partitions; one franz-go client produces, another consumes it as a
// member of a consumer group, commits, heartbeats and leaves.
func kgoGroup3Brokers(ctx context.Context, file string) error {
	const (
		topic = "kdissect-orders"
		group = "kdissect-group"
	)
	ports := []int{9092, 9093, 9094}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(3, topic), kfakeShortSessions())
	if err != nil {
		return err
	}
	defer c.Close()

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := kgo.NewClient(kgoOpts(seeds, "kdissect-producer",
			kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
		)...)
		if err != nil {
			return err
		}
		defer prod.Close()
		var recs []*kgo.Record
		for i := range 9 {
			recs = append(recs, &kgo.Record{
				Key:       fmt.Appendf(nil, "order-%d", i),
				Value:     fmt.Appendf(nil, `{"order":%d,"qty":%d}`, i, i+1),
				Partition: int32(i % 3),
				Timestamp: fixedTime.Add(time.Duration(i) * time.Millisecond),
			})
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("produce: %w", err)
		}

		cons, err := kgo.NewClient(kgoOpts(seeds, "kdissect-group-member",
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.SessionTimeout(groupSessionTimeout),
			kgo.HeartbeatInterval(200*time.Millisecond),
			kgo.DisableAutoCommit(),
		)...)
		if err != nil {
			return err
		}
		defer cons.Close()
		if _, err := pollN(ctx, cons, len(recs)); err != nil {
			return err
		}
		if err := cons.CommitUncommittedOffsets(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		// Stay in the group long enough for a few heartbeats.
		time.Sleep(700 * time.Millisecond)
		if err := cons.LeaveGroupContext(ctx); err != nil {
			return fmt.Errorf("leave group: %w", err)
		}
		return nil
	})
}

// kgoMidstream: a franz-go producer and consumer are connected and busy on
// 9092 before the capture starts. The producer's connection holds its
// Produce request half written while tcpdump starts, so the capture opens
// in the middle of a frame, on connections whose SYN it never saw.
func kgoMidstream(ctx context.Context, file string) error {
	ports := []int{9092}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, midstreamTopic))
	if err != nil {
		return err
	}
	defer c.Close()

	gate := newHalfWriteGate()
	defer gate.release() // never leave a write held, whatever happens
	prod, cons, err := midstreamClients(seeds, gate)
	if err != nil {
		return err
	}
	defer prod.Close()
	defer cons.Close()
	produce := func(i int) error { return prod.ProduceSync(ctx, midstreamRecord(i)).FirstErr() }

	for i := range midstreamBefore {
		if err := produce(i); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
	}
	if _, err := pollN(ctx, cons, midstreamBefore); err != nil {
		return err
	}

	// The next Produce request stops half written until the capture runs.
	gate.arm()
	produced := make(chan error, 1)
	go func() {
		for i := midstreamBefore; i < midstreamBefore+midstreamAfter; i++ {
			if err := produce(i); err != nil {
				produced <- fmt.Errorf("produce: %w", err)
				return
			}
			time.Sleep(midstreamProduceWait)
		}
		produced <- nil
	}()
	select {
	case <-gate.held:
	case err := <-produced:
		return fmt.Errorf("producer finished without reaching the gate: %v", err)
	case <-ctx.Done():
		return ctx.Err()
	}
	return captureMidstream(ctx, file, ports, gate, produced, cons)
}

const (
	midstreamTopic       = "kdissect-stream"
	midstreamValueSize   = 3000
	midstreamBefore      = 5 // records produced before the capture
	midstreamAfter       = 8 // records produced after it started
	midstreamProduceWait = 30 * time.Millisecond
)

// midstreamClients are kgoMidstream's producer, whose writes go through the gate, and
// consumer.
func midstreamClients(seeds []string, gate *halfWriteGate) (prod, cons *kgo.Client, err error) {
	prod, err = kgo.NewClient(kgoOpts(seeds, "kdissect-stream-producer",
		kgo.DefaultProduceTopic(midstreamTopic),
		kgo.Dialer(gate.dial),
	)...)
	if err != nil {
		return nil, nil, err
	}
	cons, err = kgo.NewClient(kgoOpts(seeds, "kdissect-stream-consumer",
		kgo.ConsumeTopics(midstreamTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)...)
	if err != nil {
		prod.Close()
		return nil, nil, err
	}
	return prod, cons, nil
}

// midstreamRecord is the record i of kgoMidstream, its value midstreamValueSize bytes of text.
func midstreamRecord(i int) *kgo.Record {
	line := fmt.Sprintf("record %03d ", i)
	return &kgo.Record{
		Key:       fmt.Appendf(nil, "k%03d", i),
		Value:     []byte(strings.Repeat(line, midstreamValueSize/len(line))),
		Timestamp: fixedTime.Add(time.Duration(i) * time.Millisecond),
	}
}

// captureMidstream starts the capture while the gate holds a write, lets it go, and stops
// once the producer is done and cons has read the records produced after.
func captureMidstream(ctx context.Context, file string, ports []int, gate *halfWriteGate, produced <-chan error, cons *kgo.Client) error {
	capt, err := startCapture(file, ports)
	if err != nil {
		return err
	}
	gate.release()
	if err := <-produced; err != nil {
		capt.abort()
		return err
	}
	if _, err := pollN(ctx, cons, midstreamAfter); err != nil {
		capt.abort()
		return err
	}
	// Stop while the connections are still open: no FIN either.
	return capt.stop()
}
