package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The scenarios of the doctor's group and consumer findings: each shows one trouble of a
// consumer group or a consumer, made by real franz-go clients doing what the finding says.
// Each has a broker port of its own, from 19300 on, which pcaps.Ports lists.

// newOwned returns an owned of no partitions.
func newOwned() *owned { return &owned{ch: make(chan struct{}, 1)} }

// groupMember starts a franz-go member of group reading topic, polling in the background until
// ctx ends or it is closed, whose callbacks count in o the partitions it owns; more options
// come last, so that they may replace these.
func groupMember(ctx context.Context, seeds []string, o *owned, client, group, topic string, more ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(kgoOpts(seeds, client, append([]kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.HeartbeatInterval(200 * time.Millisecond),
		kgo.FetchMaxWait(time.Second), // fewer empty fetches: a smaller capture
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(o.add(1)),
		kgo.OnPartitionsRevoked(o.add(-1)),
		kgo.OnPartitionsLost(o.add(-1)),
	}, more...)...)...)
	if err != nil {
		return nil, err
	}
	go pollUntilDone(ctx, cl)
	return cl, nil
}

// kgoMemberRemoved: one broker on 19300, a topic of 2 partitions. A franz-go member of group
// kdissect-doctor-removed (session timeout 3 s) owns both partitions; then its writes are held
// for 7 s, as a stopped process's (a long pause) would be: its heartbeat, sent at last, is
// answered UNKNOWN_MEMBER_ID, as the coordinator removed it when the session ran out. It
// joins again, gets both partitions back, and leaves.
func kgoMemberRemoved(ctx context.Context, file string) error {
	const name = "kdissect-doctor-removed"
	ports := []int{19300}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(2, name+"-topic"), kfakeShortSessions())
	if err != nil {
		return err
	}
	defer c.Close()
	var freeze writeFreeze
	lost := make(chan struct{})
	onLost := sync.OnceFunc(func() { close(lost) })
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		o := newOwned()
		cl, err := groupMember(ctx, seeds, o, name+"-member", name, name+"-topic",
			kgo.SessionTimeout(groupSessionTimeout), kgo.Dialer(freeze.dial),
			kgo.OnPartitionsLost(func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
				o.add(-1)(ctx, cl, m)
				onLost()
			}))
		if err != nil {
			return err
		}
		defer cl.Close()
		if err := o.wait(ctx, 2); err != nil {
			return fmt.Errorf("before the pause: %w", err)
		}
		freeze.hold(7 * time.Second)
		select {
		case <-lost:
		case <-ctx.Done():
			return fmt.Errorf("after the pause, the member kept its partitions: %w", ctx.Err())
		}
		if err := o.wait(ctx, 2); err != nil {
			return fmt.Errorf("after rejoining: %w", err)
		}
		return cl.LeaveGroupContext(ctx)
	})
}

// writeFreeze wraps a client's connections so that their writes can be held for a while:
// the client's requests wait, then go out as they were written.
type writeFreeze struct {
	mu    sync.Mutex
	until time.Time
}

// hold holds every write from now for d.
func (f *writeFreeze) hold(d time.Duration) {
	f.mu.Lock()
	f.until = time.Now().Add(d)
	f.mu.Unlock()
}

// dial has the signature of kgo.Dialer.
func (f *writeFreeze) dial(ctx context.Context, network, host string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	return &frozenConn{Conn: conn, f: f}, nil
}

type frozenConn struct {
	net.Conn
	f *writeFreeze
}

// Write writes b once the hold, if any, is over.
func (c *frozenConn) Write(b []byte) (int, error) {
	c.f.mu.Lock()
	wait := time.Until(c.f.until)
	c.f.mu.Unlock()
	if wait > 0 {
		time.Sleep(wait)
	}
	return c.Conn.Write(b)
}

// kgoRebalanceStorm: one broker on 19301, a topic of 2 partitions. A franz-go member of group
// kdissect-doctor-storm stays; another (one client id, a process restarting in a loop) joins,
// gets a partition and leaves, 6 times: each join and each leave is a new generation, 13 in
// all within a few seconds.
func kgoRebalanceStorm(ctx context.Context, file string) error {
	const name = "kdissect-doctor-storm"
	ports := []int{19301}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(2, name+"-topic"), kfakeShortSessions())
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		o := newOwned()
		stay, err := groupMember(ctx, seeds, o, name+"-stays", name, name+"-topic", kgo.SessionTimeout(groupSessionTimeout))
		if err != nil {
			return err
		}
		defer stay.Close()
		if err := o.wait(ctx, 2); err != nil {
			return fmt.Errorf("first member: %w", err)
		}
		for i := range 6 {
			if err := restart(ctx, seeds, name, o); err != nil {
				return fmt.Errorf("restart %d: %w", i, err)
			}
		}
		return stay.LeaveGroupContext(ctx)
	})
}

// restart runs one life of the restarting member of kgoRebalanceStorm: it joins, gets one
// partition (the staying member, stay, keeps the other) and leaves; stay then has both again.
func restart(ctx context.Context, seeds []string, name string, stay *owned) error {
	o := newOwned()
	cl, err := groupMember(ctx, seeds, o, name+"-restarts", name, name+"-topic", kgo.SessionTimeout(groupSessionTimeout))
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := errors.Join(o.wait(ctx, 1), stay.wait(ctx, 1)); err != nil {
		return err
	}
	if err := cl.LeaveGroupContext(ctx); err != nil {
		return err
	}
	return stay.wait(ctx, 2)
}

// kgoRebalanceSlow: one broker on 19302, a topic of 2 partitions holding 2 records. A franz-go
// member of group kdissect-doctor-slow that blocks rebalances while it processes what it
// polled (BlockRebalanceOnPoll, as sarama does) polls both records, then takes long to process
// them (12 s, from its poll). A second member joins meanwhile: the coordinator waits for the
// first to rejoin, which it does only once it is done, so the rebalance takes over 10 s. Both
// leave.
func kgoRebalanceSlow(ctx context.Context, file string) error {
	const name = "kdissect-doctor-slow"
	ports := []int{19302}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(2, name+"-topic"))
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		prod, err := kgo.NewClient(kgoOpts(seeds, name+"-producer", kgo.DefaultProduceTopic(name+"-topic"),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
		if err != nil {
			return err
		}
		defer prod.Close()
		if err := prod.ProduceSync(ctx, answerRecords("slow", 2)...).FirstErr(); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		busy := newOwned()
		cl, err := kgo.NewClient(kgoOpts(seeds, name+"-busy",
			kgo.ConsumerGroup(name),
			kgo.ConsumeTopics(name+"-topic"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.HeartbeatInterval(time.Second),
			kgo.FetchMaxWait(time.Second),
			kgo.BlockRebalanceOnPoll(),
			kgo.DisableAutoCommit(),
			kgo.OnPartitionsAssigned(busy.add(1)),
			kgo.OnPartitionsRevoked(busy.add(-1)),
		)...)
		if err != nil {
			return err
		}
		defer cl.Close()
		if _, err := pollN(ctx, cl, 2); err != nil {
			return err
		}
		late := newOwned()
		b, err := groupMember(ctx, seeds, late, name+"-late", name, name+"-topic")
		if err != nil {
			return err
		}
		defer b.Close()
		time.Sleep(12 * time.Second) // processing the records polled
		cl.AllowRebalance()
		go pollUntilDone(ctx, cl)
		if err := errors.Join(busy.wait(ctx, 1), late.wait(ctx, 1)); err != nil {
			return fmt.Errorf("after the second member joined: %w", err)
		}
		return errors.Join(b.LeaveGroupContext(ctx), cl.LeaveGroupContext(ctx))
	})
}

// kgoPartitionsUnowned: one broker on 19303, a topic of 4 partitions. A franz-go member of
// KIP-848 group kdissect-doctor-unowned owns all four; a second joins, and the coordinator
// takes two from the first for it. The first takes 12 s to give them up (its
// OnPartitionsRevoked callback, the first time: a slow flush of what it processed), and the
// coordinator gives them to the second only once the first says it has: they have no owner
// meanwhile. Both leave.
func kgoPartitionsUnowned(ctx context.Context, file string) error {
	const name = "kdissect-doctor-unowned"
	ports := []int{19303}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(4, name+"-topic"),
		kfake.BrokerConfigs(map[string]string{"group.consumer.heartbeat.interval.ms": "1000"}))
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		early := newOwned()
		flush := sync.OnceFunc(func() { time.Sleep(12 * time.Second) }) // the work done on them
		a, err := groupMember(ctx, seeds, early, name+"-early", name, name+"-topic", kgo.ServerSideBalancer(),
			kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
				flush()
				early.add(-1)(ctx, cl, m)
			}))
		if err != nil {
			return err
		}
		defer a.Close()
		if err := early.wait(ctx, 4); err != nil {
			return fmt.Errorf("first member: %w", err)
		}
		late := newOwned()
		b, err := groupMember(ctx, seeds, late, name+"-late", name, name+"-topic", kgo.ServerSideBalancer())
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
