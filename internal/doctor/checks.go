package doctor

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/internal/plural"
)

// Check is one kind of finding: a row of the doctor's table.
type Check struct {
	// ID names the finding, for good: scripts and the docs use it.
	ID string
	// Severity is the finding's severity; a check may give some findings another (errors:
	// per error code).
	Severity Severity
	// Threshold says when the check fires, in words, for the docs.
	Threshold string
	// Why says what the finding means; Advice what to check or change.
	Why, Advice string
	find        func(d *Doctor) []Finding
}

// The thresholds of the checks.
const (
	// SmallBatchesMin is how many batches a producer must send before its batch sizes say
	// anything; SmallBatchRecords the median records per batch at or under which they are small.
	SmallBatchesMin   = 100
	SmallBatchRecords = 1
	// NoCompressionMinBytes is how many bytes of uncompressed records a producer must send
	// before compressing them is worth saying.
	NoCompressionMinBytes = 64 << 10
	// MetadataStormMin is how many Metadata requests one client id must send, at
	// MetadataStormRate per second or more over the span it sends them, to be a storm.
	MetadataStormMin  = 50
	MetadataStormRate = 1.0
	// ChurnMin is how many connections one client id must open to one broker to churn.
	ChurnMin = 20
	// RebalanceSlow is how long a rebalance must take to be slow: well past a new group's
	// wait for its first members (group.initial.rebalance.delay.ms, 3 s by default).
	RebalanceSlow = 10 * time.Second
	// RebalanceStormPerMinute is how many generations (or, for KIP-848 groups, member epochs)
	// a group may go through within a minute: a few when members start or stop together,
	// more means members keep coming, leaving or being removed.
	RebalanceStormPerMinute = 10
	// MemberGapMin is how long a member must have sent nothing before an answer that it is
	// unknown (or fenced) says the coordinator removed it: the shortest session a broker allows
	// by default (group.min.session.timeout.ms, 6 s).
	MemberGapMin = 6 * time.Second
	// PartitionsUnownedMax is how long partitions of a KIP-848 group may stay without an owner:
	// a revoked partition waits for its new owner's next heartbeat, which comes within
	// group.consumer.heartbeat.interval.ms (5 s by default); twice that is too long.
	PartitionsUnownedMax = 10 * time.Second
	// LagGrowingMin is how many records a consumer's lag on a partition must rise by, from its
	// first measure to its last, to be growing.
	LagGrowingMin = 100
	// StalledFetchesMin is how many fetches of a partition, all at one offset while records
	// are there to read, make a consumer stalled on it.
	StalledFetchesMin = 10
	// A window of the latency analysis (analysis.LatencyWindowLength) is stalled for a broker
	// when it answered an API LatencyStallCount times or more in it, in LatencyStallMin or
	// more on average and LatencyStallFactor times its median for the API or more;
	// latency-stall fires when LatencyStallBrokers brokers or more stall in the same window.
	LatencyStallCount   = 3
	LatencyStallMin     = 100 * time.Millisecond
	LatencyStallFactor  = 10
	LatencyStallBrokers = 2
	// A broker is an outlier for an API when its median latency, over LatencyOutlierCount
	// answers or more, is LatencyOutlierFactor times the other brokers' (their median) or more,
	// and LatencyOutlierMin more at least.
	LatencyOutlierCount  = 20
	LatencyOutlierFactor = 5
	LatencyOutlierMin    = 50 * time.Millisecond
)

// Checks returns the doctor's table: every check, in the order findings of one severity are
// listed.
func Checks() []Check {
	return slices.Concat(wireChecks(), groupChecks(), clientChecks())
}

// wireChecks are the checks of the capture itself, of errors, and of producers' sequences.
func wireChecks() []Check {
	return []Check{
		{ID: "capture-loss", Severity: Warning, Threshold: "any bytes lost (not captured) on a Kafka connection",
			Why:    "The capture missed packets: messages around the loss are missing or cut, so the other findings may be wrong there.",
			Advice: "Capture with a bigger buffer (tcpdump -B 16384), a snap length of 0 (-s 0), a filter on the Kafka ports only, and write to a fast disk; check the capture's drop count.",
			find:   one(Warning, func(d *Doctor) (Evidence, string) { return d.loss, "%s of lost bytes" }, "gap", "connection")},
		{ID: "tls-undecrypted", Severity: Warning, Threshold: "any Kafka connection whose TLS was not decrypted",
			Why:    "These connections are encrypted and their messages are not shown: nothing in them was checked.",
			Advice: "Give the key log the clients wrote (--tls-keylog FILE; SSLKEYLOGFILE, or the JVM's and librdkafka's key log options) for the same run as the capture.",
			find:   one(Warning, func(d *Doctor) (Evidence, string) { return d.tls, "%s not decrypted" }, "TLS connection", "")},
		{ID: "errors", Severity: Warning, Threshold: "any response with a non-zero error code; severity per code: error for authorization, authentication, corruption, size and idempotence failures, info for the steps of a normal group join and fetch session",
			Why:    "Brokers refused or failed requests.",
			Advice: "Look at the frames: the request, its response and its error; kdissect errors CODE says what the code means.",
			find:   (*Doctor).errorFindings},
		{ID: "producer-sequence-gap", Severity: Error, Threshold: "an idempotent producer's batch starting past the next sequence number of its partition",
			Why:    "A producer's batch starts past the sequence the broker expects: batches between were never sent, or never captured (see capture-loss); the broker refuses it (OUT_OF_ORDER_SEQUENCE_NUMBER).",
			Advice: "Check capture-loss first; then the producer's errors and epochs: a gap without loss means records were lost between the producer and the broker (enable.idempotence, acks=all, retries, delivery.timeout.ms).",
			find:   (*Doctor).gapFindings},
		{ID: "producer-retries", Severity: Warning, Threshold: "an idempotent producer's batch whose sequence numbers were all sent before",
			Why:    "A producer sent the same batch again: the first attempt got an error or no answer in time, so records arrive late (the broker drops the duplicate).",
			Advice: "Find why the first attempt failed (its response's error, or request.timeout.ms passed); check the broker's load and replication (min.insync.replicas, acks), and request.timeout.ms and delivery.timeout.ms.",
			find:   (*Doctor).retryFindings},
	}
}

// groupChecks are the checks of consumer groups and consumers.
func groupChecks() []Check {
	return []Check{
		{ID: "rebalance-slow", Severity: Warning, Threshold: fmt.Sprintf("a rebalance taking %s or more, from its first JoinGroup request to its last SyncGroup response (for KIP-848 groups, from a member's revocation to its new epoch)", RebalanceSlow),
			Why:    "A group stopped consuming for a long time while it rebalanced: the coordinator waits for every member to rejoin, and a member busy processing rejoins only at its next poll.",
			Advice: "Check the members' processing time per poll against max.poll.interval.ms (and max.poll.records), session.timeout.ms, and group.initial.rebalance.delay.ms; cooperative rebalancing (partition.assignment.strategy=cooperative-sticky) or KIP-848 (group.protocol=consumer) keeps partitions through rebalances.",
			find:   (*Doctor).slowRebalanceFindings},
		{ID: "rebalance-storm", Severity: Warning, Threshold: fmt.Sprintf("a group going through more than %d generations (KIP-848: member epochs) within a minute", RebalanceStormPerMinute),
			Why:    "A group keeps rebalancing: members keep joining, leaving or being removed, and each rebalance pauses (classic groups) or moves partitions.",
			Advice: "Look for members that come and go: processing longer than max.poll.interval.ms, heartbeats missing for session.timeout.ms (heartbeat.interval.ms; group.consumer.heartbeat.interval.ms and group.consumer.session.timeout.ms for KIP-848 groups), restarts; static membership (group.instance.id) keeps a restarting member's partitions.",
			find:   (*Doctor).stormFindings},
		{ID: "partitions-unowned", Severity: Warning, Threshold: fmt.Sprintf("partitions of a KIP-848 (consumer, share or streams) group taken from a member, or left by it, and given to no other member for %s or more", PartitionsUnownedMax),
			Why:    "Nobody consumed these partitions meanwhile: the coordinator gives a revoked partition to its new owner only once the old one has acknowledged the revocation, at the new owner's next heartbeat.",
			Advice: "Check the member that gave them up (slow revocation: its commit and onPartitionsRevoked, bounded by max.poll.interval.ms) and the heartbeats of the one that should get them (group.consumer.heartbeat.interval.ms, group.consumer.session.timeout.ms); a member that left needs another one to heartbeat before its partitions move.",
			find:   (*Doctor).unownedFindings},
		{ID: "member-left-timeout", Severity: Warning, Threshold: fmt.Sprintf("a member's request answered UNKNOWN_MEMBER_ID or FENCED_MEMBER_EPOCH after %s or more without a request of that member, and no LeaveGroup (or leaving heartbeat) of it", MemberGapMin),
			Why:    "The coordinator removed a member that did not leave: it heard nothing of it for longer than its session (or it polled too late), so the group rebalanced without it and its partitions went to others.",
			Advice: "Check why the member went quiet: processing longer than max.poll.interval.ms (lower max.poll.records), heartbeats missing for session.timeout.ms (heartbeat.interval.ms; group.consumer.session.timeout.ms and group.consumer.heartbeat.interval.ms for KIP-848 groups), long GC pauses, network trouble; close consumers so that they leave the group.",
			find:   (*Doctor).removedFindings},
		{ID: "consumer-lag-growing", Severity: Warning, Threshold: fmt.Sprintf("a client's lag on a partition (high watermark - fetch offset) rising by %d records or more from its first Fetch response to its last", LagGrowingMin),
			Why:    "A consumer falls behind: records arrive on the partition faster than it reads them, so they wait longer and longer (and may pass retention before being read).",
			Advice: "Compare the produce rate with what the consumer processes: add consumers (up to the partitions), speed up processing, fetch more per request (max.poll.records, fetch.max.bytes, max.partition.fetch.bytes), and check that fetch.min.bytes and fetch.max.wait.ms do not hold fetches back.",
			find:   (*Doctor).lagGrowingFindings},
		{ID: "consumer-stalled", Severity: Warning, Threshold: fmt.Sprintf("a client fetching a partition %d times or more, always at the same offset, with records to read there (up to the last stable offset when the broker gives one)", StalledFetchesMin),
			Why:    "A consumer keeps fetching a partition without getting past one offset: it does not take the records it is given (a record it fails on and seeks back to, a batch larger than it accepts), so the partition is not consumed.",
			Advice: "Look at the Fetch responses for the partition: records, errors; check the consumer's logs for a record it cannot deserialize or process, max.partition.fetch.bytes and fetch.max.bytes against the topic's max.message.bytes, and, with isolation.level=read_committed, transactions left open.",
			find:   (*Doctor).stalledFindings},
	}
}

// clientChecks are the checks of latency and of clients' habits.
func clientChecks() []Check {
	return []Check{
		{ID: "latency-stall", Severity: Warning, Threshold: fmt.Sprintf("%d brokers or more whose latency for one API, in the same %s window, averages %s or more and %d times their median for the API or more (over %d answers or more each; Fetch, ShareFetch, JoinGroup and SyncGroup aside, which wait by design)", LatencyStallBrokers, analysis.LatencyWindowLength, LatencyStallMin, LatencyStallFactor, LatencyStallCount),
			Why:    "Several brokers slowed down at the same moment: something they share stalled (the network, storage, the controller, a replica they all wait for with acks=all, garbage collection on the clients' side) rather than one broker.",
			Advice: "Look at what happened at that time across the cluster: the brokers' request metrics (RequestQueueTimeMs, LocalTimeMs, RemoteTimeMs), ISR shrinks and leader elections, disk and network, GC logs; for Produce with acks=all, replica.lag.time.max.ms and min.insync.replicas.",
			find:   (*Doctor).latencyStallFindings},
		{ID: "latency-broker-outlier", Severity: Warning, Threshold: fmt.Sprintf("a broker whose median latency for one API, over %d answers or more, is %d times the other brokers' or more, and %s more at least (Fetch, ShareFetch, JoinGroup and SyncGroup aside, which wait by design)", LatencyOutlierCount, LatencyOutlierFactor, LatencyOutlierMin),
			Why:    "One broker is much slower than the others for the same requests: the trouble is that broker's (its disk, load, network, more partition leaders than the others), not the clients'.",
			Advice: "Compare that broker with the others: its leader and partition counts (kafka-topics --describe; rebalance leaders with kafka-leader-election), disk and network, num.io.threads and num.network.threads, its request metrics (RequestQueueTimeMs, LocalTimeMs, RemoteTimeMs).",
			find:   (*Doctor).latencyOutlierFindings},
		{ID: "unanswered", Severity: Warning, Threshold: "a request the broker never answered while it answered a later request of the same connection (acks=0 Produce requests aside)",
			Why:    "A broker answers a connection's requests in order; a request skipped was lost, or the connection was cut and the client retried on another.",
			Advice: "Check capture-loss, the broker's logs around the time, and the client's request.timeout.ms.",
			find:   one(Warning, func(d *Doctor) (Evidence, string) { return d.unanswered, "%s never answered" }, "request", "connection")},
		{ID: "throttled", Severity: Warning, Threshold: "any response with a throttle time above 0",
			Why:    "The broker held back a client that went past its quota: its requests wait throttle_time_ms before being served.",
			Advice: "Check the client's quotas (producer_byte_rate, consumer_byte_rate, request_percentage: kafka-configs --describe --entity-type clients/users) against its traffic.",
			find:   (*Doctor).throttleFindings},
		{ID: "produce-acks-0", Severity: Warning, Threshold: "any Produce request with acks=0",
			Why:    "With acks=0 the broker never answers: a record lost or refused (too large, unknown topic, not the leader) is lost without any client knowing.",
			Advice: "Set acks=all (acks=1 at least) unless losing records unnoticed is acceptable.",
			find:   one(Warning, func(d *Doctor) (Evidence, string) { return d.acks0, "%s with acks=0" }, "Produce request", "connection")},
		{ID: "metadata-storm", Severity: Warning, Threshold: fmt.Sprintf("a client id sending %d Metadata requests or more, at %g per second or more over their span", MetadataStormMin, MetadataStormRate),
			Why:    "A client keeps asking for metadata: it keeps finding its view stale (leaders moving, topics missing) or refreshes too eagerly, loading the brokers.",
			Advice: "Look at the errors that precede the requests (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION); check metadata.max.age.ms and whether the client asks for topics that do not exist.",
			find:   (*Doctor).metadataFindings},
		{ID: "connection-churn", Severity: Warning, Threshold: fmt.Sprintf("a client id opening %d connections or more to one broker", ChurnMin),
			Why:    "A client keeps opening connections to the same broker: each costs a handshake (and TLS, SASL), and a churning client is often being disconnected.",
			Advice: "Check connections.max.idle.ms on both sides, reconnect.backoff.ms, and the broker's logs for why it closes them (authentication, max.connections.per.ip).",
			find:   (*Doctor).churnFindings},
		{ID: "producer-small-batches", Severity: Info, Threshold: fmt.Sprintf("a producer sending %d batches or more with a median of %d record(s) per batch or fewer", SmallBatchesMin, SmallBatchRecords),
			Why:    "A producer sends nearly every record in a batch of its own: a request per record costs the broker and the network more than batching would.",
			Advice: "Raise linger.ms (5 to 20 ms) so that records wait to share a batch; check batch.size and that the application does not flush after each record.",
			find:   (*Doctor).smallBatchFindings},
		{ID: "no-compression", Severity: Info, Threshold: fmt.Sprintf("a producer sending %d KiB of records or more, all uncompressed", NoCompressionMinBytes>>10),
			Why:    "A producer sends its records uncompressed: more bytes on the network and on the brokers' disks than needed.",
			Advice: "Set compression.type (lz4 or zstd usually pay); bigger batches (linger.ms, batch.size) compress better.",
			find:   (*Doctor).noCompressionFindings},
	}
}

// one is the find function of a check with at most one finding: the evidence ev returns, with
// a title made of the format it returns and the count of what, then of the connections when
// conn names them.
func one(sev Severity, ev func(*Doctor) (Evidence, string), what, conn string) func(*Doctor) []Finding {
	return func(d *Doctor) []Finding {
		e, format := ev(d)
		if e.Count == 0 {
			return nil
		}
		title := fmt.Sprintf(format, plural.Count(e.Count, what))
		if conn != "" {
			title += fmt.Sprintf(" (%s)", plural.Count(len(e.Streams), conn))
		}
		return []Finding{{Severity: sev, Evidence: e, Title: title}}
	}
}

func (d *Doctor) throttleFindings() []Finding {
	if d.throttled.Count == 0 {
		return nil
	}
	return []Finding{{Severity: Warning, Evidence: d.throttled,
		Title: fmt.Sprintf("%s throttled, for up to %s", plural.Count(d.throttled.Count, "response"), d.maxThrottle)}}
}

// producerName names a producer in a title.
func producerName(p analysis.ProducerSummary) string {
	s := fmt.Sprintf("client id %q", p.ClientID)
	if p.ID >= 0 {
		s += fmt.Sprintf(", producer id %d epoch %d", p.ID, p.Epoch)
	}
	return s
}

// producerFindings makes a finding of each producer for which fires returns a title.
func (d *Doctor) producerFindings(sev Severity, fires func(analysis.ProducerSummary) (string, []analysis.FrameRef)) []Finding {
	var out []Finding
	for _, p := range d.producers.Summaries() {
		title, frames := fires(p)
		if title == "" {
			continue
		}
		out = append(out, Finding{Severity: sev, Title: title, Evidence: framesEvidence(frames)})
	}
	return out
}

// framesEvidence is the evidence of the messages an analysis kept.
func framesEvidence(frames []analysis.FrameRef) Evidence {
	var ev Evidence
	for _, f := range frames {
		ev.add(f.Frame, f.Stream, f.Time)
	}
	return ev
}

func (d *Doctor) gapFindings() []Finding {
	return d.producerFindings(Error, func(p analysis.ProducerSummary) (string, []analysis.FrameRef) {
		if p.Gaps == 0 {
			return "", nil
		}
		return fmt.Sprintf("%s: %s past the next sequence number", producerName(p), plural.Count(int(p.Gaps), "batch")), p.GapFrames
	})
}

func (d *Doctor) retryFindings() []Finding {
	return d.producerFindings(Warning, func(p analysis.ProducerSummary) (string, []analysis.FrameRef) {
		if p.Duplicates == 0 {
			return "", nil
		}
		return fmt.Sprintf("%s: %s sent again", producerName(p), plural.Count(int(p.Duplicates), "batch")), p.DuplicateFrames
	})
}

func (d *Doctor) smallBatchFindings() []Finding {
	return d.producerFindings(Info, func(p analysis.ProducerSummary) (string, []analysis.FrameRef) {
		if p.Batches < SmallBatchesMin || p.RecordsPerBatchP50 > SmallBatchRecords {
			return "", nil
		}
		return fmt.Sprintf("%s: %d batches of %d record(s) (median)", producerName(p), p.Batches, p.RecordsPerBatchP50), p.Frames
	})
}

func (d *Doctor) noCompressionFindings() []Finding {
	return d.producerFindings(Info, func(p analysis.ProducerSummary) (string, []analysis.FrameRef) {
		if p.Bytes < NoCompressionMinBytes || !slices.Equal(p.Codecs, []string{"none"}) {
			return "", nil
		}
		return fmt.Sprintf("%s: %d KiB of records in %d batches, uncompressed", producerName(p), p.Bytes>>10, p.Batches), p.Frames
	})
}

func (d *Doctor) metadataFindings() []Finding {
	var out []Finding
	for _, client := range sortedKeys(d.metadata, strings.Compare) {
		ev := d.metadata[client]
		span := ev.Last.Sub(ev.First)
		rate := float64(ev.Count) / max(span.Seconds(), 1)
		if ev.Count < MetadataStormMin || rate < MetadataStormRate {
			continue
		}
		out = append(out, Finding{Severity: Warning, Evidence: *ev,
			Title: fmt.Sprintf("client id %q: %d Metadata requests in %s (%.1f/s)", client, ev.Count, span.Round(time.Millisecond), rate)})
	}
	return out
}

func (d *Doctor) churnFindings() []Finding {
	var out []Finding
	for _, k := range sortedKeys(d.conns, func(a, b [2]string) int { return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1])) }) {
		ev := d.conns[k]
		if ev.Count < ChurnMin {
			continue
		}
		out = append(out, Finding{Severity: Warning, Evidence: *ev,
			Title: fmt.Sprintf("client id %q: %d connections to %s in %s", k[0], ev.Count, k[1], ev.Last.Sub(ev.First).Round(time.Millisecond))})
	}
	return out
}

// errorFindings makes a finding of each error code seen, worst codes first.
func (d *Doctor) errorFindings() []Finding {
	var out []Finding
	for _, code := range sortedKeys(d.errors, cmp.Compare[int16]) {
		ev := d.errors[code]
		e, _ := codec.LookupError(fmt.Sprint(code))
		name := codec.ErrorName(code)
		why := e.About
		if e.Retriable {
			why += " The client may retry it."
		}
		out = append(out, Finding{Severity: errorSeverity(name), Evidence: *ev, Why: why, Advice: errorAdvice[name],
			Title: fmt.Sprintf("%s with %s (%d)", plural.Count(ev.Count, "response"), name, code)})
	}
	return out
}

// sortedKeys returns m's keys in order.
func sortedKeys[K comparable, V any](m map[K]V, compare func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	return keys
}

func (d *Doctor) slowRebalanceFindings() []Finding {
	var out []Finding
	for _, r := range d.groups.Rebalances() {
		took := r.End.Sub(r.Start)
		if r.Start.IsZero() || r.End.IsZero() || took < RebalanceSlow {
			continue
		}
		name := fmt.Sprintf("group %q generation %d", r.Group, r.Generation)
		if r.Member != "" {
			name = fmt.Sprintf("group %q member %s epoch %d", r.Group, r.Member, r.Generation)
		}
		out = append(out, Finding{Severity: Warning, Evidence: framesEvidence(r.Frames),
			Title: fmt.Sprintf("%s: rebalance took %s", name, took.Round(time.Millisecond))})
	}
	return out
}
