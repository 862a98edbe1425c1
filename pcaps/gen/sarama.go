package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
)

// saramaConfig returns a sarama configuration speaking the request
// versions of a recent Kafka release, with short waits and timeouts.
func saramaConfig(clientID string) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = clientID
	cfg.Version = sarama.V4_0_0_0
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Net.ReadTimeout = 10 * time.Second
	cfg.Net.WriteTimeout = 10 * time.Second
	cfg.Metadata.Retry.Max = 3
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond

	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Compression = sarama.CompressionNone

	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Session.Timeout = groupSessionTimeout
	cfg.Consumer.Group.Heartbeat.Interval = 200 * time.Millisecond
	cfg.Consumer.Group.Rebalance.Timeout = 5 * time.Second
	return cfg
}

// saramaProduceConsume: one broker on 9092; a sarama SyncProducer sends
// records (one with headers, one with a null key, one with a null value)
// and a sarama consumer group member reads them, commits and leaves.
func saramaProduceConsume(ctx context.Context, file string) error {
	const (
		topic = "kdissect-sarama"
		group = "kdissect-sarama-group"
	)
	ports := []int{9092}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic), kfakeShortSessions())
	if err != nil {
		return err
	}
	defer c.Close()

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := sarama.NewSyncProducer(seeds, saramaConfig("kdissect-sarama-producer"))
		if err != nil {
			return fmt.Errorf("producer: %w", err)
		}
		msgs := []*sarama.ProducerMessage{
			{Key: sarama.StringEncoder("sku-1"), Value: sarama.StringEncoder(`{"sku":1,"price":"9.99"}`)},
			{Key: sarama.StringEncoder("sku-2"), Value: sarama.StringEncoder(`{"sku":2,"price":"4.50"}`), Headers: []sarama.RecordHeader{
				{Key: []byte("source"), Value: []byte("sarama")},
			}},
			{Value: sarama.StringEncoder("a record with a null key")},
			{Key: sarama.StringEncoder("sku-1")}, // a tombstone: null value
		}
		for i, m := range msgs {
			m.Topic = topic
			m.Timestamp = fixedTime.Add(time.Duration(i) * time.Millisecond)
		}
		err = prod.SendMessages(msgs)
		if cerr := prod.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("produce: %w", err)
		}

		cg, err := sarama.NewConsumerGroup(seeds, group, saramaConfig("kdissect-sarama-consumer"))
		if err != nil {
			return fmt.Errorf("consumer group: %w", err)
		}
		consumeCtx, stop := context.WithCancel(ctx)
		defer stop()
		h := &saramaHandler{want: len(msgs), done: stop}
		err = cg.Consume(consumeCtx, []string{topic}, h)
		if cerr := cg.Close(); err == nil {
			err = cerr
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("consume: %w", err)
		}
		if h.got < h.want {
			return fmt.Errorf("consumed %d of %d records: %w", h.got, h.want, ctx.Err())
		}
		return nil
	})
}

// saramaHandler consumes want records, commits them, stays a moment for
// heartbeats and then calls done.
type saramaHandler struct {
	want, got int
	done      func()
}

func (h *saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			sess.MarkMessage(m, "")
			h.got++
			if h.got == h.want {
				sess.Commit()
				time.Sleep(500 * time.Millisecond)
				h.done()
			}
		case <-sess.Context().Done():
			return nil
		}
	}
}
