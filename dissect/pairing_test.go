package dissect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/render"
)

// newCodec returns the codec of the built-in definitions, decoding every record.
func newCodec(t testing.TB) *codec.Codec {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(set)
	c.Records = records.New(records.Options{MaxDecompressed: 1 << 20})
	return c
}

// An ApiVersions v0 request with correlation id 5 and client id "", and its response: error
// 0, no API keys.
var (
	apiVersionsRequest  = []byte{0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 5, 0, 0}
	apiVersionsResponse = []byte{0, 0, 0, 10, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0}
)

// TestFilterReusedCorrelationID: a client that sends a request again with the correlation id of
// one still unanswered; the filter, which holds requests until their response, must show the
// first one too (it was lost before).
func TestFilterReusedCorrelationID(t *testing.T) {
	c := newCodec(t)
	var out bytes.Buffer
	r := render.NewJSON(&out)
	sel := SelectAll()
	sel.APIs = []string{"ApiVersions"}
	p, err := New(Config{Codec: c, Out: r, Plan: planOf(t, render.Needs{Tree: true, Bytes: true, Notes: true}, sel), Select: sel})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Stream(netip.MustParseAddrPort("10.0.0.1:50000"), netip.MustParseAddrPort("10.0.0.2:9092"))
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, f := range []struct {
		dir  reassembly.Dir
		data []byte
	}{{reassembly.ToServer, apiVersionsRequest}, {reassembly.ToServer, apiVersionsRequest}, {reassembly.ToClient, apiVersionsResponse}} {
		st.Write(f.dir, slices.Clone(f.data), i+1, start.Add(time.Duration(i)*time.Millisecond))
	}
	st.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range jsonLines(t, out.Bytes()) {
		s := fmt.Sprintf("#%d %s", m.Frame, m.Kind)
		if m.RequestFrame != nil {
			s += fmt.Sprintf(" answers #%d", *m.RequestFrame)
		}
		got = append(got, s)
	}
	if want := []string{"#1 request", "#2 request", "#3 response answers #2"}; !slices.Equal(got, want) {
		t.Errorf("shown %q, want %q", got, want)
	}
}

// jsonLine is what the tests read of a JSON line.
type jsonLine struct {
	Frame        int    `json:"frame"`
	FirstFrame   int    `json:"first_frame"`
	Stream       int    `json:"stream"`
	Kind         string `json:"kind"`
	Src          string `json:"src"`
	APIName      string `json:"api_name"`
	RequestFrame *int   `json:"request_frame"`
	LatencyUS    *int64 `json:"latency_us"`
	Text         string `json:"text"`
}

func jsonLines(t *testing.T, b []byte) []jsonLine {
	t.Helper()
	var ls []jsonLine
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var j jsonLine
		if err := json.Unmarshal(l, &j); err != nil {
			t.Fatalf("bad JSON line %q: %v", l, err)
		}
		ls = append(ls, j)
	}
	return ls
}
