package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The workload gen captures: producers with every codec and acks setting, plain consumers
// reading everything back, and consumer groups (classic with two balancers, and KIP-848).
const (
	numProducers       = 20
	numConsumers       = 3
	partitionsPerTopic = 6
	minValue, maxValue = 100, 10 << 10 // record value sizes, bytes (log-uniform between)
)

var topics = []string{"kbench-orders", "kbench-clicks", "kbench-logs", "kbench-metrics"}

var codecs = []struct {
	name  string
	codec kgo.CompressionCodec
}{
	{"none", kgo.NoCompression()},
	{"gzip", kgo.GzipCompression()},
	{"snappy", kgo.SnappyCompression()},
	{"lz4", kgo.Lz4Compression()},
	{"zstd", kgo.ZstdCompression()},
}

// groups are the consumer groups and their members.
var groups = []struct {
	name    string
	members int
	opts    []kgo.Opt
}{
	// The default balancer (cooperative-sticky), offsets committed every second.
	{"kbench-group", 4, []kgo.Opt{kgo.AutoCommitInterval(time.Second)}},
	// The eager range balancer.
	{"kbench-group-range", 2, []kgo.Opt{kgo.Balancers(kgo.RangeBalancer()), kgo.AutoCommitInterval(2 * time.Second)}},
	// KIP-848: the broker assigns partitions (ConsumerGroupHeartbeat).
	{"kbench-group-848", 2, []kgo.Opt{kgo.Balancers(kgo.RangeBalancer()), kgo.ServerSideBalancer()}},
}

type workload struct {
	wg         sync.WaitGroup
	failed     chan error // the first failure of a client
	valueBytes atomic.Int64
	produced   atomic.Int64
	consumed   atomic.Int64
	limiter    *limiter
	versions   *kversion.Versions // the highest request versions the clients may use; nil: any
	// backlog: the plain consumers wait for this many bytes of values, then fetch up to that
	// much at once (0: they read from the start, as the records come).
	backlog int64
}

// startWorkload starts every client; they run until ctx ends.
func startWorkload(ctx context.Context, seeds []string, rateMBps float64, versions *kversion.Versions, backlog int64) *workload {
	w := &workload{failed: make(chan error, 1), versions: versions, backlog: backlog}
	if rateMBps > 0 {
		w.limiter = newLimiter(rateMBps * 1e6)
	}
	for i := range numProducers {
		w.goClient(ctx, fmt.Sprintf("producer %d", i), func() error { return w.producer(ctx, seeds, i) })
	}
	for i := range numConsumers {
		w.goClient(ctx, fmt.Sprintf("consumer %d", i), func() error { return w.consumer(ctx, seeds, i) })
	}
	for _, g := range groups {
		if backlog > 0 {
			break // a capture of big fetches: no groups, whose sessions time out while the backlog builds on a busy machine
		}
		for m := range g.members {
			id := fmt.Sprintf("%s-member-%d", g.name, m)
			opts := append([]kgo.Opt{kgo.ConsumerGroup(g.name), kgo.ClientID(id),
				kgo.SessionTimeout(6 * time.Second), kgo.HeartbeatInterval(time.Second)}, g.opts...)
			w.goClient(ctx, id, func() error { return w.consume(ctx, seeds, opts) })
		}
	}
	return w
}

func (w *workload) goClient(ctx context.Context, name string, run func() error) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		if err := run(); err != nil && ctx.Err() == nil {
			select {
			case w.failed <- fmt.Errorf("%s: %w", name, err):
			default:
			}
		}
	}()
}

// wait waits for every client to close, at most timeout.
func (w *workload) wait(timeout time.Duration) error {
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("clients did not close within %v", timeout)
	}
}

func (w *workload) baseOpts(seeds []string) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.DialTimeout(5 * time.Second),
		kgo.RetryTimeout(30 * time.Second),
		kgo.MetadataMaxAge(10 * time.Second),
	}
	if w.versions != nil {
		opts = append(opts, kgo.MaxVersions(w.versions))
	}
	return opts
}

// producer i uses codec i%5; most are idempotent with acks=all, some acks=1, one acks=0.
func (w *workload) producer(ctx context.Context, seeds []string, i int) error {
	c := codecs[i%len(codecs)]
	opts := append(w.baseOpts(seeds),
		kgo.ClientID(fmt.Sprintf("kbench-producer-%02d-%s", i, c.name)),
		kgo.ProducerBatchCompression(c.codec),
		kgo.ProducerLinger(time.Duration(i%4)*5*time.Millisecond),
		kgo.MaxBufferedRecords(2000),
	)
	acks := "all"
	switch {
	case i == numProducers-1:
		acks = "0"
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	case i%7 == 3:
		acks = "1"
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	rng := rand.New(rand.NewPCG(uint64(i), 0x6b62656e6368))
	var failed atomic.Pointer[error]
	for seq := 0; ctx.Err() == nil; seq++ {
		if e := failed.Load(); e != nil {
			return fmt.Errorf("produce (acks=%s, %s): %w", acks, c.name, *e)
		}
		r := makeRecord(rng, i, seq)
		if w.limiter != nil && !w.limiter.take(ctx, len(r.Value)) {
			break
		}
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil {
				if ctx.Err() == nil && !errors.Is(err, kgo.ErrClientClosed) {
					failed.CompareAndSwap(nil, &err)
				}
				return
			}
			w.produced.Add(1)
			w.valueBytes.Add(int64(len(r.Value)))
		})
	}
	return nil
}

// consumer i reads every topic from the start, with different fetch sizes; with a backlog, it
// waits for it and then fetches it in responses as big as it.
func (w *workload) consumer(ctx context.Context, seeds []string, i int) error {
	opts := []kgo.Opt{kgo.ClientID(fmt.Sprintf("kbench-consumer-%d", i))}
	if w.backlog > 0 {
		for w.valueBytes.Load() < w.backlog {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(100 * time.Millisecond):
			}
		}
		// franz-go refuses a broker read limit over 1 GiB, and that limit is twice max.
		max := int32(min(2*w.backlog, 1<<29))
		opts = append(opts, kgo.FetchMaxBytes(max), kgo.FetchMaxPartitionBytes(max), kgo.BrokerMaxReadBytes(2*max))
		return w.consume(ctx, seeds, opts)
	}
	switch i % 3 {
	case 1:
		opts = append(opts, kgo.FetchMaxBytes(1<<20), kgo.FetchMaxPartitionBytes(256<<10))
	case 2:
		opts = append(opts, kgo.FetchMaxWait(50*time.Millisecond), kgo.FetchMinBytes(64<<10))
	}
	return w.consume(ctx, seeds, opts)
}

func (w *workload) consume(ctx context.Context, seeds []string, more []kgo.Opt) error {
	opts := append(w.baseOpts(seeds),
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond),
	)
	cl, err := kgo.NewClient(append(opts, more...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		for _, e := range fs.Errors() {
			if !errors.Is(e.Err, context.Canceled) {
				return fmt.Errorf("fetch %s[%d]: %w", e.Topic, e.Partition, e.Err)
			}
		}
		w.consumed.Add(int64(fs.NumRecords()))
	}
	return nil
}

// Words of the record values: text, so that the codecs have something to do, as with real
// JSON events.
var words = strings.Fields(`order click view cart checkout login logout search payment refund
	shipped delivered cancelled pending user session device browser mobile desktop region europe
	america asia price quantity currency EUR USD GBP status ok error timeout retry latency`)

// makeRecord makes a JSON-like record of producer p: value sizes log-uniform between minValue
// and maxValue, a key on most, headers on a quarter.
func makeRecord(rng *rand.Rand, p, seq int) *kgo.Record {
	size := int(math.Exp(math.Log(minValue) + rng.Float64()*(math.Log(maxValue)-math.Log(minValue))))
	var b strings.Builder
	b.Grow(size + 64)
	fmt.Fprintf(&b, `{"producer":%d,"seq":%d,"user":"user-%05d","event":"%s","amount":%d.%02d,"tags":[`,
		p, seq, rng.IntN(50000), words[rng.IntN(len(words))], rng.IntN(1000), rng.IntN(100))
	for n := 0; b.Len() < size-40; n++ {
		if n > 0 {
			b.WriteByte(',')
		}
		if rng.IntN(8) == 0 {
			fmt.Fprintf(&b, `"%016x"`, rng.Uint64())
		} else {
			fmt.Fprintf(&b, `"%s"`, words[rng.IntN(len(words))])
		}
	}
	b.WriteString(`]}`)
	r := &kgo.Record{Topic: topics[rng.IntN(len(topics))], Value: []byte(b.String())}
	if rng.IntN(20) != 0 {
		r.Key = fmt.Appendf(nil, "user-%05d", rng.IntN(50000))
	}
	if rng.IntN(4) == 0 {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "trace-id", Value: fmt.Appendf(nil, "%016x%016x", rng.Uint64(), rng.Uint64())})
		if rng.IntN(2) == 0 {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: "content-type", Value: []byte("application/json")})
		}
		if rng.IntN(4) == 0 {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: "source", Value: fmt.Appendf(nil, "kbench-producer-%02d", p)})
		}
	}
	return r
}

// limiter is a token bucket of bytes per second shared by the producers.
type limiter struct {
	mu          sync.Mutex
	rate, burst float64 // bytes per second, bytes
	tokens      float64
	last        time.Time
}

func newLimiter(rate float64) *limiter {
	burst := math.Max(rate/10, 2*maxValue)
	return &limiter{rate: rate, burst: burst, tokens: burst, last: time.Now()}
}

// take waits until n bytes may be written; false if ctx ended first.
func (l *limiter) take(ctx context.Context, n int) bool {
	for {
		l.mu.Lock()
		now := time.Now()
		l.tokens = math.Min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
		l.last = now
		if l.tokens >= float64(n) {
			l.tokens -= float64(n)
			l.mu.Unlock()
			return true
		}
		wait := time.Duration((float64(n) - l.tokens) / l.rate * float64(time.Second))
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
}
