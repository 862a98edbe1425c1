package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The scenarios of the conversation-level answers (--stats: groups, producers, transactions):
// what the older captures do not show. Each has a broker port of its own, from 19200 on,
// which pcaps.Ports lists.

// answerRecords makes n records with fixed keys, values and timestamps.
func answerRecords(prefix string, n int) []*kgo.Record {
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{
			Key:       fmt.Appendf(nil, "%s-%d", prefix, i),
			Value:     fmt.Appendf(nil, `{"%s":%d}`, prefix, i),
			Partition: int32(i % 2),
			Timestamp: fixedTime.Add(time.Duration(i) * time.Millisecond),
		})
	}
	return recs
}

// kgoTxnGroups: one broker on 19200. A consume-transform-produce loop of franz-go's
// GroupTransactSession, held to Kafka 3.8's versions so that it uses transactions v1
// (AddPartitionsToTxn): it reads 2 records of kdissect-answers-in in group
// kdissect-answers-txn-group, writes them to both partitions of kdissect-answers-out, and
// aborts; it reads them again and commits, its group's offsets with them (AddOffsetsToTxn,
// TxnOffsetCommit).
func kgoTxnGroups(ctx context.Context, file string) error {
	const (
		in, out = "kdissect-answers-in", "kdissect-answers-out"
		group   = "kdissect-answers-txn-group"
	)
	ports := []int{19200}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, in), kfake.SeedTopics(2, out), kfakeShortSessions())
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := kgo.NewClient(kgoOpts(seeds, "kdissect-answers-feeder", kgo.DefaultProduceTopic(in))...)
		if err != nil {
			return err
		}
		defer prod.Close()
		if err := prod.ProduceSync(ctx, answerRecords("in", 2)...).FirstErr(); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		sess, err := kgo.NewGroupTransactSession(kgoOpts(seeds, "kdissect-answers-txn",
			kgo.MaxVersions(kversion.V3_8_0()),
			kgo.TransactionalID("kdissect-answers-txn-id"),
			kgo.TransactionTimeout(10*time.Second),
			kgo.DefaultProduceTopic(out),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(in),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.SessionTimeout(groupSessionTimeout),
			kgo.HeartbeatInterval(200*time.Millisecond),
		)...)
		if err != nil {
			return err
		}
		defer sess.Close()
		for _, end := range []kgo.TransactionEndTry{kgo.TryAbort, kgo.TryCommit} {
			if err := transform(ctx, sess, end); err != nil {
				return err
			}
		}
		return nil
	})
}

// transform reads the input's 2 records, writes them out in a transaction and ends it.
func transform(ctx context.Context, sess *kgo.GroupTransactSession, end kgo.TransactionEndTry) error {
	var got []*kgo.Record
	for len(got) < 2 {
		fs := sess.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return fmt.Errorf("fetch: %w", errs[0].Err)
		}
		got = append(got, fs.Records()...)
	}
	if err := sess.Begin(); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	outs := answerRecords("out", len(got))
	if err := sess.ProduceSync(ctx, outs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	committed, err := sess.End(ctx, end)
	if err != nil {
		return fmt.Errorf("end transaction: %w", err)
	}
	if committed != bool(end) {
		return fmt.Errorf("transaction committed: %v, asked %v", committed, end)
	}
	return nil
}

// kgoGroupLateJoiner: one broker on 19201, a topic of 4 partitions. A franz-go member of
// group kdissect-answers-late (eager range balancer) joins alone and gets all four; a second
// member then joins: the first hears of the rebalance from its heartbeat, rejoins, and the
// second generation gives each member two. Both leave.
func kgoGroupLateJoiner(ctx context.Context, file string) error {
	return lateJoiner(ctx, file, 19201, "kdissect-answers-late", kgo.SessionTimeout(groupSessionTimeout))
}

// kgoGroupNextGen: one broker on 19203, a topic of 4 partitions. The same two members as
// kgoGroupLateJoiner, of a KIP-848 consumer group (ServerSideBalancer: ConsumerGroupHeartbeat):
// when the second joins, the coordinator takes two partitions from the first (revocation),
// then gives each member a new member epoch with two.
func kgoGroupNextGen(ctx context.Context, file string) error {
	return lateJoiner(ctx, file, 19203, "kdissect-answers-848", kgo.ServerSideBalancer())
}

// lateJoiner runs the late-joiner scenarios: group and client ids start with name.
func lateJoiner(ctx context.Context, file string, port int, name string, opt kgo.GroupOpt) error {
	topic := name + "-topic"
	ports := []int{port}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(4, topic), kfakeShortSessions())
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		member := func(client string) (*kgo.Client, *owned, error) {
			o := &owned{ch: make(chan struct{}, 1)}
			cl, err := kgo.NewClient(kgoOpts(seeds, client,
				kgo.ConsumerGroup(name),
				kgo.ConsumeTopics(topic),
				kgo.Balancers(kgo.RangeBalancer()),
				opt,
				kgo.HeartbeatInterval(200*time.Millisecond),
				kgo.DisableAutoCommit(),
				kgo.OnPartitionsAssigned(o.add(1)),
				kgo.OnPartitionsRevoked(o.add(-1)),
				kgo.OnPartitionsLost(o.add(-1)),
			)...)
			if err == nil {
				go pollUntilDone(ctx, cl)
			}
			return cl, o, err
		}
		a, early, err := member(name + "-early")
		if err != nil {
			return err
		}
		defer a.Close()
		if err := early.wait(ctx, 4); err != nil {
			return fmt.Errorf("first member: %w", err)
		}
		b, late, err := member(name + "-late")
		if err != nil {
			return err
		}
		defer b.Close()
		if err := errors.Join(early.wait(ctx, 2), late.wait(ctx, 2)); err != nil {
			return fmt.Errorf("after the second member joined: %w", err)
		}
		return errors.Join(b.LeaveGroupContext(ctx), a.LeaveGroupContext(ctx))
	})
}

// owned counts the partitions a member owns, as its callbacks say.
type owned struct {
	n  atomic.Int64
	ch chan struct{}
}

// add returns a callback that adds (sign 1) or takes away (-1) the partitions it is given.
func (o *owned) add(sign int64) func(context.Context, *kgo.Client, map[string][]int32) {
	return func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
		for _, ps := range m {
			o.n.Add(sign * int64(len(ps)))
		}
		select {
		case o.ch <- struct{}{}:
		default:
		}
	}
}

// wait waits until the member owns want partitions.
func (o *owned) wait(ctx context.Context, want int64) error {
	for o.n.Load() != want {
		select {
		case <-o.ch:
		case <-ctx.Done():
			return fmt.Errorf("owns %d partitions, not %d: %w", o.n.Load(), want, ctx.Err())
		}
	}
	return nil
}

// pollUntilDone polls cl, so that it takes part in its group, until ctx ends or cl closes.
func pollUntilDone(ctx context.Context, cl *kgo.Client) {
	for ctx.Err() == nil {
		if fs := cl.PollFetches(ctx); fs.IsClientClosed() {
			return
		}
	}
}

// kgoProduceRetry: one broker on 19202. An idempotent franz-go producer writes 3 records to
// partition 0; the broker (a kfake control function) answers its first Produce request
// REQUEST_TIMED_OUT without writing, so the producer sends the same batch, with the same
// sequence numbers, again. It then writes 2 more.
func kgoProduceRetry(ctx context.Context, file string) error {
	const topic = "kdissect-answers-retry"
	ports := []int{19202}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic))
	if err != nil {
		return err
	}
	defer c.Close()
	var failed atomic.Bool
	c.ControlKey(int16(kmsg.Produce), func(r kmsg.Request) (kmsg.Response, error, bool) {
		if failed.Swap(true) {
			return nil, nil, false
		}
		return timedOut(r.(*kmsg.ProduceRequest)), nil, true
	})
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := kgo.NewClient(kgoOpts(seeds, "kdissect-answers-retry-producer",
			kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
		)...)
		if err != nil {
			return err
		}
		defer prod.Close()
		recs := answerRecords("retry", 5)
		for _, r := range recs {
			r.Partition = 0
		}
		for _, batch := range [][]*kgo.Record{recs[:3], recs[3:]} {
			if err := prod.ProduceSync(ctx, batch...).FirstErr(); err != nil {
				return fmt.Errorf("produce: %w", err)
			}
		}
		if !failed.Load() {
			return errors.New("the broker never failed a Produce request")
		}
		return nil
	})
}

// timedOut is the answer REQUEST_TIMED_OUT to every partition of req.
func timedOut(req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	resp.Version = req.Version
	for _, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = kerr.RequestTimedOut.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
