package filter

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/model"
)

// encodeRequest encodes a request frame with kmsg's body and a header built here (v1, or v2
// for flexible versions).
func encodeRequest(r kmsg.Request, version int16, corr int32, clientID string) []byte {
	r.SetVersion(version)
	h := binary.BigEndian.AppendUint16(nil, uint16(r.Key()))
	h = binary.BigEndian.AppendUint16(h, uint16(version))
	h = binary.BigEndian.AppendUint32(h, uint32(corr))
	h = binary.BigEndian.AppendUint16(h, uint16(len(clientID)))
	h = append(h, clientID...)
	if r.IsFlexible() {
		h = append(h, 0)
	}
	body := r.AppendTo(nil)
	return append(append(binary.BigEndian.AppendUint32(nil, uint32(len(h)+len(body))), h...), body...)
}

// encodeResponse encodes a response frame (header v1 for flexible versions, v0 otherwise).
func encodeResponse(r kmsg.Response, version int16, corr int32) []byte {
	r.SetVersion(version)
	h := binary.BigEndian.AppendUint32(nil, uint32(corr))
	if r.IsFlexible() {
		h = append(h, 0)
	}
	body := r.AppendTo(nil)
	return append(append(binary.BigEndian.AppendUint32(nil, uint32(len(h)+len(body))), h...), body...)
}

// testPair decodes a request and its response as the pipeline would give them: with facts,
// the response 3 ms after the request.
type testPair struct{ req, resp *model.Entry }

func newCodec(t testing.TB) *codec.Codec {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return codec.New(set)
}

func entry(m *codec.Message, frame int, at time.Time) *model.Entry {
	facts := m.Facts()
	return &model.Entry{Frame: frame, FirstFrame: frame, Time: at, Stream: 3, Src: "10.0.0.5:53422", Dst: "10.0.0.9:9092",
		Request: !m.Response, Msg: m, Facts: &facts}
}

func pair(t testing.TB, c *codec.Codec, req kmsg.Request, resp kmsg.Response, version int16) testPair {
	t.Helper()
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	rm := c.DecodeRequest(encodeRequest(req, version, 7, "kdissect-test"))
	if len(rm.Warnings) > 0 {
		t.Fatalf("request: %v", rm.Warnings)
	}
	p := testPair{req: entry(rm, 10, t0)}
	if resp != nil {
		sm := c.DecodeResponse(encodeResponse(resp, version, 7), req.Key(), version)
		if len(sm.Warnings) > 0 {
			t.Fatalf("response: %v", sm.Warnings)
		}
		p.resp = entry(sm, 12, t0.Add(3*time.Millisecond))
		p.resp.Src, p.resp.Dst = p.req.Dst, p.req.Src
		p.resp.RequestFrame, p.resp.Latency = 10, 3*time.Millisecond
	}
	return p
}

func produce(acks int16, topic string) (kmsg.Request, kmsg.Response) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = acks
	req.TimeoutMillis = 1000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = 2
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := kmsg.NewPtrProduceResponse()
	st := kmsg.NewProduceResponseTopic()
	st.Topic = topic
	sp := kmsg.NewProduceResponseTopicPartition()
	sp.Partition = 2
	sp.ErrorCode = 6 // NOT_LEADER_OR_FOLLOWER
	st.Partitions = append(st.Partitions, sp)
	resp.Topics = append(resp.Topics, st)
	return req, resp
}

func fetch(hw, logStart int64) (kmsg.Request, kmsg.Response) {
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = 500
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "orders"
	rt.Partitions = append(rt.Partitions, kmsg.NewFetchRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp := kmsg.NewPtrFetchResponse()
	st := kmsg.NewFetchResponseTopic()
	st.Topic = "orders"
	for i := range 3 {
		sp := kmsg.NewFetchResponseTopicPartition()
		sp.Partition = int32(i)
		sp.HighWatermark, sp.LogStartOffset = 100, 10
		if i == 2 {
			sp.HighWatermark, sp.LogStartOffset = hw, logStart
		}
		st.Partitions = append(st.Partitions, sp)
	}
	resp.Topics = append(resp.Topics, st)
	return req, resp
}

func joinGroup(sessionMs int32) (kmsg.Request, kmsg.Response) {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group = "billing"
	req.SessionTimeoutMillis = sessionMs
	req.RebalanceTimeoutMillis = 60000
	req.ProtocolType = "consumer"
	return req, kmsg.NewPtrJoinGroupResponse()
}

func TestMatch(t *testing.T) {
	c := newCodec(t)
	acks0, acks0Resp := produce(0, "orders")
	acksAll, acksAllResp := produce(-1, "payments")
	fetchBad, fetchBadResp := fetch(5, 10)
	fetchOK, fetchOKResp := fetch(50, 10)
	shortJoin, shortJoinResp := joinGroup(6000)
	longJoin, longJoinResp := joinGroup(45000)
	pairs := map[string]testPair{
		"acks0":     pair(t, c, acks0, acks0Resp, 9),
		"acksAll":   pair(t, c, acksAll, acksAllResp, 9),
		"fetchBad":  pair(t, c, fetchBad, fetchBadResp, 11),
		"fetchOK":   pair(t, c, fetchOK, fetchOKResp, 11),
		"shortJoin": pair(t, c, shortJoin, shortJoinResp, 5),
		"longJoin":  pair(t, c, longJoin, longJoinResp, 5),
		// A request whose response was not captured, and a response whose request was not.
		"joinAlone": pair(t, c, shortJoin, nil, 5),
		"respAlone": {resp: pair(t, c, shortJoin, shortJoinResp, 5).resp},
	}
	pairs["respAlone"].resp.RequestFrame = 0
	for _, tc := range []struct {
		expr string
		want []string // the pairs that match, sorted
	}{
		// The examples, as written.
		{`api == "Fetch" && latency_ms > 1`, []string{"fetchBad", "fetchOK"}},
		{`"orders" in topics`, []string{"acks0", "fetchBad", "fetchOK"}},
		{`api == "Produce" && req.Acks == 0`, []string{"acks0"}},
		{`api == "JoinGroup" && req.SessionTimeoutMs < 10000`, []string{"joinAlone", "shortJoin"}},
		{`len(errors) > 0`, []string{"acks0", "acksAll"}},
		// Into arrays.
		{`api == "Fetch" && any(resp.Responses, any(.Partitions, .HighWatermark < .LogStartOffset))`, []string{"fetchBad"}},
		{`any(req.Topics, .Partitions[0].PartitionIndex == 2) || any(req.TopicData, .Name == "payments")`, []string{"acksAll"}},
		// The JSON's names, and the names of one message.
		{`api_name == "Produce" && api_key == 0 && api_version == 9 && correlation_id == 7`, []string{"acks0", "acksAll"}},
		{`latency_us == 3000 && api_key == 0`, []string{"acks0", "acksAll"}},
		{`kind == "response" && request_frame == 0`, []string{"respAlone"}},
		{`frame == 12 && src == "10.0.0.9:9092" && key == 1`, []string{"fetchBad", "fetchOK"}},
		{`first_frame == 10 && dst == "10.0.0.9:9092" && stream == 3 && version == 5 && corr == 7 && size > 40`, []string{"joinAlone", "longJoin", "shortJoin"}},
		{`client_id == "kdissect-test" && "billing" in groups && latency_ms == nil`, []string{"joinAlone"}},
		{`time > date("2026-11-29T10:00:00.002Z") && api == "Fetch"`, []string{"fetchBad", "fetchOK"}},
		{`"NOT_LEADER_OR_FOLLOWER" in errors && "payments" in topics`, []string{"acksAll"}},
		{`len(warnings) > 0 || no_response`, nil},
		// Missing fields and sides are absent: comparisons with them are false, lists empty.
		{`resp.ErrorCode == 0 && req.SessionTimeoutMs > 40000`, []string{"longJoin"}},
		{`len(resp.Responses[0].Partitions) == 3`, []string{"fetchBad", "fetchOK"}},
		{`"x" in req.NoSuchField || req.NoSuchField > 3`, nil},
	} {
		f, err := Compile(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		var got []string
		for _, name := range sortedKeys(pairs) {
			p := pairs[name]
			ok, err := f.Match(p.req, p.resp)
			if err != nil {
				t.Errorf("%s on %s: %v", tc.expr, name, err)
			}
			if ok {
				got = append(got, name)
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: matched %v, want %v", tc.expr, got, tc.want)
		}
	}
}

func sortedKeys(m map[string]testPair) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{`api ==`, "unexpected token EOF (1:6)"},
		{`latecy_ms > 1`, "unknown name latecy_ms (1:1)"},
		{`api > 3`, "mismatched types string and int) (1:5)"},
		{`size`, "expected bool, but got int"},
		{`req.Acks == 0 &&`, "unexpected token EOF"},
	} {
		_, err := Compile(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one that says %q", tc.expr, err, tc.want)
		}
	}
}

// ErrorAt gives the position the message shows, and the character there.
func TestErrorAt(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want Position
		at   string
	}{
		{`api ==`, Position{1, 6, 5}, "="},
		{`api == "Fetch" &&& x`, Position{1, 18, 17}, "&"},
		{`latecy_ms > 1`, Position{1, 1, 0}, "l"},
		{"api == \"Fetch\" &&\n  versio > 3", Position{2, 3, 20}, "v"},
		{`"é" in topics && fooé`, Position{1, 18, 17}, "f"},
	} {
		_, err := Compile(tc.expr)
		pos, msg, ok := ErrorAt(err)
		if !ok || pos != tc.want || msg == "" || strings.Contains(msg, "|") {
			t.Errorf("%q: ErrorAt(%v) = %+v, %q, %v; want %+v", tc.expr, err, pos, msg, ok, tc.want)
			continue
		}
		if got := string([]rune(tc.expr + " ")[pos.Offset:][:1]); tc.at != "" && got != tc.at {
			t.Errorf("%q: offset %d is at %q, want %q", tc.expr, pos.Offset, got, tc.at)
		}
	}
	if _, _, ok := ErrorAt(errors.New("not expr's")); ok {
		t.Error("an error without a position has one")
	}
}

// A failure at run time (a list compared with a number) does not match, and says why.
func TestRunError(t *testing.T) {
	c := newCodec(t)
	req, resp := fetch(5, 10)
	p := pair(t, c, req, resp, 11)
	f, err := Compile(`resp.Responses > 3`)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := f.Match(p.req, p.resp)
	if ok || err == nil || !strings.Contains(err.Error(), "frame 10") {
		t.Errorf("match %v, error %v: want no match and an error naming frame 10", ok, err)
	}
}

// Only expressions that name req or resp need the bodies, and a body is built once per pair,
// only when the expression reaches it.
func TestLazyBodies(t *testing.T) {
	for expr, want := range map[string]bool{
		`api == "Fetch"`:                       false,
		`"orders" in topics && latency_ms > 1`: false,
		`api == "Produce" && req.Acks == 0`:    true,
		`any(resp.Responses, true)`:            true,
	} {
		f, err := Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		if f.ReadsBodies() != want {
			t.Errorf("%s: ReadsBodies %v, want %v", expr, f.ReadsBodies(), want)
		}
	}
	c := newCodec(t)
	req, resp := produce(0, "orders")
	p := pair(t, c, req, resp, 9)
	f, err := Compile(`api == "Fetch" && req.Acks == 0`)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := f.Match(p.req, p.resp); ok || err != nil {
		t.Fatalf("match %v, %v", ok, err)
	}
	if f.env.built&builtReq != 0 {
		t.Error("the request's body was built for an expression that did not reach it")
	}
	f, _ = Compile(`api == "Produce" && req.Acks == 1`)
	f.Match(p.req, p.resp)
	if f.env.built&builtReq == 0 || f.env.reqBody["Acks"] != 0 {
		t.Errorf("body not built, or Acks %v", f.env.reqBody["Acks"])
	}
}

func TestBody(t *testing.T) {
	c := newCodec(t)
	req, resp := fetch(5, 10)
	p := pair(t, c, req, resp, 12) // flexible: tagged fields
	b := bodyOf(p.resp)
	parts := b["Responses"].([]any)[0].(map[string]any)["Partitions"].([]any)
	if len(parts) != 3 {
		t.Fatalf("partitions %v", parts)
	}
	last := parts[2].(map[string]any)
	if last["HighWatermark"] != 5 || last["LogStartOffset"] != 10 || last["PartitionIndex"] != 2 {
		t.Errorf("partition %v", last)
	}
	if _, ok := last["_tagged_fields"]; ok {
		t.Error("the tagged section shows as a field")
	}
	if got := bodyOf(nil); len(got) != 0 {
		t.Errorf("body of nothing: %v", got)
	}
}

// Every name an expression may use is listed in Vars (and so in docs/filters.md), and every name
// listed can be used.
func TestVarsListed(t *testing.T) {
	listed := map[string]bool{}
	for _, v := range Vars() {
		for _, n := range strings.Split(v.Names, ", ") {
			listed[n] = true
			if _, err := Compile(n + " == " + n); err != nil {
				t.Errorf("%s: %v", n, err)
			}
		}
	}
	env := reflect.TypeFor[env]()
	for i := range env.NumField() {
		if tag := env.Field(i).Tag.Get("expr"); tag != "" && !listed[tag] {
			t.Errorf("%s is not listed in Vars", tag)
		}
	}
	for name := range lazy {
		if !listed[name] {
			t.Errorf("%s is not listed in Vars", name)
		}
	}
}

// TestVarsInDocs: the table of names of docs/filters.md is Vars, in order, names and values.
func TestVarsInDocs(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "docs", "filters.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(page), "| name | value |\n| --- | --- |\n")
	table, _, _ = strings.Cut(table, "\n\n")
	if !ok {
		t.Fatal("docs/filters.md has no table of names")
	}
	var want []string
	for _, v := range Vars() {
		want = append(want, "| `"+strings.ReplaceAll(v.Names, ", ", "`, `")+"` | "+v.About+" |")
	}
	if got := strings.Split(strings.TrimSpace(table), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/filters.md's table of names:\n%s\nVars, as rows of that table:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
