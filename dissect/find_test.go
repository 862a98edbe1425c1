package dissect

// Tests of what people use to find things in a capture: the selection (the flags --api,
// --topic, ...), the statistics (--stats), topic names
// for topic ids, and the redaction of secrets. Every expectation is computed here, from the JSON
// trees of a run without filters, by rules written for the test (field names, notes, error
// codes), never by the code under test.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/pcaps"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/kdissect/kdissect/internal/analysis"
)

// jsonMsg is one line of --format json, with its raw text.
type jsonMsg struct {
	Frame         int          `json:"frame"`
	FirstFrame    int          `json:"first_frame"`
	Time          string       `json:"time"`
	Stream        int          `json:"stream"`
	Src           string       `json:"src"`
	Dst           string       `json:"dst"`
	Kind          string       `json:"kind"`
	APIKey        *int16       `json:"api_key"`
	APIName       string       `json:"api_name"`
	APIVersion    *int16       `json:"api_version"`
	CorrelationID *int32       `json:"correlation_id"`
	ClientID      *string      `json:"client_id"`
	Size          int          `json:"size"`
	RequestFrame  *int         `json:"request_frame"`
	LatencyUS     *int64       `json:"latency_us"`
	NoResponse    bool         `json:"no_response"`
	Fields        []*jsonField `json:"fields"`
	Warnings      []string     `json:"warnings"`
	Text          string       `json:"text"` // notices
	raw           string
}

type jsonField struct {
	Name   string       `json:"name"`
	Type   string       `json:"type"`
	Offset int          `json:"offset"`
	Size   int          `json:"size"`
	Value  any          `json:"value"`
	Note   string       `json:"note"`
	Error  string       `json:"error"`
	Fields []*jsonField `json:"fields"`
}

func (m *jsonMsg) key() findKey {
	k := findKey{Frame: m.Frame, Corr: -1, Kind: m.Kind}
	if m.CorrelationID != nil {
		k.Corr = *m.CorrelationID
	}
	return k
}

func (m *jsonMsg) api() int16 {
	if m.APIKey == nil {
		return -1
	}
	return *m.APIKey
}

func (m *jsonMsg) version() int16 {
	if m.APIVersion == nil {
		return -1
	}
	return *m.APIVersion
}

func (m *jsonMsg) String() string {
	return fmt.Sprintf("#%d %s %s v%d corr %d stream %d", m.Frame, m.APIName, m.Kind, m.version(), m.key().Corr, m.Stream)
}

// findKey names a message in a set: its packet, correlation id and kind.
type findKey struct {
	Frame int
	Corr  int32
	Kind  string
}

// parseJSON reads the messages of --format json output; notices and statistics are left out.
func parseJSON(t *testing.T, out string) []*jsonMsg {
	t.Helper()
	var msgs []*jsonMsg
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, `{"kind":"stats"`) {
			continue // a row of --stats: its no_response is a count, not a message's flag
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		m := &jsonMsg{raw: line}
		if err := dec.Decode(m); err != nil {
			t.Fatalf("bad JSON line %q: %v", line, err)
		}
		if m.Kind == "notice" {
			continue
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// dissectJSON runs a capture through the pipeline as r says, in the json format with the broker
// ports of pcaps/, and parses the output.
func dissectJSON(t *testing.T, file string, r testRun) []*jsonMsg {
	t.Helper()
	r.format, r.ports = "json", pcaps.Ports
	out, errOut, code := r.dissect(t, file)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", file, code, errOut)
	}
	return parseJSON(t, out)
}

// walkFields calls fn on every node of the tree, depth first, with the name of the array whose
// element holds the node ("" when its parent is not an array element).
func walkFields(fs []*jsonField, fn func(f *jsonField, array string)) { walkTree(fs, true, fn) }

// walkOwnFields is walkFields without the fields of the structures that bytes fields carry (a
// consumer group member's subscription or assignment): what the message names itself.
func walkOwnFields(fs []*jsonField, fn func(f *jsonField, array string)) { walkTree(fs, false, fn) }

// walkTree is walkFields, into the fields of bytes fields or not.
func walkTree(fs []*jsonField, inBytes bool, fn func(f *jsonField, array string)) {
	var walk func(fs []*jsonField, array string)
	walk = func(fs []*jsonField, array string) {
		for _, f := range fs {
			fn(f, array)
			switch {
			case strings.HasPrefix(f.Name, "["): // an array element: its fields belong to the array
				walk(f.Fields, array)
			case strings.HasSuffix(f.Type, "array"):
				walk(f.Fields, f.Name)
			case strings.HasSuffix(f.Type, "bytes") && !inBytes:
			default:
				walk(f.Fields, "")
			}
		}
	}
	walk(fs, "")
}

func str(f *jsonField) (string, bool) {
	s, ok := f.Value.(string)
	return s, ok && strings.Contains(f.Type, "string")
}

func intValue(f *jsonField) (int64, bool) {
	if f == nil {
		return 0, false
	}
	n, ok := f.Value.(json.Number)
	if !ok {
		return 0, false
	}
	v, err := n.Int64()
	return v, err == nil
}

// topicArrays are the arrays whose elements name a topic in a field called Name
// (AddPartitionsToTxn's up to v3 among them).
var topicArrays = map[string]bool{"Topics": true, "TopicData": true, "Responses": true, "Results": true,
	"V3AndBelowTopics": true, "ResultsByTopicV3AndBelow": true}

const (
	unknownTopic = "topic name unknown"
	nullTopicID  = "AAAAAAAAAAAAAAAAAAAAAA"
)

// topicOfID is the topic a TopicId node stands for: the name its note gives, or the id itself
// when the note says the name is unknown; "" for the null id.
func topicOfID(f *jsonField) string {
	id, _ := f.Value.(string)
	switch {
	case id == "" || id == nullTopicID:
		return ""
	case strings.HasPrefix(f.Note, unknownTopic):
		return id
	case strings.HasPrefix(f.Note, "topic "):
		return strings.TrimPrefix(f.Note, "topic ")
	}
	return id
}

// topicsIn lists the topics a message names: Topic and TopicName fields, Name fields of topic
// array elements, the elements of TopicNames arrays, and topic ids, both as they are and through
// their notes; not the topics of a subscription or assignment inside a bytes field, which
// --topic does not look at.
func topicsIn(m *jsonMsg) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	walkOwnFields(m.Fields, func(f *jsonField, array string) {
		if s, ok := str(f); ok && (f.Name == "Topic" || f.Name == "TopicName" || f.Name == "Name" && topicArrays[array]) {
			add(s)
		}
		// The string elements of TopicNames arrays: DeleteTopics' topics, and a KIP-848
		// member's subscription (SubscribedTopicNames), a plain field, unlike a classic one's.
		if s, ok := str(f); ok && strings.HasPrefix(f.Name, "[") && strings.HasSuffix(array, "TopicNames") {
			add(s)
		}
		if f.Name == "TopicId" && f.Type == "uuid" {
			add(topicOfID(f))
			if id, _ := f.Value.(string); id != nullTopicID {
				add(id) // a topic can be chosen by its id too
			}
		}
	})
	return out
}

// groupsIn lists the consumer groups a message names: GroupId fields, the string elements of
// Groups and GroupsNames arrays, and FindCoordinator keys of type 0 (group).
func groupsIn(m *jsonMsg) []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	groupKeys := false
	if m.api() == 10 && m.Kind == "request" {
		for _, f := range m.Fields {
			if v, ok := intValue(f); ok && f.Name == "KeyType" && v == 0 {
				groupKeys = true
			}
		}
		if m.version() < 1 { // no KeyType before v1: the key is a group
			groupKeys = true
		}
	}
	walkFields(m.Fields, func(f *jsonField, array string) {
		s, ok := str(f)
		if !ok {
			return
		}
		switch {
		case f.Name == "GroupId":
			add(s)
		case strings.HasPrefix(f.Name, "[") && (array == "Groups" || array == "GroupsNames"):
			add(s)
		case groupKeys && (f.Name == "Key" || strings.HasPrefix(f.Name, "[") && array == "CoordinatorKeys"):
			add(s)
		}
	})
	return out
}

// errorCodesIn lists the non-zero error codes of a message, first seen first, with their names.
func errorCodesIn(m *jsonMsg) (codes []int64, names map[int64]string) {
	names = map[int64]string{}
	walkFields(m.Fields, func(f *jsonField, _ string) {
		v, ok := intValue(f)
		if ok && f.Type == "int16" && strings.HasSuffix(f.Name, "ErrorCode") && v != 0 && !slices.Contains(codes, v) {
			codes = append(codes, v)
			names[v] = f.Error
		}
	})
	return codes, names
}

// pair is a request and its response; either may be missing.
type pair struct{ req, resp *jsonMsg }

func (p pair) sides() []*jsonMsg {
	var out []*jsonMsg
	for _, m := range []*jsonMsg{p.req, p.resp} {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// pairsOf pairs responses with requests through request_frame, stream and correlation id.
func pairsOf(t *testing.T, msgs []*jsonMsg) []pair {
	t.Helper()
	type reqKey struct {
		stream, frame int
		corr          int32
	}
	reqs := map[reqKey]*jsonMsg{}
	seen := map[findKey]bool{}
	for _, m := range msgs {
		if seen[m.key()] {
			t.Fatalf("two messages %v: the set comparison needs (frame, correlation id, kind) to be unique", m)
		}
		seen[m.key()] = true
		if m.Kind == "request" {
			reqs[reqKey{m.Stream, m.Frame, m.key().Corr}] = m
		}
	}
	var out []pair
	used := map[*jsonMsg]bool{}
	for _, m := range msgs {
		if m.Kind != "response" {
			continue
		}
		if m.RequestFrame == nil {
			out = append(out, pair{resp: m})
			continue
		}
		req := reqs[reqKey{m.Stream, *m.RequestFrame, m.key().Corr}]
		if req == nil || used[req] {
			t.Fatalf("%v answers #%d, which is no request of its stream with its correlation id", m, *m.RequestFrame)
		}
		if m.api() != req.api() || m.version() != req.version() {
			t.Fatalf("%v answers %v", m, req)
		}
		used[req] = true
		out = append(out, pair{req: req, resp: m})
	}
	for _, m := range msgs {
		if m.Kind != "response" && !used[m] {
			out = append(out, pair{req: m})
		}
	}
	return out
}

// pairPred decides on a pair from the unfiltered output.
type pairPred func(p pair) bool

func apiIs(keys ...int16) pairPred {
	return func(p pair) bool { return slices.Contains(keys, p.sides()[0].api()) }
}

func globAny(glob string, values func(*jsonMsg) []string) pairPred {
	return func(p pair) bool {
		for _, m := range p.sides() {
			for _, v := range values(m) {
				if ok, _ := path.Match(glob, v); ok {
					return true
				}
			}
		}
		return false
	}
}

func topicGlob(glob string) pairPred { return globAny(glob, topicsIn) }
func groupGlob(glob string) pairPred { return globAny(glob, groupsIn) }

func clientGlob(glob string) pairPred {
	return func(p pair) bool {
		if p.req == nil || p.req.ClientID == nil {
			return false
		}
		ok, _ := path.Match(glob, *p.req.ClientID)
		return ok
	}
}

func hasErrors(p pair) bool {
	if p.resp == nil {
		return false
	}
	codes, _ := errorCodesIn(p.resp)
	return len(codes) > 0
}

func minLatencyUS(us int64) pairPred {
	return func(p pair) bool { return p.resp != nil && p.resp.LatencyUS != nil && *p.resp.LatencyUS >= us }
}

func corrIs(c int32) pairPred {
	return func(p pair) bool { return p.sides()[0].key().Corr == c }
}

func streamIs(s int) pairPred {
	return func(p pair) bool { return p.sides()[0].Stream == s }
}

func all(preds ...pairPred) pairPred {
	return func(p pair) bool {
		for _, f := range preds {
			if !f(p) {
				return false
			}
		}
		return true
	}
}

func anyPair(pair) bool { return true }

// expectSet lists the messages a filter must show: both sides of every matching pair, or one
// side only (side "request" or "response").
func expectSet(pairs []pair, pred pairPred, side string) map[findKey]*jsonMsg {
	want := map[findKey]*jsonMsg{}
	for _, p := range pairs {
		if !pred(p) {
			continue
		}
		for _, m := range p.sides() {
			if side == "" || m.Kind == side {
				want[m.key()] = m
			}
		}
	}
	return want
}

// compareSets fails with the messages missing from got and those that should not be there; the
// messages found must also be printed exactly as without the filter.
func compareSets(t *testing.T, got []*jsonMsg, want map[findKey]*jsonMsg) {
	t.Helper()
	gotSet := map[findKey]*jsonMsg{}
	var extra, missing []string
	for _, m := range got {
		if gotSet[m.key()] != nil {
			t.Errorf("%v shown twice", m)
		}
		gotSet[m.key()] = m
		w := want[m.key()]
		if w == nil {
			extra = append(extra, m.String())
			continue
		}
		if w.raw != m.raw {
			t.Errorf("%v is not printed as without the filter:\n got: %.300s\nwant: %.300s", m, m.raw, w.raw)
		}
	}
	for k, m := range want {
		if gotSet[k] == nil {
			missing = append(missing, m.String())
		}
	}
	sort.Strings(extra)
	sort.Strings(missing)
	if len(extra) > 0 || len(missing) > 0 {
		t.Errorf("shown but not expected (%d): %v\nexpected but not shown (%d): %v", len(extra), extra, len(missing), missing)
	}
}

// TestFilters runs each selection flag on real captures and compares the messages shown with
// those the test selects itself from the unfiltered output.
func TestFilters(t *testing.T) {
	const group3, codecs, prodFetch = "kgo-group-3brokers.pcap", "kgo-codecs.pcap", "kgo-produce-fetch.pcap"
	tests := []struct {
		file string
		name string // the flags that make the selection
		sel  func(s *Selection)
		pred pairPred
		side string
	}{
		{group3, "--api Fetch", func(s *Selection) { s.APIs = []string{"Fetch"} }, apiIs(1), ""},
		{group3, "--api heartbeat --api 11", func(s *Selection) { s.APIs = []string{"heartbeat", "11"} }, apiIs(12, 11), ""},
		{group3, "--api Metadata,22", func(s *Selection) { s.APIs = []string{"Metadata", "22"} }, apiIs(3, 22), ""},
		{group3, "--topic kdissect-orders", func(s *Selection) { s.Topic = "kdissect-orders" }, topicGlob("kdissect-orders"), ""},
		{group3, "--topic *-ord?rs", func(s *Selection) { s.Topic = "*-ord?rs" }, topicGlob("*-ord?rs"), ""},
		{group3, "--topic no-such-topic", func(s *Selection) { s.Topic = "no-such-topic" }, topicGlob("no-such-topic"), ""},
		{group3, "--group kdissect-group", func(s *Selection) { s.Group = "kdissect-group" }, groupGlob("kdissect-group"), ""},
		{group3, "--group kdissect-*", func(s *Selection) { s.Group = "kdissect-*" }, groupGlob("kdissect-*"), ""},
		{group3, "--client-id kdissect-group-*", func(s *Selection) { s.ClientID = "kdissect-group-*" }, clientGlob("kdissect-group-*"), ""},
		{group3, "--client-id kdissect-producer", func(s *Selection) { s.ClientID = "kdissect-producer" }, clientGlob("kdissect-producer"), ""},
		{group3, "--errors", func(s *Selection) { s.Errors = true }, hasErrors, ""},
		{group3, "--min-latency 50ms", func(s *Selection) { s.MinLatency = 50 * time.Millisecond }, minLatencyUS(50000), ""},
		{group3, "--min-latency 347us", func(s *Selection) { s.MinLatency = 347 * time.Microsecond }, minLatencyUS(347), ""},
		{group3, "--correlation-id 1", func(s *Selection) { s.CorrelationID = 1 }, corrIs(1), ""},
		{group3, "--correlation-id 0", func(s *Selection) { s.CorrelationID = 0 }, corrIs(0), ""},
		{group3, "--stream 5", func(s *Selection) { s.Stream = 5 }, streamIs(5), ""},
		{group3, "--stream 8", func(s *Selection) { s.Stream = 8 }, streamIs(8), ""},
		{group3, "--requests", func(s *Selection) { s.Requests = true }, anyPair, "request"},
		{group3, "--responses", func(s *Selection) { s.Responses = true }, anyPair, "response"},
		{group3, "--api Fetch --min-latency 50ms --responses", func(s *Selection) {
			s.APIs = []string{"Fetch"}
			s.MinLatency = 50 * time.Millisecond
			s.Responses = true
		}, all(apiIs(1), minLatencyUS(50000)), "response"},
		{group3, "--client-id kdissect-group-member --topic kdissect-orders --stream 8",
			func(s *Selection) { s.ClientID = "kdissect-group-member"; s.Topic = "kdissect-orders"; s.Stream = 8 },
			all(clientGlob("kdissect-group-member"), topicGlob("kdissect-orders"), streamIs(8)), ""},
		{group3, "--group kdissect-group --errors --requests", func(s *Selection) { s.Group = "kdissect-group"; s.Errors = true; s.Requests = true }, all(groupGlob("kdissect-group"), hasErrors), "request"},
		{group3, "--api Fetch --requests", func(s *Selection) { s.APIs = []string{"Fetch"}; s.Requests = true }, apiIs(1), "request"},
		{group3, "--correlation-id 3 --api Heartbeat,Fetch,OffsetCommit", func(s *Selection) { s.APIs = []string{"Heartbeat", "Fetch", "OffsetCommit"}; s.CorrelationID = 3 }, all(corrIs(3), apiIs(12, 1, 8)), ""},
		{prodFetch, "--topic kdissect-events", func(s *Selection) { s.Topic = "kdissect-events" }, topicGlob("kdissect-events"), ""},
		{prodFetch, "--api Produce,Fetch --topic kdissect-*", func(s *Selection) { s.APIs = []string{"Produce", "Fetch"}; s.Topic = "kdissect-*" }, all(apiIs(0, 1), topicGlob("kdissect-*")), ""},
		{prodFetch, "--client-id *consumer --min-latency 400us", func(s *Selection) { s.ClientID = "*consumer"; s.MinLatency = 400 * time.Microsecond }, all(clientGlob("*consumer"), minLatencyUS(400)), ""},
		{codecs, "--topic *-zstd", func(s *Selection) { s.Topic = "*-zstd" }, topicGlob("*-zstd"), ""},
		{codecs, "--topic kdissect-kgo-codec-[gl]*", func(s *Selection) { s.Topic = "kdissect-kgo-codec-[gl]*" }, topicGlob("kdissect-kgo-codec-[gl]*"), ""},
		{codecs, "--client-id kdissect-codec-[gz]*", func(s *Selection) { s.ClientID = "kdissect-codec-[gz]*" }, clientGlob("kdissect-codec-[gz]*"), ""},
		{"kgo-midstream.pcap", "--api Fetch", func(s *Selection) { s.APIs = []string{"Fetch"} }, apiIs(1), ""},
		{"kgo-midstream.pcap", "--client-id kdissect-stream-*", func(s *Selection) { s.ClientID = "kdissect-stream-*" }, clientGlob("kdissect-stream-*"), ""},
		{"kgo-midstream.pcap", "--topic *", func(s *Selection) { s.Topic = "*" }, topicGlob("*"), ""},
		{"kgo-midstream.pcap", "--min-latency 50ms --requests", func(s *Selection) { s.MinLatency = 50 * time.Millisecond; s.Requests = true }, minLatencyUS(50000), "request"},
		{"sarama-produce-consume.pcap", "--group kdissect-sarama-group", func(s *Selection) { s.Group = "kdissect-sarama-group" }, groupGlob("kdissect-sarama-group"), ""},
		{"kafkago-produce-consume.pcap", "--group kdissect-kafkago-group", func(s *Selection) { s.Group = "kdissect-kafkago-group" }, groupGlob("kdissect-kafkago-group"), ""},
		{"kgo-admin.pcapng", "--topic kdissect-admin*", func(s *Selection) { s.Topic = "kdissect-admin*" }, topicGlob("kdissect-admin*"), ""},
		{"kgo-admin.pcapng", "--group kdissect-admin-group", func(s *Selection) { s.Group = "kdissect-admin-group" }, groupGlob("kdissect-admin-group"), ""},
		{"sarama-produce-consume.pcap", "--errors", func(s *Selection) { s.Errors = true }, hasErrors, ""},
		{"kgo-transactions.pcap", "--topic kdissect-txn", func(s *Selection) { s.Topic = "kdissect-txn" }, topicGlob("kdissect-txn"), ""},
		{"kgo-transactions.pcap", "--client-id *-producer --api 22,24,25,26,28", func(s *Selection) { s.APIs = []string{"22", "24", "25", "26", "28"}; s.ClientID = "*-producer" }, all(clientGlob("*-producer"), apiIs(22, 24, 25, 26, 28)), ""},
		{"kgo-sasl-scram.pcap", "--api SaslAuthenticate --correlation-id 3", func(s *Selection) { s.APIs = []string{"SaslAuthenticate"}; s.CorrelationID = 3 }, all(apiIs(36), corrIs(3)), ""},
		// FindCoordinator with KeyType 1 looks for a transaction coordinator: it names no group.
		{"kgo-transactions.pcap", "--group *", func(s *Selection) { s.Group = "*" }, groupGlob("*"), ""},
	}
	unfiltered := map[string][]*jsonMsg{}
	for _, tt := range tests {
		t.Run(tt.file+" "+tt.name, func(t *testing.T) {
			msgs := unfiltered[tt.file]
			if msgs == nil {
				msgs = dissectJSON(t, pcapPath(tt.file), testRun{})
				unfiltered[tt.file] = msgs
			}
			want := expectSet(pairsOf(t, msgs), tt.pred, tt.side)
			if len(want) >= len(msgs) {
				t.Fatalf("the case selects all %d messages: it cannot tell a filter from none", len(msgs))
			}
			got := dissectJSON(t, pcapPath(tt.file), testRun{sel: tt.sel})
			compareSets(t, got, want)
			t.Logf("%d of %d messages", len(want), len(msgs))
		})
	}
	// Each case above must select something, but for these.
	selectsNothing := map[string]bool{"kgo-group-3brokers.pcap --topic no-such-topic": true, "kgo-transactions.pcap --group *": true}
	for _, tt := range tests {
		msgs := unfiltered[tt.file]
		if msgs == nil {
			continue
		}
		if n := len(expectSet(pairsOf(t, msgs), tt.pred, tt.side)); n == 0 && !selectsNothing[tt.file+" "+tt.name] {
			t.Errorf("%s %s selects nothing: pick a value that the capture has", tt.file, tt.name)
		}
	}
}

// TestFilterEveryTopicAndGroup runs --topic and --group with every topic and group name that the
// test finds in each capture, and --min-latency at each pair's exact latency in one capture.
func TestFilterEveryTopicAndGroup(t *testing.T) {
	for _, file := range kafkaCaptures(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			msgs := dissectJSON(t, file, testRun{})
			pairs := pairsOf(t, msgs)
			var topics, groups []string
			for _, m := range msgs {
				for _, s := range topicsIn(m) {
					if !slices.Contains(topics, s) {
						topics = append(topics, s)
					}
				}
				for _, s := range groupsIn(m) {
					if !slices.Contains(groups, s) && s != "" {
						groups = append(groups, s)
					}
				}
			}
			for _, tp := range topics {
				// The name, escaped, is a glob that matches it only.
				glob := escapeGlob(tp)
				compareSets(t, dissectJSON(t, file, testRun{sel: func(s *Selection) { s.Topic = glob }}), expectSet(pairs, topicGlob(glob), ""))
			}
			for _, g := range groups {
				glob := escapeGlob(g)
				compareSets(t, dissectJSON(t, file, testRun{sel: func(s *Selection) { s.Group = glob }}), expectSet(pairs, groupGlob(glob), ""))
			}
			t.Logf("topics %v, groups %v", topics, groups)
		})
	}
	t.Run("latency boundaries", func(t *testing.T) {
		file := pcapPath("kgo-produce-fetch.pcap")
		msgs := dissectJSON(t, file, testRun{})
		pairs := pairsOf(t, msgs)
		var lats []int64
		for _, m := range msgs {
			if m.LatencyUS != nil {
				lats = append(lats, *m.LatencyUS)
			}
		}
		slices.Sort(lats)
		for _, us := range []int64{lats[0], lats[len(lats)/2], lats[len(lats)-1], lats[len(lats)-1] + 1} {
			got := dissectJSON(t, file, testRun{sel: func(s *Selection) { s.MinLatency = time.Duration(us) * time.Microsecond }})
			compareSets(t, got, expectSet(pairs, minLatencyUS(us), ""))
		}
	})
}

func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// parseTables reads the tables of --stats: for each, its title and its rows (header first),
// each row a list of cells.
func parseTables(t *testing.T, out string) (titles []string, tables [][][]string) {
	t.Helper()
	var last string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "┌"):
			titles = append(titles, last)
			tables = append(tables, nil)
		case strings.HasPrefix(line, "│"):
			if len(tables) == 0 {
				t.Fatalf("table row before a table: %q", line)
			}
			cells := strings.Split(strings.Trim(line, "│"), "│")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			tables[len(tables)-1] = append(tables[len(tables)-1], cells)
		case strings.HasPrefix(line, "├"), strings.HasPrefix(line, "└"):
		case strings.TrimSpace(line) != "":
			last = strings.TrimSpace(line)
		}
	}
	return titles, tables
}

// nearestRank is the smallest value at or above fraction pct/100 of the sorted values.
func nearestRank(sorted []int64, pct int) int64 {
	rank := (pct*len(sorted) + 99) / 100 // ceil(pct% of n)
	return sorted[max(rank, 1)-1]
}

func msText(us int64) string { return fmt.Sprintf("%d.%03d", us/1000, us%1000) }

// expectStats computes the four tables of --stats from JSON messages.
func expectStats(t *testing.T, msgs []*jsonMsg) (apis, errs, conns, topics [][]string) {
	t.Helper()
	// Per API and version.
	type apiRow struct {
		name                                   string
		requests, responses, answered, noReply int
		bytes                                  int
		lats                                   []int64
	}
	perAPI := map[[2]int16]*apiRow{}
	for _, m := range msgs {
		if m.APIKey == nil {
			continue
		}
		k := [2]int16{m.api(), m.version()}
		a := perAPI[k]
		if a == nil {
			a = &apiRow{name: m.APIName}
			perAPI[k] = a
		}
		a.bytes += m.Size
		if m.Kind == "request" {
			a.requests++
			if m.NoResponse {
				a.noReply++
			}
		} else {
			a.responses++
			if m.LatencyUS != nil {
				a.answered++
				a.lats = append(a.lats, *m.LatencyUS)
			}
		}
	}
	keys := make([][2]int16, 0, len(perAPI))
	for k := range perAPI {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int16) int {
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		return int(a[1]) - int(b[1])
	})
	apis = [][]string{{"KEY", "API", "VERSION", "REQUESTS", "RESPONSES", "UNANSWERED", "NO RESPONSE", "BYTES", "P50", "P90", "P99", "MAX"}}
	for _, k := range keys {
		a := perAPI[k]
		lat := []string{"", "", "", ""}
		if len(a.lats) > 0 {
			slices.Sort(a.lats)
			lat = []string{msText(nearestRank(a.lats, 50)), msText(nearestRank(a.lats, 90)), msText(nearestRank(a.lats, 99)), msText(a.lats[len(a.lats)-1])}
		}
		apis = append(apis, append([]string{strconv.Itoa(int(k[0])), a.name, strconv.Itoa(int(k[1])), strconv.Itoa(a.requests),
			strconv.Itoa(a.responses), strconv.Itoa(max(0, a.requests-a.noReply-a.answered)), strconv.Itoa(a.noReply), strconv.Itoa(a.bytes)}, lat...))
	}

	// Per error code, over responses.
	type errRow struct {
		name  string
		count int
		apis  []string
	}
	perCode := map[int64]*errRow{}
	for _, m := range msgs {
		if m.Kind != "response" {
			continue
		}
		codes, names := errorCodesIn(m)
		for _, c := range codes {
			e := perCode[c]
			if e == nil {
				e = &errRow{name: names[c]}
				perCode[c] = e
			}
			e.count++
			if !slices.Contains(e.apis, m.APIName) {
				e.apis = append(e.apis, m.APIName)
			}
		}
	}
	codes := make([]int64, 0, len(perCode))
	for c := range perCode {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	errs = [][]string{{"CODE", "NAME", "COUNT", "APIS"}}
	for _, c := range codes {
		e := perCode[c]
		errs = append(errs, []string{strconv.FormatInt(c, 10), e.name, strconv.Itoa(e.count), strings.Join(e.apis, ", ")})
	}

	// Per connection.
	type connRow struct {
		client, broker, clientID, software string
		messages, bytes                    int
		first, last                        time.Time
	}
	perConn := map[int]*connRow{}
	for _, m := range msgs {
		if m.APIName == "" {
			continue
		}
		tm, err := time.Parse(time.RFC3339Nano, m.Time)
		if err != nil {
			t.Fatal(err)
		}
		c := perConn[m.Stream]
		if c == nil {
			c = &connRow{client: m.Src, broker: m.Dst, first: tm, last: tm}
			if m.Kind == "response" {
				c.client, c.broker = m.Dst, m.Src
			}
			perConn[m.Stream] = c
		}
		c.messages++
		c.bytes += m.Size
		if tm.Before(c.first) {
			c.first = tm
		}
		if tm.After(c.last) {
			c.last = tm
		}
		if m.ClientID != nil && c.clientID == "" && m.Kind == "request" { // --stats reads requests' (responses carry it too)
			c.clientID = *m.ClientID
		}
		if m.api() == 18 && m.Kind == "request" {
			var name, version string
			for _, f := range m.Fields {
				if s, ok := str(f); ok && f.Name == "ClientSoftwareName" {
					name = s
				}
				if s, ok := str(f); ok && f.Name == "ClientSoftwareVersion" {
					version = s
				}
			}
			if name != "" || version != "" {
				c.software = name + " " + version
			}
		}
	}
	streams := make([]int, 0, len(perConn))
	for s := range perConn {
		streams = append(streams, s)
	}
	slices.Sort(streams)
	conns = [][]string{{"STREAM", "CLIENT", "BROKER", "CLIENT ID", "SOFTWARE", "MESSAGES", "BYTES", "FIRST - LAST (UTC)"}}
	for _, s := range streams {
		c := perConn[s]
		conns = append(conns, []string{strconv.Itoa(s), c.client, c.broker, c.clientID, c.software, strconv.Itoa(c.messages),
			strconv.Itoa(c.bytes), c.first.UTC().Format("15:04:05.000") + " - " + c.last.UTC().Format("15:04:05.000")})
	}

	// Per topic: records of Produce requests and Fetch (and ShareFetch) responses.
	type topicRow struct{ produced, producedBytes, fetched, fetchedBytes int }
	perTopic := map[string]*topicRow{}
	for _, m := range msgs {
		produce := m.api() == 0 && m.Kind == "request"
		fetch := (m.api() == 1 || m.api() == 78) && m.Kind == "response"
		if !produce && !fetch {
			continue
		}
		var walk func(fs []*jsonField, topic string)
		walk = func(fs []*jsonField, topic string) {
			for _, f := range fs { // a struct's own topic name or id is the topic of its children
				if s, ok := str(f); ok && (f.Name == "Name" || f.Name == "Topic" || f.Name == "TopicName") {
					topic = s
				}
				if f.Name == "TopicId" && f.Type == "uuid" {
					if id := topicOfID(f); id != "" {
						topic = id
					}
				}
			}
			for _, f := range fs {
				if (f.Type == "records" || f.Type == "compact_records") && len(f.Fields) > 0 {
					if topic == "" {
						t.Errorf("%v: records at offset %d with no topic", m, f.Offset)
					}
					row := perTopic[topic]
					if row == nil {
						row = &topicRow{}
						perTopic[topic] = row
					}
					n := countRecords(f.Fields)
					if produce {
						row.produced += n
						row.producedBytes += f.Size
					} else {
						row.fetched += n
						row.fetchedBytes += f.Size
					}
					continue
				}
				walk(f.Fields, topic)
			}
		}
		walk(m.Fields, "")
	}
	names := make([]string, 0, len(perTopic))
	for n := range perTopic {
		names = append(names, n)
	}
	slices.Sort(names)
	topics = [][]string{{"TOPIC", "PRODUCED RECORDS", "PRODUCED BYTES", "FETCHED RECORDS", "FETCHED BYTES"}}
	for _, n := range names {
		r := perTopic[n]
		topics = append(topics, []string{n, strconv.Itoa(r.produced), strconv.Itoa(r.producedBytes), strconv.Itoa(r.fetched), strconv.Itoa(r.fetchedBytes)})
	}
	return apis, errs, conns, topics
}

// countRecords counts record nodes, and legacy message nodes that are not compressed wrappers.
func countRecords(fs []*jsonField) int {
	n := 0
	for _, f := range fs {
		switch f.Type {
		case "record":
			n++
			continue
		case "message":
			wrapper := false
			walkFields(f.Fields, func(c *jsonField, _ string) { wrapper = wrapper || c.Type == "compressed_records" })
			if !wrapper {
				n++
				continue
			}
		}
		n += countRecords(f.Fields)
	}
	return n
}

// TestStats checks every cell of the four --stats tables against counts made from the JSON
// output, on whole captures and on a filtered one.
func TestStats(t *testing.T) {
	tests := []struct {
		file string
		name string // the flags that make the selection
		sel  func(s *Selection)
		pred pairPred
		side string
	}{
		{"kgo-group-3brokers.pcap", "", nil, anyPair, ""},
		{"kgo-codecs.pcap", "", nil, anyPair, ""},
		{"kgo-transactions.pcap", "", nil, anyPair, ""},
		{"kgo-admin.pcapng", "", nil, anyPair, ""},
		{"kgo-midstream.pcap", "", nil, anyPair, ""},
		{"sarama-codecs.pcap", "", nil, anyPair, ""},
		{"kafkago-produce-consume.pcap", "", nil, anyPair, ""},
		{"kgo-group-3brokers.pcap", "--api Fetch,Heartbeat,JoinGroup", func(s *Selection) { s.APIs = []string{"Fetch", "Heartbeat", "JoinGroup"} }, apiIs(1, 12, 11), ""},
		{"kgo-codecs.pcap", "--topic *-gzip --responses", func(s *Selection) { s.Topic = "*-gzip"; s.Responses = true }, topicGlob("*-gzip"), "response"},
	}
	for _, tt := range tests {
		t.Run(tt.file+" "+tt.name, func(t *testing.T) {
			file := pcapPath(tt.file)
			msgs := dissectJSON(t, file, testRun{})
			if tt.sel != nil {
				want := expectSet(pairsOf(t, msgs), tt.pred, tt.side)
				var sel []*jsonMsg
				for _, m := range msgs {
					if want[m.key()] != nil {
						sel = append(sel, m)
					}
				}
				msgs = sel
			}
			out, errOut, code := testRun{format: "none", stats: true, ports: pcaps.Ports, sel: tt.sel}.dissect(t, file)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			titles, tables := parseTables(t, out)
			wantTitles := []string{"Messages per API and version (latency in ms, over the paired responses)", "Error codes in responses",
				"Connections", "Records per topic (bytes are the records fields on the wire)"}
			// The table of fetch sessions, when a Fetch shown names a session (its rows are
			// checked by TestFetchSessions).
			for _, m := range msgs {
				id, _ := intValue(field(m.Fields, "SessionId"))
				epoch, _ := intValue(field(m.Fields, "SessionEpoch"))
				if m.APIName == "Fetch" && (m.Kind == "response" && id != 0 || m.Kind == "request" && m.version() >= 7 && (id != 0 || epoch != -1)) {
					wantTitles = append(wantTitles, "Fetch sessions (KIP-227; partitions: the session's set after its last request, ? when it opened before the capture or elsewhere)")
					break
				}
			}
			// The answers' tables follow the counts' (cmd/kdissect's TestLatencyTable and
			// TestRatesTable check them).
			for _, a := range analysis.Registered().Tables() {
				answer := a.Name != "fetch_sessions" && !slices.Contains(wantTitles, a.Title)
				if answer && len(titles) > len(wantTitles) && titles[len(wantTitles)] == a.Title {
					wantTitles = append(wantTitles, a.Title)
				}
			}
			if !slices.Equal(titles, wantTitles) {
				t.Fatalf("tables %q, want %q\n%s", titles, wantTitles, out)
			}
			apis, errs, conns, topics := expectStats(t, msgs)
			for i, want := range [][][]string{apis, errs, conns, topics} {
				got := tables[i]
				if len(got) > 0 {
					got[0] = upper(got[0])
				}
				if len(got) != len(want) {
					t.Errorf("%s: %d rows, want %d\n got: %q\nwant: %q", titles[i], len(got), len(want), got, want)
					continue
				}
				for r := range want {
					if !slices.Equal(got[r], want[r]) {
						t.Errorf("%s: row %d\n got: %q\nwant: %q", titles[i], r, got[r], want[r])
					}
				}
			}
			if len(apis) < 2 || len(conns) < 2 {
				t.Errorf("the capture gives too little to count: %d API rows, %d connections", len(apis)-1, len(conns)-1)
			}
		})
	}
}

// TestStatsJSON: with --format json, --stats adds JSON lines ("kind": "stats"), never tables:
// the whole output is JSON lines, and the rows are the tables' rows.
func TestStatsJSON(t *testing.T) {
	file := pcapPath("kgo-produce-fetch.pcap")
	out, errOut, code := testRun{format: "json", stats: true}.dissect(t, file)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	tables, _, _ := testRun{format: "none", stats: true}.dissect(t, file)
	_, rows := parseTables(t, tables)
	perTable := map[string]int{}
	messages := 0
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		switch v["kind"] {
		case "stats":
			perTable[v["table"].(string)]++
		case "request", "response":
			if len(perTable) > 0 {
				t.Fatalf("a message after the statistics: %s", l)
			}
			messages++
		}
	}
	for i, name := range []string{"apis", "errors", "connections", "topics"} {
		if got, want := perTable[name], len(rows[i])-1; got != want {
			t.Errorf("%d %s lines, the table has %d rows", got, name, want)
		}
	}
	if messages == 0 || perTable["apis"] == 0 {
		t.Errorf("%d messages, %v", messages, perTable)
	}
}

func upper(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ToUpper(c)
	}
	return out
}

// TestStatsNumbers pins numbers from the capture's description in pcaps/README.md, so that the
// counting rules of the test and of --stats cannot drift together.
func TestStatsNumbers(t *testing.T) {
	out, errOut, code := testRun{format: "none", stats: true, ports: pcaps.Ports}.dissect(t, pcapPath("kgo-group-3brokers.pcap"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, tables := parseTables(t, out)
	row := func(table int, first, second string) []string {
		for _, r := range tables[table] {
			if r[0] == first && (second == "" || r[1] == second) {
				return r
			}
		}
		t.Fatalf("no row %s %s in table %d", first, second, table)
		return nil
	}
	// Fetch v18 x9, the last one a long poll without response; JoinGroup v9 x2; 12 connections.
	if r := row(0, "1", "Fetch"); r[2] != "18" || r[3] != "9" || r[4] != "8" || r[5] != "1" {
		t.Errorf("Fetch row %q", r)
	}
	if r := row(0, "11", "JoinGroup"); r[3] != "2" || r[4] != "2" || r[5] != "0" {
		t.Errorf("JoinGroup row %q", r)
	}
	if r := row(0, "18", "ApiVersions"); r[3] != "12" || r[4] != "12" {
		t.Errorf("ApiVersions row %q", r)
	}
	if r := row(1, "79", "MEMBER_ID_REQUIRED"); r[2] != "1" || r[3] != "JoinGroup" {
		t.Errorf("error row %q", r)
	}
	if n := len(tables[2]) - 1; n != 12 {
		t.Errorf("%d connections, want 12", n)
	}
	if r := row(3, "kdissect-orders", ""); r[1] != "9" || r[3] != "9" {
		t.Errorf("topic row %q: 9 records produced and 9 fetched", r)
	}
}

// TestTopicNamesForIDs checks the note beside every topic id of Fetch v13+ and Produce v13+:
// the name a Metadata response anywhere in the capture file gave for the id (kdissect learns
// the names of a whole file first), or "unknown" when none did.
func TestTopicNamesForIDs(t *testing.T) {
	for _, tc := range []struct {
		file           string
		known, unknown bool // the capture has ids with known names, ids with unknown names
	}{
		{"kgo-produce-fetch.pcap", true, false},
		{"kgo-group-3brokers.pcap", true, false},
		{"kgo-codecs.pcap", true, false},
		{"kgo-midstream.pcap", false, true},     // starts after the client's Metadata requests
		{"kgo-late-metadata.pcap", true, false}, // a Fetch by id before the Metadata that names it
		{"kgo-fetch-session.pcap", true, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			file := pcapPath(tc.file)
			msgs := dissectJSON(t, file, testRun{})
			names := map[string]string{}
			known, unknown := 0, 0
			var wantNames []string // the notes, in output order, for the diagram
			// The names every Metadata response of the file gives, wherever it is.
			for _, m := range msgs {
				if m.api() == 3 && m.Kind == "response" {
					for _, f := range m.Fields {
						if f.Name != "Topics" {
							continue
						}
						for _, el := range f.Fields {
							var name, id string
							for _, c := range el.Fields {
								if s, ok := str(c); ok && c.Name == "Name" {
									name = s
								}
								if c.Name == "TopicId" {
									id, _ = c.Value.(string)
								}
							}
							if name != "" && id != "" && id != nullTopicID {
								names[id] = name
							}
						}
					}
				}
			}
			for _, m := range msgs {
				byID := (m.api() == 1 && m.version() >= 13) || (m.api() == 0 && m.version() >= 13)
				walkFields(m.Fields, func(f *jsonField, _ string) {
					if f.Name != "TopicId" {
						return
					}
					id, _ := f.Value.(string)
					if id == nullTopicID {
						if f.Note != "" {
							t.Errorf("%v: null topic id with note %q", m, f.Note)
						}
						return
					}
					wantNames = append(wantNames, f.Note)
					if !byID {
						return
					}
					if name, ok := names[id]; ok {
						known++
						if f.Note != "topic "+name {
							t.Errorf("%v: TopicId %s has note %q, want %q", m, id, f.Note, "topic "+name)
						}
					} else {
						unknown++
						if !strings.HasPrefix(f.Note, unknownTopic) {
							t.Errorf("%v: TopicId %s, named by no Metadata response, has note %q", m, id, f.Note)
						}
					}
				})
			}
			t.Logf("%d topic ids with names, %d without", known, unknown)
			if (known > 0) != tc.known || (unknown > 0) != tc.unknown {
				t.Errorf("%d topic ids with names, %d without; want some known: %v, some unknown: %v", known, unknown, tc.known, tc.unknown)
			}

			// The diagram shows the same notes, in the same order.
			out, errOut, code := testRun{ports: pcaps.Ports}.dissect(t, file)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var got []string
			re := regexp.MustCompile(`^0x[0-9a-f]+ +16 uuid +TopicId +(\S+) \(([0-9a-f-]+)\)(?:  \[(.*)\])?$`)
			for _, line := range strings.Split(out, "\n") {
				if !strings.Contains(line, " TopicId ") {
					continue
				}
				mm := re.FindStringSubmatch(line)
				if mm == nil {
					t.Fatalf("diagram line not understood: %q", line)
				}
				if mm[1] != nullTopicID {
					got = append(got, mm[3])
				}
			}
			if !slices.Equal(got, wantNames) {
				t.Errorf("diagram notes:\n got: %q\nwant: %q", got, wantNames)
			}

			// Summary lines of Fetch and Produce name the topics, by name when it is known.
			out, errOut, code = testRun{format: "summary", ports: pcaps.Ports}.dissect(t, file)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, line := range strings.Split(out, "\n") {
				if !strings.Contains(line, " Produce v") && !strings.Contains(line, " Fetch v") || !strings.Contains(line, "topics ") {
					continue
				}
				if tc.known && strings.Contains(line, "topics id:") {
					t.Errorf("summary line names a topic by id though its name is known: %s", line)
				}
				if tc.unknown && !strings.Contains(line, "topics id:") {
					t.Errorf("summary line names a topic by name though the capture does not say it: %s", line)
				}
			}
		})
	}
}

// TestSecretsRedacted checks that no output of kdissect shows a SASL password, a SCRAM client
// proof or a SCRAM server signature unless --show-secrets asks for them, and that the user
// name is shown.
func TestSecretsRedacted(t *testing.T) {
	saslAuthenticate := func(s *Selection) { s.APIs = []string{"SaslAuthenticate"} }
	formats := []struct {
		name string
		run  testRun
		// shows says whether the format prints field values, so that --show-secrets reveals them.
		shows bool
	}{
		{"diagram", testRun{}, true},
		{"diagram -x", testRun{hex: true}, true},
		{"diagram -x --max-bytes 0", testRun{hex: true, noCut: true}, true},
		{"summary", testRun{format: "summary"}, false},
		{"json", testRun{format: "json"}, true},
		{"stats", testRun{stats: true}, true},
		{"stats none", testRun{stats: true, format: "none"}, false},
		{"summary stats filtered", testRun{format: "summary", stats: true, sel: saslAuthenticate}, false},
		{"json filtered", testRun{format: "json", sel: saslAuthenticate}, true},
	}
	for _, tc := range []struct {
		file string
		user string
		// secrets gives the secret values from the --show-secrets JSON output.
		secrets func(t *testing.T, msgs []*jsonMsg) []string
	}{
		{"kgo-sasl-plain.pcap", "alice", func(t *testing.T, msgs []*jsonMsg) []string {
			got := saslPieces(msgs, "password")
			if len(got) == 0 || slices.ContainsFunc(got, func(p string) bool { return p != "alice-secret-pw" }) {
				t.Fatalf("--show-secrets passwords %q, want alice-secret-pw", got)
			}
			return []string{"alice-secret-pw"}
		}},
		{"kgo-sasl-scram.pcap", "bob", func(t *testing.T, msgs []*jsonMsg) []string {
			proofs, sigs := saslPieces(msgs, "proof"), saslPieces(msgs, "server signature")
			if len(proofs) == 0 || len(proofs) != len(sigs) {
				t.Fatalf("--show-secrets gives %d proofs and %d server signatures", len(proofs), len(sigs))
			}
			return append(proofs, sigs...)
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			file := pcapPath(tc.file)
			secrets := tc.secrets(t, dissectJSON(t, file, testRun{showSecrets: true}))
			for _, s := range secrets {
				if len(s) < 12 {
					t.Fatalf("secret %q is too short to search for", s)
				}
			}
			if users := saslPieces(dissectJSON(t, file, testRun{}), "user"); len(users) == 0 || slices.ContainsFunc(users, func(u string) bool { return u != tc.user }) {
				t.Errorf("user names %q, want %q", users, tc.user)
			}
			for _, f := range formats {
				for _, show := range []bool{false, true} {
					r := f.run
					r.ports, r.showSecrets = pcaps.Ports, show
					out, errOut, code := r.dissect(t, file)
					if code != 0 {
						t.Fatalf("%s (show secrets %v): exit %d: %s", f.name, show, code, errOut)
					}
					for _, s := range secrets {
						leak := leaks(out+errOut, s)
						switch {
						case !show && leak != "":
							t.Errorf("%s: secret %q shown (%s)", f.name, s, leak)
						case show && f.shows && leak == "":
							t.Errorf("%s --show-secrets: secret %q not shown", f.name, s)
						}
					}
					if f.shows && !strings.Contains(out, tc.user) {
						t.Errorf("%s: user name %q not shown", f.name, tc.user)
					}
					if f.shows && !show && !strings.Contains(out, "<redacted>") {
						t.Errorf("%s: no <redacted> value", f.name)
					}
				}
			}
		})
	}
}

// saslPieces lists the values of the decoded SASL token parts with this name.
func saslPieces(msgs []*jsonMsg, name string) []string {
	var out []string
	for _, m := range msgs {
		walkFields(m.Fields, func(f *jsonField, _ string) {
			if s, ok := f.Value.(string); ok && f.Type == "sasl" && f.Name == name {
				out = append(out, s)
			}
		})
	}
	return out
}

var dumpLine = regexp.MustCompile(`^[0-9a-f]{4,}  ((?:[0-9a-f]{2} ?)+)`)

// leaks says how s shows in out: as text, as hex (the first 8 bytes are enough: the bytes column
// of the diagram cuts values), or in the bytes of the hex dumps; "" when it does not.
func leaks(out, s string) string {
	if strings.Contains(out, s) {
		return "as text"
	}
	if strings.Contains(out, hex.EncodeToString([]byte(s[:8]))) {
		return "as hex"
	}
	var dump []byte
	for _, line := range strings.Split(out, "\n") {
		m := dumpLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(m[1]), " ", ""))
		if err == nil {
			dump = append(dump, b...)
		}
	}
	if strings.Contains(string(dump), s) {
		return "in a hex dump"
	}
	return ""
}

// withErrorCodes writes a copy of a capture in which every *ErrorCode field of the chosen
// responses holds code. Each chosen response must lie in one packet; it is found there by its
// size prefix and correlation id. Error codes are fixed-size fields, so nothing else moves.
func withErrorCodes(t *testing.T, src string, msgs []*jsonMsg, code int16, chosen func(*jsonMsg) bool) (string, int) {
	t.Helper()
	patches := map[int][]*jsonMsg{}
	n := 0
	for _, m := range msgs {
		if m.Kind != "response" || !chosen(m) {
			continue
		}
		if m.FirstFrame != m.Frame {
			t.Fatalf("%v spans packets %d-%d", m, m.FirstFrame, m.Frame)
		}
		patches[m.Frame] = append(patches[m.Frame], m)
	}
	r := openPcap(t, src)
	var out bytes.Buffer
	w := pcapgo.NewWriterNanos(&out)
	if err := w.WriteFileHeader(r.Snaplen(), r.LinkType()); err != nil {
		t.Fatal(err)
	}
	for num := 1; ; num++ {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data = append([]byte(nil), data...)
		for _, m := range patches[num] {
			head := binary.BigEndian.AppendUint32(nil, uint32(m.Size-4))
			head = binary.BigEndian.AppendUint32(head, uint32(*m.CorrelationID))
			at := bytes.Index(data, head)
			if at < 0 || bytes.Count(data, head) != 1 {
				t.Fatalf("%v: not found once in packet %d", m, num)
			}
			walkFields(m.Fields, func(fl *jsonField, _ string) {
				if fl.Type == "int16" && strings.HasSuffix(fl.Name, "ErrorCode") {
					binary.BigEndian.PutUint16(data[at+fl.Offset:], uint16(code))
					n++
				}
			})
		}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	name := filepath.Join(t.TempDir(), "errors.pcap")
	if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name, n
}

// TestErrorsFilterAndStats puts error codes at every level of real responses (top level, topic,
// partition) and checks --errors and the error table of --stats on them.
func TestErrorsFilterAndStats(t *testing.T) {
	src := pcapPath("kgo-produce-fetch.pcap")
	msgs := dissectJSON(t, src, testRun{})
	chosen := func(m *jsonMsg) bool {
		// Produce (partition level), Metadata (topic and top level), the first Fetch (all levels).
		return m.api() == 0 || m.api() == 3 && m.key().Corr == 1 && m.Stream == 2 || m.api() == 1 && m.Size > 100
	}
	file, n := withErrorCodes(t, src, msgs, 6, chosen) // NOT_LEADER_OR_FOLLOWER
	if n < 5 {
		t.Fatalf("only %d error codes patched", n)
	}
	patched := dissectJSON(t, file, testRun{})
	pairs := pairsOf(t, patched)
	want := expectSet(pairs, hasErrors, "")
	responses := 0
	for _, m := range patched {
		if m.Kind == "response" && chosen(m) {
			responses++
			if codes, names := errorCodesIn(m); !slices.Equal(codes, []int64{6}) || names[6] != "NOT_LEADER_OR_FOLLOWER" {
				t.Errorf("%v: error codes %v %v after patching", m, codes, names)
			}
		}
	}
	if len(want) != 2*responses || responses < 4 {
		t.Fatalf("%d messages with errors expected from %d patched responses", len(want), responses)
	}
	compareSets(t, dissectJSON(t, file, testRun{sel: func(s *Selection) { s.Errors = true }}), want)
	compareSets(t, dissectJSON(t, file, testRun{sel: func(s *Selection) { s.Errors = true; s.APIs = []string{"Produce"}; s.Responses = true }}),
		expectSet(pairs, all(hasErrors, apiIs(0)), "response"))

	out, errOut, code := testRun{format: "none", stats: true, ports: pcaps.Ports}.dissect(t, file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, tables := parseTables(t, out)
	_, errs, _, _ := expectStats(t, patched)
	if got := tables[1][1:]; !slices.EqualFunc(got, errs[1:], slices.Equal) || len(got) != 1 || got[0][2] != strconv.Itoa(responses) {
		t.Errorf("error table %q, want %q (%d responses)", got, errs[1:], responses)
	}
	t.Logf("error table %q", tables[1][1:])
}

// saslAuthenticateV2 builds a SaslAuthenticate v2 request frame that carries token.
func saslAuthenticateV2(token []byte) []byte {
	b := []byte{0, 0, 0, 0, 0, 36, 0, 2, 0, 0, 0, 7} // size (set below), key 36, version 2, correlation id 7
	b = append(b, 0, 4)
	b = append(b, "test"...)
	b = append(b, 0) // header tags
	b = binary.AppendUvarint(b, uint64(len(token)+1))
	b = append(b, token...)
	b = append(b, 0) // body tags
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// TestSecretsUnusualPasswords decodes PLAIN tokens whose passwords are not printable UTF-8 (a
// Latin-1 password, control characters) and SCRAM and OAUTHBEARER tokens: the secret must not
// show in any format, as text, as hex or in a hex dump.
func TestSecretsUnusualPasswords(t *testing.T) {
	for _, tc := range []struct {
		name, token, user, secret string
	}{
		{"plain latin-1", "\x00carol\x00p\xe4ssw\xf6rd-latin1", "carol", "p\xe4ssw\xf6rd-latin1"},
		{"plain control", "\x00dave\x00\x1b[escape]\x07secret", "dave", "\x1b[escape]\x07secret"},
		{"plain authzid", "admin\x00erin\x00erin-password-1", "erin", "erin-password-1"},
		{"scram final", "c=biws,r=abcdefghijklmnop,p=dGhpcy1pcy1hLXByb29mLXZhbHVl", "", "dGhpcy1pcy1hLXByb29mLXZhbHVl"},
		{"oauthbearer", "n,a=frank,\x01auth=Bearer eyJhbGciOiJub25lIn0.e30.\x01\x01", "frank", "eyJhbGciOiJub25lIn0.e30."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frame := saslAuthenticateV2([]byte(tc.token))
			for _, r := range []decodeRun{{}, {hex: true}, {format: "json"}, {format: "summary"}} {
				for _, show := range []bool{false, true} {
					r.showSecrets = show
					out, errOut, err := r.decode(t, frame)
					if err != nil {
						t.Fatalf("%+v: %v: %s", r, err, errOut)
					}
					leak := leaks(out+errOut, tc.secret)
					if !show && leak != "" {
						t.Errorf("%+v: secret shown %s:\n%s", r, leak, out)
					}
					if show && r.format != "summary" && leak == "" {
						t.Errorf("%+v: secret not shown:\n%s", r, out)
					}
					if tc.user != "" && r.format != "summary" && !strings.Contains(out, tc.user) {
						t.Errorf("%+v: user %q not shown:\n%s", r, tc.user, out)
					}
				}
			}
		})
	}
}
