package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"unicode/utf8"

	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/internal/doctor"
)

// finding is a line of kdissect doctor --format json.
type finding struct {
	Kind, ID, Severity, Title, Why, Advice string
	Evidence                               struct {
		Frames, Streams []int
		Files           []string
		Count           int
		First, Last     string
	}
}

// doctorFindings runs kdissect doctor --format json with args and reads its findings.
func doctorFindings(t *testing.T, args ...string) []finding {
	t.Helper()
	out, errOut, code := kdissect(t, append([]string{"doctor", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("doctor %v: exit %d: %s", args, code, errOut)
	}
	var fs []finding
	for _, l := range lines(out) {
		var f finding
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if f.Kind != "finding" || f.ID == "" || f.Title == "" || f.Why == "" || f.Advice == "" || len(f.Evidence.Frames) == 0 {
			t.Errorf("doctor %v: an incomplete finding: %s", args, l)
		}
		fs = append(fs, f)
	}
	return fs
}

func lines(s string) []string {
	if s = strings.TrimSuffix(s, "\n"); s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// key names a finding in the tests: its id, and for errors the error's name.
func (f finding) key() string {
	if f.ID == "errors" {
		name, _, _ := strings.Cut(strings.TrimPrefix(f.Title[strings.Index(f.Title, " with ")+6:], " "), " ")
		return "errors/" + name
	}
	return f.ID
}

// messageLine is what the tests read of a line of kdissect --format json.
type messageLine struct {
	Kind         string
	Frame        int
	Time         time.Time
	Stream       int
	Src, Dst     string
	ClientID     string `json:"client_id"`
	APIName      string `json:"api_name"`
	LatencyUs    int64  `json:"latency_us"`
	RequestFrame int    `json:"request_frame"` // a response's request
	Errors       []string
	NoResponse   bool `json:"no_response"`
	Text         string
	Fields       []fieldNode
}

type fieldNode struct {
	Name     string
	Value    any
	Children []fieldNode `json:"fields"`
}

// expectedFrames computes, from the JSON lines of a capture, the frames finding f's evidence
// must name, by its key (the first analysis.MaxFrames of them); ok is false for keys the test
// does not compute.
func expectedFrames(msgs []messageLine, f finding) (frames []int, ok bool) {
	key := f.key()
	switch key {
	case "connection-churn":
		return firstFrames(churnFrames(msgs)), true
	case "metadata-storm":
		return firstFrames(metadataStormFrames(msgs)), true
	case "producer-small-batches":
		return firstFrames(smallBatchFrames(msgs)), true
	case "latency-stall":
		return slowestInWindows(msgs, 100*time.Millisecond), true
	case "latency-broker-outlier":
		return slowestInWindows(msgs, 50*time.Millisecond), true
	case "producer-sequence-gap":
		return gapFrames(msgs), true
	case "unanswered":
		return skippedFrames(msgs), true
	}
	_, code, isError := strings.Cut(key, "/")
	client := titleClient(f.Title)
	switch key {
	case "member-left-timeout":
		return removedMemberFrames(msgs), true
	case "consumer-lag-growing":
		// The first and the last Fetch responses to the client that give a high watermark.
		var withHW []int
		for _, m := range msgs {
			if m.Kind == "response" && m.APIName == "Fetch" && m.ClientID == client && len(fieldValues(m.Fields, "HighWatermark")) > 0 {
				withHW = append(withHW, m.Frame)
			}
		}
		if len(withHW) == 0 {
			return nil, true
		}
		return []int{withHW[0], withHW[len(withHW)-1]}, true
	case "consumer-stalled":
		return stalledFrames(msgs, client), true
	case "partitions-unowned":
		return unownedFrames(msgs), true
	}
	sent := map[string]int{} // a batch's first sending
	for _, m := range msgs {
		var hit bool
		switch {
		case isError:
			hit = slices.Contains(m.Errors, code)
		case key == "produce-acks-0":
			hit = m.Kind == "request" && m.NoResponse
		case key == "tls-undecrypted":
			hit = m.Kind == "notice" && strings.Contains(m.Text, ": encrypted; ")
		case key == "capture-loss":
			hit = m.Kind == "notice" && strings.Contains(m.Text, " lost (not captured)")
		case key == "throttled":
			hit = m.Kind == "response" && topField(m, "ThrottleTimeMs") > 0
		case key == "producer-retries":
			// A batch of a producer id whose partition and first sequence were sent before,
			// and the request that first sent it.
			if m.Kind == "request" && m.APIName == "Produce" {
				for _, b := range batches(m.Fields, nil) {
					k := fmt.Sprint(b.producer, "/", b.partition, "/", b.sequence)
					first, again := sent[k]
					if !again {
						sent[k] = m.Frame
						continue
					}
					hit = true
					if !slices.Contains(frames, first) {
						frames = append(frames, first)
					}
				}
			}
		default:
			return nil, false
		}
		if hit && !slices.Contains(frames, m.Frame) {
			frames = append(frames, m.Frame)
		}
	}
	return frames, true
}

// stalledFrames returns the Fetch responses to client, which fetches one partition only, but
// those closing a fetch session (a request of epoch -1 fetches nothing).
func stalledFrames(msgs []messageLine, client string) []int {
	closing := map[int]bool{}
	var frames []int
	for _, m := range msgs {
		if m.APIName != "Fetch" || m.ClientID != client {
			continue
		}
		if m.Kind == "request" && slices.Equal(fieldValues(m.Fields, "SessionEpoch"), []string{"-1"}) {
			closing[m.Frame] = true
		}
		if m.Kind == "response" && !closing[m.RequestFrame] {
			frames = append(frames, m.Frame)
		}
	}
	return frames
}

// unownedFrames reads a KIP-848 group's ConsumerGroupHeartbeat responses (one group per
// capture): each member owns the partitions of its last assignment, none once it left (epoch
// -1). While they own fewer than the most they owned, partitions have no owner; it returns the
// responses that changed the count during such spans of doctor.PartitionsUnownedMax or more,
// from the one that began the span to the one that ended it.
func unownedFrames(msgs []messageLine) []int {
	owned := map[string]int{}
	total, most := 0, 0
	var span []int
	var start time.Time
	var frames []int
	for _, m := range msgs {
		if m.Kind != "response" || m.APIName != "ConsumerGroupHeartbeat" {
			continue
		}
		member := fieldValues(m.Fields, "MemberId")
		if len(member) == 0 {
			continue
		}
		n, ok := assigned(m.Fields)
		if epoch := fieldValues(m.Fields, "MemberEpoch"); len(epoch) > 0 && strings.HasPrefix(epoch[0], "-") {
			n, ok = 0, true
		}
		if !ok || n == owned[member[0]] {
			continue
		}
		total += n - owned[member[0]]
		owned[member[0]] = n
		switch {
		case total < most && span == nil:
			span, start = []int{m.Frame}, m.Time
		case span != nil:
			span = append(span, m.Frame)
			if total >= most {
				if m.Time.Sub(start) >= doctor.PartitionsUnownedMax {
					frames = append(frames, span...)
				}
				span = nil
			}
		}
		most = max(most, total)
	}
	return frames
}

// assigned counts the partitions of a heartbeat response's assignment; ok is false when it
// has none (null: the member's is unchanged).
func assigned(fields []fieldNode) (n int, ok bool) {
	for _, f := range fields {
		if f.Name != "Assignment" || slices.Equal(fieldValues(f.Children, "present"), []string{"-1"}) {
			continue
		}
		for _, c := range fieldValues(f.Children, "Partitions") {
			var k int
			fmt.Sscan(c, &k)
			n += k
		}
		return n, true
	}
	return 0, false
}

// groupAPIs are the APIs of the messages that make a group's rebalances.
var groupAPIs = []string{"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "ConsumerGroupHeartbeat"}

// rebalanceEvidence checks what can be told of the rebalance findings' evidence without
// following rebalances as the doctor does: the frames are group messages; a slow rebalance's
// span RebalanceSlow or more; a storm's more than RebalanceStormPerMinute generations (or
// member epochs) within a minute.
func rebalanceEvidence(msgs []messageLine, f finding) error {
	if f.ID != "rebalance-slow" && f.ID != "rebalance-storm" {
		return nil
	}
	byFrame := map[int]messageLine{}
	for _, m := range msgs {
		byFrame[m.Frame] = m
	}
	gens := map[string]bool{}
	var first, last time.Time
	for _, fr := range f.Evidence.Frames {
		m, ok := byFrame[fr]
		if !ok || !slices.Contains(groupAPIs, m.APIName) {
			return fmt.Errorf("frame %d is no group message", fr)
		}
		for _, name := range []string{"GenerationId", "MemberEpoch"} {
			for _, g := range fieldValues(m.Fields, name) {
				if !strings.HasPrefix(g, "-") {
					gens[g] = true
				}
			}
		}
		if first.IsZero() {
			first = m.Time
		}
		last = m.Time
	}
	switch took := last.Sub(first); {
	case f.ID == "rebalance-slow" && took < doctor.RebalanceSlow:
		return fmt.Errorf("they span %v", took)
	case f.ID == "rebalance-storm" && (took >= time.Minute || len(gens) <= doctor.RebalanceStormPerMinute):
		return fmt.Errorf("they span %v and name %d generations", took, len(gens))
	}
	return nil
}

// titleClientRE finds the client id a finding's title names.
var titleClientRE = regexp.MustCompile(`client id "([^"]*)"`)

func titleClient(title string) string {
	if m := titleClientRE.FindStringSubmatch(title); m != nil {
		return m[1]
	}
	return ""
}

// removedMemberFrames finds the members the coordinator removed: a response UNKNOWN_MEMBER_ID
// or FENCED_MEMBER_EPOCH to a request naming a member id whose previous request was 6 s or
// more before, with no LeaveGroup (or heartbeat of a negative epoch) naming it before. It returns the frames of that previous
// request, the request and the response, in order.
func removedMemberFrames(msgs []messageLine) []int {
	byFrame := map[int]messageLine{}
	for _, m := range msgs {
		byFrame[m.Frame] = m
	}
	var frames []int
	for _, resp := range msgs {
		if resp.Kind != "response" || !slices.ContainsFunc(resp.Errors, func(e string) bool {
			return e == "UNKNOWN_MEMBER_ID" || e == "FENCED_MEMBER_EPOCH"
		}) {
			continue
		}
		req := byFrame[resp.RequestFrame]
		member := fieldValues(req.Fields, "MemberId")
		if len(member) == 0 {
			continue
		}
		var prev *messageLine
		left := false
		for i := range msgs {
			m := &msgs[i]
			if m.Kind == "request" && m.Frame < req.Frame && slices.Contains(fieldValues(m.Fields, "MemberId"), member[0]) {
				prev = m
				epoch := fieldValues(m.Fields, "MemberEpoch")
				left = left || m.APIName == "LeaveGroup" || len(epoch) > 0 && strings.HasPrefix(epoch[0], "-")
			}
		}
		if prev == nil || left || req.Time.Sub(prev.Time) < 6*time.Second {
			continue
		}
		for _, fr := range []int{prev.Frame, req.Frame, resp.Frame} {
			if !slices.Contains(frames, fr) {
				frames = append(frames, fr)
			}
		}
	}
	slices.Sort(frames)
	return frames
}

// fieldValues returns the values of the fields named name, at any depth, as text.
func fieldValues(nodes []fieldNode, name string) []string {
	var out []string
	for _, n := range nodes {
		if n.Name == name && n.Value != nil {
			out = append(out, fmt.Sprint(n.Value))
		}
		out = append(out, fieldValues(n.Children, name)...)
	}
	return out
}

// batch is what the tests read of a record batch of a Produce request.
type batch struct {
	producer, partition, sequence, lastOffsetDelta any
}

// batches returns the record batches of a Produce request's fields.
func batches(nodes []fieldNode, partition any) []batch {
	var out []batch
	for _, n := range nodes {
		if n.Name == "Index" || n.Name == "PartitionIndex" {
			partition = n.Value
		}
	}
	b := batch{partition: partition}
	for _, n := range nodes {
		switch n.Name {
		case "producerId":
			b.producer = n.Value
		case "baseSequence":
			b.sequence = n.Value
		case "lastOffsetDelta":
			b.lastOffsetDelta = n.Value
		}
		out = append(out, batches(n.Children, partition)...)
	}
	if b.producer != nil && b.sequence != nil {
		out = append(out, b)
	}
	return out
}

// gapFrames are the Produce requests with a batch starting past the sequence number that
// follows the last batch of its producer id and partition.
func gapFrames(msgs []messageLine) []int {
	next := map[string]float64{}
	var frames []int
	for _, m := range msgs {
		if m.Kind != "request" || m.APIName != "Produce" {
			continue
		}
		for _, b := range batches(m.Fields, nil) {
			k := fmt.Sprint(b.producer, "/", b.partition)
			seq, _ := b.sequence.(float64)
			delta, _ := b.lastOffsetDelta.(float64)
			if n, ok := next[k]; ok && seq > n && !slices.Contains(frames, m.Frame) {
				frames = append(frames, m.Frame)
			}
			next[k] = max(next[k], seq+delta+1)
		}
	}
	return frames
}

// skippedFrames are the requests (acks=0 Produce requests aside) without a response on a
// connection whose later request has one.
func skippedFrames(msgs []messageLine) []int {
	answered := map[int]bool{}
	lastAnswered := map[int]int{} // stream: the frame of its last request answered
	for _, m := range msgs {
		if m.Kind == "response" && m.RequestFrame > 0 {
			answered[m.RequestFrame] = true
			lastAnswered[m.Stream] = max(lastAnswered[m.Stream], m.RequestFrame)
		}
	}
	var frames []int
	for _, m := range msgs {
		if m.Kind == "request" && !m.NoResponse && !answered[m.Frame] && m.Frame < lastAnswered[m.Stream] {
			frames = append(frames, m.Frame)
		}
	}
	return frames
}

// firstFrames returns the first analysis.MaxFrames of frames, in order: the frames evidence
// names.
func firstFrames(frames []int) []int {
	slices.Sort(frames)
	return frames[:min(len(frames), analysis.MaxFrames)]
}

// topField returns the number of a message's field name at the top level, 0 without one.
func topField(m messageLine, name string) float64 {
	for _, f := range m.Fields {
		if f.Name == name {
			v, _ := f.Value.(float64)
			return v
		}
	}
	return 0
}

// churnFrames are the first requests of the connections of each client id to a broker it
// opened doctor.ChurnMin connections or more to.
func churnFrames(msgs []messageLine) []int {
	opened := map[int]bool{}
	byClient := map[[2]string][]int{}
	for _, m := range msgs {
		if m.Kind == "request" && !opened[m.Stream] {
			opened[m.Stream] = true
			k := [2]string{m.ClientID, m.Dst}
			byClient[k] = append(byClient[k], m.Frame)
		}
	}
	var frames []int
	for _, fs := range byClient {
		if len(fs) >= doctor.ChurnMin {
			frames = append(frames, fs...)
		}
	}
	return frames
}

// metadataStormFrames are the Metadata requests of each client id that sent
// doctor.MetadataStormMin or more (the captures here send them at more than
// doctor.MetadataStormRate per second).
func metadataStormFrames(msgs []messageLine) []int {
	byClient := map[string][]int{}
	for _, m := range msgs {
		if m.Kind == "request" && m.APIName == "Metadata" {
			byClient[m.ClientID] = append(byClient[m.ClientID], m.Frame)
		}
	}
	var frames []int
	for _, fs := range byClient {
		if len(fs) >= doctor.MetadataStormMin {
			frames = append(frames, fs...)
		}
	}
	return frames
}

// smallBatchFrames are the Produce requests of each producer id that sent
// doctor.SmallBatchesMin batches or more, most of them of one record.
func smallBatchFrames(msgs []messageLine) []int {
	type sent struct {
		frames         []int
		batches, small int
	}
	byProducer := map[any]*sent{}
	for _, m := range msgs {
		if m.Kind != "request" || m.APIName != "Produce" {
			continue
		}
		for _, b := range batches(m.Fields, nil) {
			p := byProducer[b.producer]
			if p == nil {
				p = &sent{}
				byProducer[b.producer] = p
			}
			p.batches++
			if b.lastOffsetDelta == 0.0 {
				p.small++
			}
			if !slices.Contains(p.frames, m.Frame) {
				p.frames = append(p.frames, m.Frame)
			}
		}
	}
	var frames []int
	for _, p := range byProducer {
		if p.batches >= doctor.SmallBatchesMin && 2*p.small > p.batches {
			frames = append(frames, p.frames...)
		}
	}
	return frames
}

// slowestInWindows are the slowest Produce responses of each broker and 10 s of the clock
// (analysis.LatencyWindowLength) whose Produce responses took minMean or more on average.
func slowestInWindows(msgs []messageLine, minMean time.Duration) []int {
	type window struct {
		count      int
		total, max int64
		slowest    int
	}
	windows := map[string]*window{}
	for _, m := range msgs {
		if m.Kind != "response" || m.APIName != "Produce" {
			continue
		}
		k := fmt.Sprint(m.Src, m.Time.Truncate(10*time.Second))
		w := windows[k]
		if w == nil {
			w = &window{}
			windows[k] = w
		}
		w.count++
		w.total += m.LatencyUs
		if m.LatencyUs > w.max {
			w.max, w.slowest = m.LatencyUs, m.Frame
		}
	}
	var frames []int
	for _, w := range windows {
		if time.Duration(w.total/int64(w.count))*time.Microsecond >= minMean {
			frames = append(frames, w.slowest)
		}
	}
	slices.Sort(frames)
	return frames
}

// TestDoctorFindings: on real clients' captures, doctor gives the findings each shows, with
// their severities, and evidence frames that the capture's JSON lines show independently.
func TestDoctorFindings(t *testing.T) {
	for _, c := range []struct {
		capture, keylog string
		want            map[string]string // finding key: severity
	}{
		{"kgo-produce-retry.pcap", "", map[string]string{"errors/REQUEST_TIMED_OUT": "warning", "producer-retries": "warning"}},
		{"kgo-filters.pcap", "", map[string]string{"errors/UNKNOWN_TOPIC_OR_PARTITION": "warning", "produce-acks-0": "warning",
			"errors/MEMBER_ID_REQUIRED": "info", "no-compression": "info"}},
		{"kgo-fetch-session.pcap", "", map[string]string{"errors/FETCH_SESSION_ID_NOT_FOUND": "info", "errors/INVALID_FETCH_SESSION_EPOCH": "info"}},
		{"kgo-group-late-joiner.pcap", "", map[string]string{"errors/MEMBER_ID_REQUIRED": "info", "errors/REBALANCE_IN_PROGRESS": "info"}},
		{"kgo-tls13.pcap", "", map[string]string{"tls-undecrypted": "warning"}},
		{"kgo-tls13.pcap", "kgo-tls13.keylog", map[string]string{}},
		{"kgo-latency-stall.pcap", "", map[string]string{"latency-stall": "warning"}},
		{"kgo-broker-outlier.pcap", "", map[string]string{"latency-broker-outlier": "warning"}},
		{"kgo-small-batches.pcap", "", map[string]string{"producer-small-batches": "info"}},
		{"kgo-throttled.pcap", "", map[string]string{"throttled": "warning"}},
		{"kgo-churn.pcap", "", map[string]string{"connection-churn": "warning"}},
		{"kgo-metadata-storm.pcap", "", map[string]string{"metadata-storm": "warning"}},
		{"kgo-capture-loss.pcap", "", map[string]string{"capture-loss": "warning", "producer-sequence-gap": "error"}},
		{"kgo-unanswered.pcap", "", map[string]string{"unanswered": "warning"}},
		{"kgo-member-removed.pcap", "", map[string]string{"member-left-timeout": "warning", "errors/UNKNOWN_MEMBER_ID": "warning",
			"errors/MEMBER_ID_REQUIRED": "info"}},
		{"kgo-rebalance-storm.pcap", "", map[string]string{"rebalance-storm": "warning", "errors/REBALANCE_IN_PROGRESS": "info",
			"errors/MEMBER_ID_REQUIRED": "info"}},
		{"kgo-rebalance-slow.pcap", "", map[string]string{"rebalance-slow": "warning", "errors/REBALANCE_IN_PROGRESS": "info",
			"errors/MEMBER_ID_REQUIRED": "info"}},
		{"kgo-partitions-unowned.pcap", "", map[string]string{"partitions-unowned": "warning", "rebalance-slow": "warning"}},
		{"kgo-lag-growing.pcap", "", map[string]string{"consumer-lag-growing": "warning"}},
		{"kgo-consumer-stalled.pcap", "", map[string]string{"consumer-stalled": "warning"}},
	} {
		t.Run(c.capture+"+"+c.keylog, func(t *testing.T) {
			args := []string{pcap(c.capture)}
			if c.keylog != "" {
				args = append(args, "--tls-keylog", pcap(c.keylog))
			}
			fs := doctorFindings(t, args...)
			got := map[string]string{}
			for _, f := range fs {
				got[f.key()] = f.Severity
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("findings %v, want %v", got, c.want)
			}
			out, errOut, code := kdissect(t, append([]string{"--format", "json"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var msgs []messageLine
			for _, l := range lines(out) {
				var m messageLine
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, m)
			}
			for _, f := range fs {
				want, ok := expectedFrames(msgs, f)
				slices.Sort(want)
				if ok && !slices.Equal(f.Evidence.Frames, want) {
					t.Errorf("%s: frames %v, want %v", f.key(), f.Evidence.Frames, want)
				}
				if err := rebalanceEvidence(msgs, f); err != nil {
					t.Errorf("%s: frames %v: %v", f.key(), f.Evidence.Frames, err)
				}
			}
		})
	}
}

// cleanCaptures are the captures of pcaps/ that show no problem: real clients doing what
// they should against a healthy broker, read with their key logs when they are TLS. Not
// clean: kgo-produce-retry (a produce timed out and was retried), kgo-filters (Produce
// requests with acks=0, a topic that did not exist), other-tls (HTTPS: TLS that kdissect
// cannot tell from Kafka's, and cannot decrypt), and the captures made to show findings:
// kgo-member-removed (a member removed when its session ran out), kgo-rebalance-storm (a
// member restarting in a loop), kgo-rebalance-slow (a member slow to rejoin),
// kgo-partitions-unowned (a member slow to give up revoked partitions), kgo-lag-growing (a
// consumer falling behind), kgo-consumer-stalled (a consumer seeking back to a record it fails
// on), kgo-latency-stall and kgo-broker-outlier (brokers made slow), kgo-throttled (a consumer
// throttled), kgo-churn (a client per record), kgo-metadata-storm (metadata refreshed every
// 100 ms), kgo-capture-loss (a Produce request cut out of the capture), kgo-unanswered (a
// request the broker skipped). kgo-small-batches is clean: a batch per record is only worth an
// info.
func cleanCaptures(t *testing.T) [][]string {
	t.Helper()
	notClean := []string{"kgo-produce-retry.pcap", "kgo-filters.pcap", "other-tls.pcap",
		"kgo-member-removed.pcap", "kgo-rebalance-storm.pcap", "kgo-rebalance-slow.pcap", "kgo-partitions-unowned.pcap",
		"kgo-lag-growing.pcap", "kgo-consumer-stalled.pcap",
		"kgo-latency-stall.pcap", "kgo-broker-outlier.pcap", "kgo-throttled.pcap", "kgo-churn.pcap",
		"kgo-metadata-storm.pcap", "kgo-capture-loss.pcap", "kgo-unanswered.pcap"}
	var out [][]string
	for _, f := range captures(t) {
		if slices.Contains(notClean, filepath.Base(f)) {
			continue
		}
		args := []string{f}
		if keylog := strings.TrimSuffix(f, filepath.Ext(f)) + ".keylog"; fileExists(keylog) {
			args = append(args, "--tls-keylog", keylog)
		}
		out = append(out, args)
	}
	return out
}

// TestDoctorClean: no capture that shows no problem gives a warning or an error: false alarms
// are defects.
func TestDoctorClean(t *testing.T) {
	for _, args := range cleanCaptures(t) {
		for _, f := range doctorFindings(t, args...) {
			if f.Severity != "info" {
				t.Errorf("%s: %s %s: %s", filepath.Base(args[0]), f.Severity, f.ID, f.Title)
			}
		}
	}
}

// TestFindingsAfterMessages: --findings prints, after a capture's messages, the findings
// doctor gives of the capture (as JSON lines with --format json, a table otherwise).
func TestFindingsAfterMessages(t *testing.T) {
	name := pcap("kgo-produce-retry.pcap")
	doctor, _, _ := kdissect(t, "doctor", "--format", "json", name)
	plain, _, _ := kdissect(t, "--format", "json", name)
	out, errOut, code := kdissect(t, "--format", "json", "--findings", name)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != plain+doctor || doctor == "" {
		t.Errorf("--findings: the messages then the findings expected; got the last lines\n%s", out[max(0, len(out)-2000):])
	}
	table, _, _ := kdissect(t, "doctor", name)
	summary, _, _ := kdissect(t, "--format", "summary", name)
	out, _, _ = kdissect(t, "--format", "summary", "--findings", name)
	if out != summary+"\n"+table || !strings.Contains(table, "producer-retries") {
		t.Errorf("--findings --format summary: the messages, a blank line, then doctor's table expected; got\n%s", out)
	}
}

// TestDoctorUnreadable: a capture that cannot be read gets no findings, not "no findings": the
// error names it and the exit status is 1.
func TestDoctorUnreadable(t *testing.T) {
	for _, args := range [][]string{
		{"doctor", filepath.Join(t.TempDir(), "missing.pcap")},
		{"doctor", filepath.Join("..", "..", "README.md")},
		{"doctor", "--format", "json", filepath.Join(t.TempDir(), "missing.pcap")},
	} {
		out, errOut, code := kdissect(t, args...)
		if out != "" || code != 1 || !strings.Contains(errOut, filepath.Base(args[len(args)-1])) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, the file named", args, code, out, errOut)
		}
	}
}

// TestDoctorFormats: doctor --format html writes the report to stdout, or to the file -o
// names; --format table is the default's table; any other format is a usage error that names
// the three.
func TestDoctorFormats(t *testing.T) {
	name := pcap("kgo-group-3brokers.pcap")
	page, errOut, code := kdissect(t, "doctor", "--format", "html", name)
	if code != 0 || !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, `data-plot="timeline"`) {
		t.Fatalf("--format html: exit %d, stderr %q, stdout begins %.200q", code, errOut, page)
	}
	file := filepath.Join(t.TempDir(), "report.html")
	out, errOut, code := kdissect(t, "doctor", "--format", "html", "-o", file, name)
	written, err := os.ReadFile(file)
	if err != nil || code != 0 || out != "" || string(written) != page {
		t.Errorf("-o %s: exit %d, stdout %q, stderr %q, %v; the file is the page written to stdout: %v", file, code, out, errOut, err, string(written) == page)
	}
	table, _, _ := kdissect(t, "doctor", name)
	if named, _, _ := kdissect(t, "doctor", "--format", "table", name); named != table || table == "" {
		t.Errorf("--format table:\n%s\nthe default:\n%s", named, table)
	}
	out, errOut, code = kdissect(t, "doctor", "--format", "summary", name)
	if code != 2 || out != "" || !strings.Contains(errOut, "--format json") || !strings.Contains(errOut, "--format html") {
		t.Errorf("--format summary: exit %d, stdout %q, stderr %q; want a usage error naming the formats", code, out, errOut)
	}
}

// TestFindingsOnPage: the workshop page (--format html) carries, for its findings panel, the
// findings doctor gives of the capture, with or without --findings, and nothing after the page.
func TestFindingsOnPage(t *testing.T) {
	name := pcap("kgo-produce-retry.pcap")
	want := doctorFindings(t, name)
	page, errOut, code := kdissect(t, "--format", "html", name)
	if code != 0 || !strings.HasSuffix(page, "</html>\n") {
		t.Fatalf("exit %d, stderr %s, the page ends %q", code, errOut, page[max(0, len(page)-100):])
	}
	const start = `<script type="application/json" id="kd-findings">`
	_, data, ok := strings.Cut(page, start)
	data, _, _ = strings.Cut(data, "</script>")
	var got []finding
	if err := json.Unmarshal([]byte(data), &got); !ok || err != nil {
		t.Fatalf("the page has no findings data (%v): %.200s", err, data)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
		t.Errorf("the page's findings\n%v\ndoctor's\n%v", got, want)
	}
	with, _, _ := kdissect(t, "--format", "html", "--findings", name)
	if with != page {
		t.Errorf("--findings --format html: not the page alone; it ends %q", with[max(0, len(with)-300):])
	}
}

// TestFindingsFlagAsDoctor: --findings finds what the doctor command finds, notices included
// (lost bytes, TLS not decrypted), on every capture in pcaps/, with or without its key log.
func TestFindingsFlagAsDoctor(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("..", "..", "pcaps", "*.pcap*"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no captures in pcaps/: %v", err)
	}
	fromNotices := 0
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			doctor, errOut, code := kdissect(t, "doctor", name)
			if code != 0 {
				t.Fatalf("doctor: exit %d: %s", code, errOut)
			}
			flag, errOut, code := kdissect(t, "--format", "none", "--findings", name)
			if code != 0 {
				t.Fatalf("--findings: exit %d: %s", code, errOut)
			}
			if flag != doctor {
				t.Errorf("--format none --findings:\n%s\ndoctor:\n%s", flag, doctor)
			}
			if strings.Contains(doctor, " capture-loss ") || strings.Contains(doctor, " tls-undecrypted ") {
				fromNotices++
			}
		})
	}
	if fromNotices == 0 {
		t.Errorf("no capture has a finding of notices: the test compares nothing that notices find")
	}
}

// TestDoctorHelp: doctor --help shows the flags that choose and read the messages, and its own
// --format, not the flags of the messages' output, which it does not show.
func TestDoctorHelp(t *testing.T) {
	out, errOut, code := kdissect(t, "doctor", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, flag := range []string{"--hex", "--explain", "--max-bytes", "--records", "--time", "--show-secrets",
		"--max-messages", "--write", "--findings", "--stats", "--no-fields", "--rotate", "--version", "diagram"} {
		if strings.Contains(out, flag) {
			t.Errorf("doctor --help shows %s:\n%s", flag, out)
		}
	}
	for _, flag := range []string{"--display-filter", "--tls-keylog", "--port", "--read", "--count", "--schema-dir", "--output"} {
		if !strings.Contains(out, flag) {
			t.Errorf("doctor --help lacks %s:\n%s", flag, out)
		}
	}
	if !regexp.MustCompile(`--format string +how the findings are written: table \(.*\), or json \(.*\) \(default "table"\)`).MatchString(out) {
		t.Errorf("doctor --help: --format is not the findings' table or json, table by default:\n%s", out)
	}
	for _, format := range []string{"table", "json"} {
		if _, errOut, code := kdissect(t, "doctor", "--format", format, pcap("kgo-lag.pcap")); code != 0 {
			t.Errorf("doctor --format %s: exit %d: %s", format, code, errOut)
		}
	}
	_, errOut, code = kdissect(t, "doctor", "--format", "summary", pcap("kgo-lag.pcap"))
	for _, f := range cli.FindingsFormats() {
		if code != 2 || !strings.Contains(errOut, "--format "+f.Name) {
			t.Errorf("doctor --format summary: exit %d, without naming --format %s: %s", code, f.Name, errOut)
		}
	}
}

// TestDoctorText: the doctor's text, read on an 80-column terminal: each finding's title, its
// frames, why and advice under it, wrapped (golden files: go test -run TestDoctorText -update).
func TestDoctorText(t *testing.T) {
	for _, name := range []string{"kgo-filters.pcap", "kgo-produce-retry.pcap", "kgo-tls13.pcap"} {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := kdissect(t, "doctor", pcap(name))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for i, l := range lines(out) {
				if w := utf8.RuneCountInString(l); w > 80 {
					t.Errorf("line %d is %d columns wide:\n%s", i+1, w, l)
				}
			}
			golden(t, "doctor-"+strings.TrimSuffix(name, ".pcap")+".txt", []byte(out))
		})
	}
}

// TestDoctorSeveralFiles: with several captures, the evidence names each frame's file ("files"
// in JSON, beside "frames"; the file before its frames in the text), and the frames of an
// error found in two files are those each file gives alone.
func TestDoctorSeveralFiles(t *testing.T) {
	names := []string{pcap("kgo-filters.pcap"), pcap("kgo-group-late-joiner.pcap")}
	// errorFrames are the frames of each error finding, as "file frame".
	errorFrames := func(fs []finding, file string) map[string][]string {
		out := map[string][]string{}
		for _, f := range fs {
			if f.ID != "errors" {
				continue
			}
			for i, frame := range f.Evidence.Frames {
				name := file
				if f.Evidence.Files != nil {
					name = f.Evidence.Files[i]
				}
				out[f.key()] = append(out[f.key()], fmt.Sprint(name, " ", frame))
			}
		}
		return out
	}
	alone := map[string][]string{}
	for _, name := range names {
		fs := doctorFindings(t, name)
		for _, f := range fs {
			if f.Evidence.Files != nil {
				t.Errorf("%s alone: files %v", name, f.Evidence.Files)
			}
		}
		for k, frames := range errorFrames(fs, name) {
			alone[k] = append(alone[k], frames...)
		}
	}
	fs := doctorFindings(t, names...)
	both := errorFrames(fs, "")
	for _, f := range fs {
		if len(f.Evidence.Files) != len(f.Evidence.Frames) {
			t.Errorf("%s: %d files for %d frames", f.key(), len(f.Evidence.Files), len(f.Evidence.Frames))
		}
	}
	spans := false
	for k, frames := range alone {
		slices.Sort(frames)
		got := slices.Sorted(slices.Values(both[k]))
		if !slices.Equal(got, frames) {
			t.Errorf("%s: frames %v in both files, %v in each alone", k, got, frames)
		}
		spans = spans || !strings.HasPrefix(frames[len(frames)-1], strings.Fields(frames[0])[0])
	}
	if !spans {
		t.Errorf("no error is found in both files: the test shows nothing of several files")
	}
	text, _, _ := kdissect(t, append([]string{"doctor"}, names...)...)
	if !strings.Contains(text, "frames  "+names[0]+" ") || !strings.Contains(text, names[1]+" ") {
		t.Errorf("the text does not name the files before their frames:\n%s", text)
	}
}
