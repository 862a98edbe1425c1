package dissect

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/pcaps"
)

// bodyInt is the integer value of a top-level body field of m (the header's fields come first
// and are not named like the definitions' fields).
func bodyInt(m *jsonMsg, name string) (int64, bool) {
	if m == nil {
		return 0, false
	}
	for _, f := range m.Fields {
		if f.Name == name {
			return intValue(f)
		}
	}
	return 0, false
}

// child is the node named name among fs.
func child(fs []*jsonField, name string) *jsonField {
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// anyPartition reports whether a Fetch response has a partition (Responses[*].Partitions[*])
// for which cond holds.
func anyPartition(m *jsonMsg, cond func(p []*jsonField) bool) bool {
	if m == nil {
		return false
	}
	topics := child(m.Fields, "Responses")
	if topics == nil {
		return false
	}
	for _, tp := range topics.Fields {
		if parts := child(tp.Fields, "Partitions"); parts != nil {
			for _, p := range parts.Fields {
				if cond(p.Fields) {
					return true
				}
			}
		}
	}
	return false
}

// watermarks compares a partition's HighWatermark with its LogStartOffset.
func watermarks(less bool) func(p []*jsonField) bool {
	return func(p []*jsonField) bool {
		hwf, lsf := child(p, "HighWatermark"), child(p, "LogStartOffset")
		if hwf == nil || lsf == nil {
			return false
		}
		hw, ok1 := intValue(hwf)
		ls, ok2 := intValue(lsf)
		if !ok1 || !ok2 {
			return false
		}
		if less {
			return hw < ls
		}
		return hw > ls
	}
}

// recordKey reports whether a message holds a record whose key is key.
func recordKey(m *jsonMsg, key string) bool {
	found := false
	if m != nil {
		walkFields(m.Fields, func(f *jsonField, _ string) {
			if v, ok := f.Value.(string); ok && f.Name == "key" && f.Type == "varint_bytes" && v == key {
				found = true
			}
		})
	}
	return found
}

// TestDisplayFilters runs -Y expressions, those docs/filters.md shows among them, on real
// captures. Each
// shows exactly the messages its equivalent dedicated filters show, where there are such,
// and the messages the test selects itself from the unfiltered JSON; in JSON lines and in
// summaries (which decode shallow unless the expression reads a body), printed as without -Y.
func TestDisplayFilters(t *testing.T) {
	const filters, group3 = "kgo-filters.pcap", "kgo-group-3brokers.pcap"
	lat1ms := func(p pair) bool { return p.resp != nil && p.resp.LatencyUS != nil && *p.resp.LatencyUS > 1000 }
	acks0 := func(p pair) bool { v, ok := bodyInt(p.req, "Acks"); return ok && v == 0 }
	shortSession := func(p pair) bool { v, ok := bodyInt(p.req, "SessionTimeoutMs"); return ok && v < 10000 }
	tests := []struct {
		file, expr string
		same       func(s *Selection) // dedicated filters that must show the same (nil: none)
		pred       pairPred
		empty      bool // the capture has no such pair (the case still checks that nothing is shown)
	}{
		// The examples of docs/filters.md, as written (checked below).
		{filters, `api == "Fetch" && latency_ms > 1`, func(s *Selection) { s.APIs, s.MinLatency = []string{"Fetch"}, time.Millisecond }, all(apiIs(1), lat1ms), false},
		{filters, `"orders" in topics`, func(s *Selection) { s.Topic = "orders" }, topicGlob("orders"), false},
		{filters, `api == "Produce" && req.Acks == 0`, nil, all(apiIs(0), acks0), false},
		{filters, `api == "JoinGroup" && req.SessionTimeoutMs < 10000`, nil, all(apiIs(11), shortSession), false},
		{filters, `len(errors) > 0`, func(s *Selection) { s.Errors = true }, hasErrors, false},
		{filters, `api == "Fetch" && any(resp.Responses, any(.Partitions, .HighWatermark < .LogStartOffset))`, nil,
			func(p pair) bool { return apiIs(1)(p) && anyPartition(p.resp, watermarks(true)) }, true},
		// The same mechanism on other captures and names.
		{filters, `api == "Fetch" && any(resp.Responses, any(.Partitions, .HighWatermark > .LogStartOffset))`, nil,
			func(p pair) bool { return apiIs(1)(p) && anyPartition(p.resp, watermarks(false)) }, false},
		{group3, `api_name == "Fetch" && latency_us > 347`, func(s *Selection) { s.APIs, s.MinLatency = []string{"Fetch"}, 348*time.Microsecond }, all(apiIs(1), minLatencyUS(348)), false},
		{group3, `"kdissect-group" in groups && client_id == "kdissect-group-member"`, func(s *Selection) { s.Group, s.ClientID = "kdissect-group", "kdissect-group-member" },
			all(groupGlob("kdissect-group"), clientGlob("kdissect-group-member")), false},
		{group3, `stream == 5 || correlation_id == 3 && api_key == 12`, nil, func(p pair) bool { return streamIs(5)(p) || corrIs(3)(p) && apiIs(12)(p) }, false},
		{"sarama-produce-consume.pcap", `len(errors) > 0`, func(s *Selection) { s.Errors = true }, hasErrors, false},
		{"kafkago-produce-consume.pcap", `api == "JoinGroup" && req.SessionTimeoutMs < 10000`, nil, all(apiIs(11), shortSession), false},
		// Into records (summaries then decode them, though they show only counts).
		{"kgo-codecs.pcap", `api == "Produce" && any(req.TopicData, any(.PartitionData, any(.Records, any(.records, .key == "k-2"))))`, nil,
			func(p pair) bool { return apiIs(0)(p) && recordKey(p.req, "k-2") }, false},
	}
	var onFilters []string
	for _, tt := range tests {
		if tt.file == filters {
			onFilters = append(onFilters, tt.expr)
		}
	}
	for _, expr := range pageExamples(t) {
		if !slices.Contains(onFilters, expr) {
			t.Errorf("docs/filters.md shows -Y '%s', which is not among the cases on %s", expr, filters)
		}
	}
	unfiltered := map[string][]*jsonMsg{}
	summaries := map[string]map[string]string{}
	for _, tt := range tests {
		t.Run(tt.file+" "+tt.expr, func(t *testing.T) {
			file := pcapPath(tt.file)
			msgs := unfiltered[tt.file]
			if msgs == nil {
				msgs = dissectJSON(t, file, testRun{})
				unfiltered[tt.file] = msgs
				summaries[tt.file] = summaryLines(t, file)
			}
			want := expectSet(pairsOf(t, msgs), tt.pred, "")
			if (len(want) == 0) != tt.empty || len(want) >= len(msgs) {
				t.Fatalf("the case selects %d of %d messages: it cannot tell a filter from none", len(want), len(msgs))
			}
			y := testRun{sel: func(s *Selection) { s.Expr = tt.expr }}
			compareSets(t, dissectJSON(t, file, y), want)
			if tt.same != nil {
				compareSets(t, dissectJSON(t, file, testRun{sel: tt.same}), want)
			}
			if _, errOut, _ := (testRun{format: "none", ports: pcaps.Ports, sel: y.sel}).dissect(t, file); strings.Contains(errOut, "-Y") {
				t.Errorf("the expression failed on a pair: %s", errOut)
			}
			got := summaryLinesOf(t, file, y)
			for k, line := range got {
				if summaries[tt.file][k] != line {
					t.Errorf("summary line %s is not printed as without -Y:\n got: %s\nwant: %s", k, line, summaries[tt.file][k])
				}
			}
			if len(got) != len(want) {
				t.Errorf("summary shows %d messages, want %d", len(got), len(want))
			}
			t.Logf("%d of %d messages", len(want), len(msgs))
		})
	}
}

// pageExamples returns the expressions of the examples docs/filters.md shows, as lines
// "kdissect -Y 'EXPR' FILE".
func pageExamples(t *testing.T) []string {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "docs", "filters.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^kdissect -Y '([^']*)' FILE`).FindAllStringSubmatch(string(page), -1) {
		out = append(out, m[1])
	}
	if len(out) < 5 {
		t.Fatalf("only %d examples of -Y in docs/filters.md", len(out))
	}
	return out
}
