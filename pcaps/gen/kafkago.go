package main

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

// kafkagoProduceConsume: one broker on 9092; a segmentio/kafka-go Writer
// sends records (one with headers, one with a null key) and a kafka-go
// Reader in a consumer group reads and commits them.
func kafkagoProduceConsume(ctx context.Context, file string) error {
	const (
		topic = "kdissect-kafkago"
		group = "kdissect-kafkago-group"
	)
	ports := []int{9092}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic), kfakeShortSessions())
	if err != nil {
		return err
	}
	defer c.Close()

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		w := &kafka.Writer{
			Addr:         kafka.TCP(seeds...),
			Topic:        topic,
			Balancer:     &kafka.LeastBytes{},
			BatchTimeout: 10 * time.Millisecond,
			RequiredAcks: kafka.RequireAll,
			MaxAttempts:  3,
			ReadTimeout:  10 * time.Second,
			WriteTimeout: 10 * time.Second,
			Transport:    &kafka.Transport{ClientID: "kdissect-kafkago-writer", DialTimeout: 5 * time.Second},
		}
		msgs := []kafka.Message{
			{Key: []byte("city-1"), Value: []byte(`{"city":"Lisbon","temp":21}`)},
			{Key: []byte("city-2"), Value: []byte(`{"city":"Oslo","temp":4}`), Headers: []kafka.Header{
				{Key: "unit", Value: []byte("celsius")},
			}},
			{Value: []byte("a record with a null key")},
		}
		for i := range msgs {
			msgs[i].Time = fixedTime.Add(time.Duration(i) * time.Millisecond)
		}
		err := w.WriteMessages(ctx, msgs...)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}

		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers:           seeds,
			Topic:             topic,
			GroupID:           group,
			Dialer:            &kafka.Dialer{ClientID: "kdissect-kafkago-reader", Timeout: 5 * time.Second},
			MaxWait:           100 * time.Millisecond,
			StartOffset:       kafka.FirstOffset,
			HeartbeatInterval: 200 * time.Millisecond,
			SessionTimeout:    groupSessionTimeout,
			RebalanceTimeout:  5 * time.Second,
			JoinGroupBackoff:  200 * time.Millisecond,
			MaxAttempts:       3,
		})
		defer r.Close()
		for i := range msgs {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				return fmt.Errorf("fetch message %d: %w", i, err)
			}
			if err := r.CommitMessages(ctx, m); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
		}
		// Stay in the group for a few heartbeats, then leave on Close.
		time.Sleep(500 * time.Millisecond)
		return r.Close()
	})
}
