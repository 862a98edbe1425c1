package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kgoFetchSession: one broker on 9092, topics A (two partitions) and B
// (one). A franz-go consumer reads both in an incremental fetch session
// (KIP-227, franz-go's default): it pauses B, which makes its next Fetch
// forget B's partition, and resumes it, which adds it again. A second
// client then sends Fetch requests of its own through kmsg to show what a
// broker does with a session used wrongly: a skipped epoch (answered
// INVALID_FETCH_SESSION_EPOCH), a request that closes the session (epoch
// -1), and one to the closed session (FETCH_SESSION_ID_NOT_FOUND).
func kgoFetchSession(ctx context.Context, file string) error {
	const (
		topicA = "kdissect-session-a"
		topicB = "kdissect-session-b"
	)
	ports := []int{9092}
	c, seeds, err := newCluster(ports)
	if err != nil {
		return err
	}
	defer c.Close()

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := kgo.NewClient(kgoOpts(seeds, "kdissect-session-producer", kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
		if err != nil {
			return err
		}
		defer prod.Close()
		adm := kadm.NewClient(prod)
		if _, err := adm.CreateTopic(ctx, 2, 1, nil, topicA); err != nil {
			return fmt.Errorf("create topic: %w", err)
		}
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topicB); err != nil {
			return fmt.Errorf("create topic: %w", err)
		}
		n := 0
		produce := func(topic string, partition int32) error {
			r := &kgo.Record{Topic: topic, Partition: partition, Key: fmt.Appendf(nil, "k-%d", n),
				Value: fmt.Appendf(nil, "record %d of %s[%d]", n, topic, partition), Timestamp: fixedTime.Add(time.Duration(n) * time.Millisecond)}
			n++
			return prod.ProduceSync(ctx, r).FirstErr()
		}
		for _, tp := range []struct {
			t string
			p int32
		}{{topicA, 0}, {topicA, 1}, {topicB, 0}} {
			if err := produce(tp.t, tp.p); err != nil {
				return fmt.Errorf("produce: %w", err)
			}
		}

		cons, err := kgo.NewClient(kgoOpts(seeds, "kdissect-session-consumer",
			kgo.ConsumeTopics(topicA, topicB),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		)...)
		if err != nil {
			return err
		}
		defer cons.Close()
		if _, err := pollN(ctx, cons, 3); err != nil {
			return err
		}
		// Paused, B leaves the session: the next Fetch forgets it.
		cons.PauseFetchTopics(topicB)
		if err := produce(topicA, 0); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		if _, err := pollN(ctx, cons, 1); err != nil {
			return err
		}
		// Resumed, B comes back: the next Fetch adds it.
		cons.ResumeFetchTopics(topicB)
		if err := produce(topicB, 0); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		if _, err := pollN(ctx, cons, 1); err != nil {
			return err
		}
		cons.Close()

		return misusedSession(ctx, seeds, topicA)
	})
}

// misusedSession sends, from a client of its own, Fetch requests that open
// a session on partition 0 of topic, use it once, skip an epoch, close it,
// and use it after it was closed; the broker's answers are checked.
func misusedSession(ctx context.Context, seeds []string, topic string) error {
	cl, err := kgo.NewClient(kgoOpts(seeds, "kdissect-session-raw")...)
	if err != nil {
		return err
	}
	defer cl.Close()
	broker := cl.SeedBrokers()[0]
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mr, err := broker.Request(ctx, meta)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	topics := mr.(*kmsg.MetadataResponse).Topics
	if len(topics) != 1 {
		return fmt.Errorf("metadata: %d topics", len(topics))
	}
	id := topics[0].TopicID

	fetch := func(session, epoch int32, withPartition bool, want int16) (*kmsg.FetchResponse, error) {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 10
		req.MaxBytes = 1 << 20
		req.SessionID, req.SessionEpoch = session, epoch
		if withPartition {
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = topic, id
			p := kmsg.NewFetchRequestTopicPartition()
			p.Partition, p.FetchOffset, p.PartitionMaxBytes = 0, 0, 1<<20
			p.CurrentLeaderEpoch, p.LastFetchedEpoch, p.LogStartOffset = -1, -1, -1
			t.Partitions = append(t.Partitions, p)
			req.Topics = append(req.Topics, t)
		}
		r, err := broker.Request(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("fetch session %d epoch %d: %w", session, epoch, err)
		}
		resp := r.(*kmsg.FetchResponse)
		if resp.ErrorCode != want {
			return nil, fmt.Errorf("fetch session %d epoch %d: error %v, want %v", session, epoch, kerr.ErrorForCode(resp.ErrorCode), kerr.ErrorForCode(want))
		}
		return resp, nil
	}
	open, err := fetch(0, 0, true, 0)
	if err != nil {
		return err
	}
	s := open.SessionID
	if s == 0 {
		return fmt.Errorf("fetch: the broker opened no session")
	}
	steps := []struct {
		epoch     int32
		partition bool
		want      int16
	}{
		{1, false, 0}, // incremental, nothing changed
		{3, false, kerr.InvalidFetchSessionEpoch.Code}, // epoch 2 skipped
		{-1, true, 0}, // closes the session: a full fetch without one
		{2, false, kerr.FetchSessionIDNotFound.Code}, // the session is gone
	}
	for _, st := range steps {
		if _, err := fetch(s, st.epoch, st.partition, st.want); err != nil {
			return err
		}
	}
	return nil
}

// kgoLateMetadata: one broker on 9092 and a topic with records, created and
// filled before the capture starts, so the capture holds no message that
// names the topic's id before a client of its own (through kmsg) fetches
// from it by id (Fetch v13+). Only then does it ask for the topic's
// Metadata, whose response gives the id its name, and fetches once more.
func kgoLateMetadata(ctx context.Context, file string) error {
	const topic = "kdissect-late"
	ports := []int{9092}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic))
	if err != nil {
		return err
	}
	defer c.Close()

	// Before the capture: records, and the topic id.
	prod, err := kgo.NewClient(kgoOpts(seeds, "kdissect-late-producer", kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		return err
	}
	for i := range 3 {
		r := &kgo.Record{Key: fmt.Appendf(nil, "k-%d", i), Value: fmt.Appendf(nil, "late record %d", i),
			Timestamp: fixedTime.Add(time.Duration(i) * time.Millisecond)}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			prod.Close()
			return fmt.Errorf("produce: %w", err)
		}
	}
	td, err := kadm.NewClient(prod).ListTopics(ctx, topic)
	prod.Close()
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	id := td[topic].ID

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		cl, err := kgo.NewClient(kgoOpts(seeds, "kdissect-late-fetcher")...)
		if err != nil {
			return err
		}
		defer cl.Close()
		broker := cl.SeedBrokers()[0]
		fetch := func() error {
			req := kmsg.NewPtrFetchRequest()
			req.ReplicaID, req.MaxWaitMillis, req.MaxBytes = -1, 10, 1<<20
			req.SessionEpoch = -1 // no session
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = topic, id
			p := kmsg.NewFetchRequestTopicPartition()
			p.FetchOffset, p.PartitionMaxBytes = 0, 1<<20
			p.CurrentLeaderEpoch, p.LastFetchedEpoch, p.LogStartOffset = -1, -1, -1
			t.Partitions = append(t.Partitions, p)
			req.Topics = append(req.Topics, t)
			r, err := broker.Request(ctx, req)
			if err != nil {
				return fmt.Errorf("fetch: %w", err)
			}
			resp := r.(*kmsg.FetchResponse)
			if resp.Version < 13 {
				return fmt.Errorf("fetch v%d: topic ids need v13 or newer", resp.Version)
			}
			if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
				return fmt.Errorf("fetch: unexpected response %+v", resp)
			}
			return nil
		}
		if err := fetch(); err != nil {
			return err
		}
		meta := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(topic)
		meta.Topics = append(meta.Topics, mt)
		if _, err := broker.Request(ctx, meta); err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
		return fetch()
	})
}
