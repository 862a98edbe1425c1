package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/model"
)

// The tables of --stats checked against values computed here from the message lines of
// --format json, which the tables do not read.

// tableNode is a field of a message line.
type tableNode struct {
	Name   string      `json:"name"`
	Type   string      `json:"type"`
	Size   int         `json:"size"`
	Value  any         `json:"value"`
	Topic  string      `json:"topic"`
	Fields []tableNode `json:"fields"`
}

// tableLine is a message line, or a row of a table (Row).
type tableLine struct {
	Kind         string      `json:"kind"`
	Table        string      `json:"table"`
	Frame        int         `json:"frame"`
	Time         time.Time   `json:"time"`
	Stream       int         `json:"stream"`
	Src          string      `json:"src"`
	APIKey       *int16      `json:"api_key"`
	APIName      string      `json:"api_name"`
	ClientID     *string     `json:"client_id"`
	RequestFrame int         `json:"request_frame"`
	LatencyUS    int64       `json:"latency_us"`
	Fields       []tableNode `json:"fields"`
	Row          map[string]any
}

// statsRun runs --format json --stats on a capture of pcaps/ and returns its message lines and
// its tables' rows, by table.
func statsRun(t *testing.T, file string) (msgs []*tableLine, tables map[string][]map[string]any) {
	t.Helper()
	args := []string{"--format", "json", "--stats"}
	if kl := strings.TrimSuffix(file, ".pcap") + ".keylog"; strings.HasSuffix(file, ".pcap") && exists(kl) {
		args = append(args, "--tls-keylog", kl)
	}
	out, errOut, code := kdissect(t, append(args, file)...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", file, code, errOut)
	}
	tables = map[string][]map[string]any{}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue // no message at all
		}
		var m tableLine
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: %v: %s", file, err, l)
		}
		if m.Kind == "stats" {
			if err := json.Unmarshal([]byte(l), &m.Row); err != nil {
				t.Fatal(err)
			}
			tables[m.Table] = append(tables[m.Table], m.Row)
			continue
		}
		msgs = append(msgs, &m)
	}
	return msgs, tables
}

func exists(name string) bool { _, err := os.Stat(name); return err == nil }

// top is the top-level body field of a message line named name.
func (m *tableLine) top(name string) *tableNode {
	for i := range m.Fields {
		if m.Fields[i].Name == name {
			return &m.Fields[i]
		}
	}
	return nil
}

// number is a node's value as a number (false for none).
func (n *tableNode) number() (float64, bool) {
	if n == nil {
		return 0, false
	}
	v, ok := n.Value.(float64)
	return v, ok
}

// walkTopics calls fn on every node of ns and below, with the topic of the topic element holding it
// ("" outside one): an element of a top-level array whose Name, Topic or TopicId names it.
func walkTopics(ns []tableNode, topic string, depth int, fn func(n *tableNode, topic string)) {
	if depth == 2 {
		for _, n := range ns {
			switch {
			case n.Name == "TopicId" && n.Topic != "":
				topic = n.Topic
			case n.Name == "TopicId" && topic == "":
				topic, _ = n.Value.(string)
			case n.Name == "Name" || n.Name == "Topic" || n.Name == "TopicName":
				if s, ok := n.Value.(string); ok {
					topic = s
				}
			}
		}
	}
	for i := range ns {
		fn(&ns[i], topic)
		walkTopics(ns[i].Fields, topic, depth+1, fn)
	}
}

// topics are the topics a message line names in its topic elements.
func (m *tableLine) topics() []string {
	var ts []string
	walkTopics(m.Fields, "", 0, func(_ *tableNode, topic string) {
		if topic != "" && !slices.Contains(ts, topic) {
			ts = append(ts, topic)
		}
	})
	return ts
}

// recordSet is the records of one records field.
type recordSet struct {
	topic          string
	records, bytes int64
}

// recordSets are the non-empty records fields of a message line, with their record counts (the
// recordsCount of their batches).
func (m *tableLine) recordSets(t *testing.T) []recordSet {
	var rs []recordSet
	walkTopics(m.Fields, "", 0, func(n *tableNode, topic string) {
		if !strings.HasSuffix(n.Type, "records") || len(n.Fields) == 0 {
			return // not records, or none
		}
		r := recordSet{topic: topic, bytes: int64(n.Size)}
		counted := false
		walkTopics(n.Fields, "", 3, func(b *tableNode, _ string) {
			if b.Name == "recordsCount" {
				v, _ := b.number()
				r.records += int64(v)
				counted = true
			}
		})
		if !counted {
			t.Fatalf("frame %d: records of %d bytes without a batch header: the capture does not fit the test", m.Frame, r.bytes)
		}
		rs = append(rs, r)
	})
	return rs
}

// hasError reports whether a message line holds a non-zero error code.
func (m *tableLine) hasError() bool {
	found := false
	walkTopics(m.Fields, "", 0, func(n *tableNode, _ string) {
		if v, ok := n.number(); ok && strings.HasSuffix(n.Name, "ErrorCode") && v != 0 {
			found = true
		}
	})
	return found
}

// nearestRank is the nearest-rank percentile p of sorted values, in microseconds.
func nearestRank(sorted []int64, p float64) int64 {
	i := int(math.Ceil(float64(len(sorted))*p)) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// tableCaptures are real clients' captures the answers are checked on.
var tableCaptures = []string{"kgo-produce-fetch.pcap", "kgo-group-3brokers.pcap", "sarama-produce-consume.pcap", "kgo-transactions.pcap", "kafkago-produce-consume.pcap"}

// TestLatencyTable checks every row of the tables latency and slowest against the pairs of the
// message lines: counts, waits (a Fetch answered with no record after 9/10 of its MaxWaitMs,
// a JoinGroup answered without error, a SyncGroup of a follower) and nearest-rank percentiles
// over the other answers.
func TestLatencyTable(t *testing.T) {
	allWaits := 0
	for _, name := range tableCaptures {
		t.Run(name, func(t *testing.T) {
			msgs, tables := statsRun(t, pcap(name))
			requests := map[int]*tableLine{}
			type group struct {
				count, waits int
				lat          []int64
			}
			groups := map[string]*group{}
			type pair struct {
				frame int
				lat   int64
			}
			var pairs []pair
			for _, m := range msgs {
				if m.Kind == "request" {
					requests[m.Frame] = m
				}
				if m.Kind != "response" || m.RequestFrame == 0 || m.APIKey == nil || *m.APIKey < 0 {
					continue
				}
				req := requests[m.RequestFrame]
				if req == nil {
					t.Fatalf("frame %d: its request %d is not shown before it", m.Frame, m.RequestFrame)
				}
				wait := false
				switch *m.APIKey {
				case 1:
					maxWait, ok := req.top("MaxWaitMs").number()
					wait = ok && maxWait > 0 && len(m.recordSets(t)) == 0 && float64(m.LatencyUS) >= maxWait*1000*9/10
				case 11:
					wait = !m.hasError()
				case 14:
					n, _ := req.top("Assignments").number()
					wait = req.top("Assignments") != nil && n == 0
				}
				clientID := ""
				if req.ClientID != nil {
					clientID = *req.ClientID
				}
				keys := []string{fmt.Sprint(*m.APIKey, " broker ", m.Src), fmt.Sprint(*m.APIKey, " client_id ", clientID)}
				for _, tp := range m.topics() {
					keys = append(keys, fmt.Sprint(*m.APIKey, " topic ", tp))
				}
				for _, k := range keys {
					g := groups[k]
					if g == nil {
						g = &group{}
						groups[k] = g
					}
					g.count++
					if wait {
						g.waits++
						allWaits++
					} else {
						g.lat = append(g.lat, m.LatencyUS)
					}
				}
				if !wait {
					pairs = append(pairs, pair{m.Frame, m.LatencyUS})
				}
			}
			rows := tables["latency"]
			seen := map[string]bool{}
			for _, r := range rows {
				k := fmt.Sprint(r["api_key"], " ", r["by"], " ", r["name"])
				seen[k] = true
				g := groups[k]
				if g == nil {
					if r["by"] != "topic" { // topics named other than in topic elements are not found here
						t.Errorf("row %v: no such pairs", r)
					}
					continue
				}
				if r["count"] != float64(g.count) || r["waits"] != float64(g.waits) {
					t.Errorf("%s: count %v waits %v, want %d %d", k, r["count"], r["waits"], g.count, g.waits)
				}
				slices.Sort(g.lat)
				for _, c := range []struct {
					col string
					p   float64
				}{{"latency_p50_us", .5}, {"latency_p90_us", .9}, {"latency_p99_us", .99}, {"latency_max_us", 1}} {
					var want any
					if len(g.lat) > 0 {
						want = float64(nearestRank(g.lat, c.p))
					}
					if r[c.col] != want {
						t.Errorf("%s: %s %v, want %v", k, c.col, r[c.col], want)
					}
				}
			}
			for k := range groups {
				if !seen[k] && !strings.Contains(k, " topic ") {
					t.Errorf("%s: pairs and no row", k)
				}
			}
			// Topic rows of the APIs that carry records, whose topics are all in topic elements.
			for k := range groups {
				if (strings.HasPrefix(k, "0 topic ") || strings.HasPrefix(k, "1 topic ")) && !seen[k] {
					t.Errorf("%s: pairs and no row", k)
				}
			}
			slices.SortFunc(pairs, func(a, b pair) int { return cmp.Or(cmp.Compare(b.lat, a.lat), cmp.Compare(a.frame, b.frame)) })
			pairs = pairs[:min(len(pairs), 10)]
			slowest := tables["slowest"]
			if len(slowest) != len(pairs) {
				t.Fatalf("slowest: %d rows, want %d", len(slowest), len(pairs))
			}
			for i, p := range pairs {
				if slowest[i]["frame"] != float64(p.frame) || slowest[i]["latency_us"] != float64(p.lat) {
					t.Errorf("slowest %d: %v, want frame %d latency %d", i, slowest[i], p.frame, p.lat)
				}
			}
		})
	}
	if allWaits == 0 {
		t.Error("no wait in any capture: the test checks no wait")
	}
}

// TestRatesTable checks every row of the table rates against the records of the message lines:
// per topic, records and bytes over the span from the first message to the last, and in the
// busiest second.
func TestRatesTable(t *testing.T) {
	for _, name := range tableCaptures {
		t.Run(name, func(t *testing.T) {
			msgs, tables := statsRun(t, pcap(name))
			var first, last time.Time
			type measures [4]int64
			totals := map[string]*measures{}
			seconds := map[string]map[int64]*measures{}
			for _, m := range msgs {
				if first.IsZero() || m.Time.Before(first) {
					first = m.Time
				}
				if m.Time.After(last) {
					last = m.Time
				}
				i := 0
				switch {
				case m.APIKey == nil || *m.APIKey < 0:
					continue
				case m.Kind == "request" && *m.APIKey == 0:
				case m.Kind == "response" && *m.APIKey == 1:
					i = 2
				default:
					continue
				}
				for _, r := range m.recordSets(t) {
					if totals[r.topic] == nil {
						totals[r.topic], seconds[r.topic] = &measures{}, map[int64]*measures{}
					}
					s := seconds[r.topic][m.Time.Unix()]
					if s == nil {
						s = &measures{}
						seconds[r.topic][m.Time.Unix()] = s
					}
					totals[r.topic][i] += r.records
					totals[r.topic][i+1] += r.bytes
					s[i] += r.records
					s[i+1] += r.bytes
				}
			}
			rows := tables["rates"]
			if len(rows) != len(totals) || len(rows) == 0 {
				t.Fatalf("%d rows, want %d: %v", len(rows), len(totals), rows)
			}
			span := last.Sub(first).Seconds()
			for _, r := range rows {
				topic, _ := r["topic"].(string)
				tot := totals[topic]
				if tot == nil {
					t.Fatalf("row %v: no records of that topic", r)
				}
				var peak measures
				for _, s := range seconds[topic] {
					for i := range s {
						peak[i] = max(peak[i], s[i])
					}
				}
				for i, col := range []string{"produced_records", "produced_bytes", "fetched_records", "fetched_bytes"} {
					got, _ := r[col+"_per_s"].(float64)
					if want := float64(tot[i]) / span; math.Abs(got-want) > 1e-9*max(1, want) {
						t.Errorf("%s: %s_per_s %v, want %v", topic, col, got, want)
					}
					if r["peak_"+col] != float64(peak[i]) {
						t.Errorf("%s: peak_%s %v, want %d", topic, col, r["peak_"+col], peak[i])
					}
				}
			}
		})
	}
}

// statsContract is the documented contract of the JSON lines of --stats (docs/json.md): each
// table's columns, in order; those marked "?" are left out when they have no value.
var statsContract = map[string][]string{
	"apis": {"api_key", "api_name", "api_version", "requests", "responses", "unanswered", "no_response", "bytes",
		"latency_p50_us?", "latency_p90_us?", "latency_p99_us?", "latency_max_us?"},
	"errors":      {"error_code", "error_name", "count", "api_names"},
	"connections": {"stream", "client", "broker", "client_id", "software", "messages", "bytes", "first_time", "last_time"},
	"topics":      {"topic", "produced_records", "produced_bytes", "fetched_records", "fetched_bytes"},
	"fetch_sessions": {"stream", "session_id", "requests", "first_epoch", "last_epoch", "partitions", "added", "forgotten",
		"refused", "closed_by", "followed"},
	"latency": {"api_key", "api_name", "by", "name", "count", "waits", "latency_p50_us", "latency_p90_us", "latency_p99_us", "latency_max_us"},
	"slowest": {"frame", "request_frame", "stream", "api_name", "broker", "client_id", "topics", "latency_us"},
	"lag":     {"client_id", "topic", "partition", "fetches", "fetch_offset", "high_watermark", "lag", "max_lag", "last_stable_offset"},
	"e2e":     {"topic", "partition", "client_id", "records", "p50_us", "p99_us", "max_us"},
	"groups": {"group", "protocol_type", "protocol", "generation", "member", "members", "leader", "join_reasons", "start", "end",
		"rebalance_us", "assignment", "errors"},
	"producers": {"client_id", "producer_id", "producer_epoch", "transactional", "partitions", "batches", "records",
		"records_per_batch_p50", "records_per_batch_max", "batch_bytes_p50", "codecs", "compressed_bytes", "decompressed_bytes",
		"ratio", "gaps", "duplicates", "out_of_order", "epoch_bump", "errors"},
	"transactions": {"transactional_id", "producer_id", "producer_epoch", "partitions", "groups", "records", "start", "end",
		"duration_us", "result", "errors"},
	"rates": {"topic", "produced_records_per_s", "produced_bytes_per_s", "fetched_records_per_s", "fetched_bytes_per_s",
		"peak_produced_records", "peak_produced_bytes", "peak_fetched_records", "peak_fetched_bytes"},
}

// TestStatsContract: every registered table has the documented columns, and --stats --format
// json on every capture of pcaps/ writes rows of registered tables only, each with exactly
// those columns.
func TestStatsContract(t *testing.T) {
	registered := map[string]bool{}
	for _, tb := range analysis.Registered().Tables() {
		registered[tb.Name] = true
		var cols []string
		for _, c := range tb.Columns {
			if c.In(model.JSON) {
				cols = append(cols, c.Name+map[bool]string{true: "?"}[c.Optional])
			}
		}
		if want, ok := statsContract[tb.Name]; !ok || !slices.Equal(cols, want) {
			t.Errorf("table %s: columns %q, documented %q", tb.Name, cols, want)
		}
	}
	for name := range statsContract {
		if !registered[name] {
			t.Errorf("table %s: documented, not registered", name)
		}
	}
	written := map[string]bool{}
	for _, file := range captures(t) {
		_, tables := statsRun(t, file)
		for name, rows := range tables {
			written[name] = true
			want := statsContract[name]
			if want == nil {
				t.Errorf("%s: table %s is not documented", file, name)
				continue
			}
			for _, r := range rows {
				var keys []string
				for k := range r {
					if k != "kind" && k != "table" {
						keys = append(keys, k)
					}
				}
				var must, may []string
				for _, c := range want {
					if n, ok := strings.CutSuffix(c, "?"); ok {
						may = append(may, n)
					} else {
						must = append(must, n)
					}
				}
				for _, k := range keys {
					if !slices.Contains(must, k) && !slices.Contains(may, k) {
						t.Errorf("%s: table %s: column %s not documented", file, name, k)
					}
				}
				for _, k := range must {
					if _, ok := r[k]; !ok {
						t.Errorf("%s: table %s: a row without %s: %v", file, name, k, r)
					}
				}
			}
		}
	}
	for name := range statsContract {
		if !written[name] {
			t.Errorf("table %s: no capture of pcaps/ writes a row of it", name)
		}
	}
}
