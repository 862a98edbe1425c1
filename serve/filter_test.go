package serve_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/filter"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
	"github.com/kdissect/kdissect/serve"
)

// exprs are display filters asked of kgo-filters.pcap: each matches some of its messages and
// not all (checked), and they reach topics, req and resp fields, errors, per-message names and
// a latency.
var exprs = []string{
	`"payments" in topics`,
	`api == "JoinGroup" && req.SessionTimeoutMs < 10000`,
	`api == "Metadata" && any(resp.Topics, .ErrorCode != 0)`,
	`"UNKNOWN_TOPIC_OR_PARTITION" in errors`,
	`"MEMBER_ID_REQUIRED" in errors || (kind == "response" && size > 1000)`,
	`api == "Produce" && no_response`,
	`latency_ms > 0.1`,
}

// msgKey names a message across outputs: its packet, direction, connection and correlation id.
type msgKey struct {
	Frame  int    `json:"frame"`
	Kind   string `json:"kind"`
	Stream int    `json:"stream"`
	Corr   int    `json:"correlation_id"`
}

func (k msgKey) String() string {
	return fmt.Sprintf("#%d %s s%d c%d", k.Frame, k.Kind, k.Stream, k.Corr)
}

// displayFiltered is what "kdissect -Y EXPR --format json" shows of a capture: its messages'
// keys, sorted.
func displayFiltered(t testing.TB, capture, expr string) []string {
	t.Helper()
	f, _ := render.LookupFormat("json")
	var b bytes.Buffer
	sel := dissect.SelectAll()
	sel.Expr = expr
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: sel})
	if err != nil {
		t.Fatal(err)
	}
	p, err := dissect.New(dissect.Config{Codec: htmlCodec(t), Out: f.New(&b, render.Options{}), Plan: plan, Select: sel, Detect: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.File(filepath.Join("..", "pcaps", capture)); err != nil {
		t.Log(err)
	}
	p.Close()
	var keys []string
	for _, k := range jsonLines[msgKey](t, b.Bytes()) {
		keys = append(keys, k.String())
	}
	slices.Sort(keys)
	return keys
}

// allKeys are the keys of a capture's messages in the page's order.
func allKeys(t testing.TB, capture string) []string {
	var b bytes.Buffer
	f, _ := render.LookupFormat("json")
	feed(t, capture, f.New(&b, render.Options{}), "json")
	var keys []string
	for _, k := range jsonLines[msgKey](t, b.Bytes()) {
		keys = append(keys, k.String())
	}
	return keys
}

type filterAnswer struct {
	Match    []int  `json:"match"`
	Messages int    `json:"messages"`
	Warning  string `json:"warning"`
	Error    string `json:"error"`
	Message  string `json:"message"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Offset   int    `json:"offset"`
}

func askFilter(t *testing.T, method, u string, body []byte) (filterAnswer, int) {
	t.Helper()
	req, _ := http.NewRequest(method, u, bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a filterAnswer
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &a); err != nil {
		a.Error = string(b)
	}
	return a, resp.StatusCode
}

// TestFilter: /filter answers, of a served capture and of an uploaded one, exactly the
// messages -Y shows of it.
func TestFilter(t *testing.T) {
	const capture = "kgo-filters.pcap"
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t)}, false)
	feed(t, capture, srv.Renderer(), "html")
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	all := allKeys(t, capture)
	data, err := os.ReadFile(filepath.Join("..", "pcaps", capture))
	if err != nil {
		t.Fatal(err)
	}
	for _, expr := range exprs {
		want := displayFiltered(t, capture, expr)
		if len(want) == 0 || len(want) == len(all) {
			t.Fatalf("%s: -Y shows %d of %d messages: the expression tests nothing", expr, len(want), len(all))
		}
		for _, method := range []string{"GET", "POST"} {
			a, status := askFilter(t, method, ts.URL+"/filter?name="+capture+"&y="+url.QueryEscape(expr), data)
			if status != 200 || a.Messages != len(all) {
				t.Fatalf("%s %s: status %d, %d messages (want %d): %s", method, expr, status, a.Messages, len(all), a.Error)
			}
			var got []string
			for _, i := range a.Match {
				got = append(got, all[i])
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: the server matches\n%v\n-Y shows\n%v", method, expr, got, want)
			}
		}
	}
	// No expression: everything.
	if a, _ := askFilter(t, "GET", ts.URL+"/filter?y=", nil); len(a.Match) != len(all) {
		t.Errorf("no expression matches %d of %d", len(a.Match), len(all))
	}
	// A failure at run time is said, as -Y says it.
	if a, status := askFilter(t, "GET", ts.URL+"/filter?y="+url.QueryEscape(`api == "Metadata" && resp.Topics > 3`), nil); status != 200 || !strings.Contains(a.Warning, "frame ") {
		t.Errorf("a filter failing at run time: status %d, warning %q", status, a.Warning)
	}
}

// TestFilterRefused: an expression that does not compile is answered with -Y's message and its
// position; one too long, or a request without the token, is refused.
func TestFilterRefused(t *testing.T) {
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), Token: "s3cret"}, false)
	feed(t, "kgo-produce-fetch.pcap", srv.Renderer(), "html")
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for _, expr := range []string{`api == "Fetch" &&& x`, `latecy_ms > 1`, "api == \"Fetch\" &&\n  versio > 3", `api ==`} {
		_, cerr := filter.Compile(expr)
		pos, msg, ok := filter.ErrorAt(cerr)
		if !ok {
			t.Fatalf("%q: no position in %v", expr, cerr)
		}
		a, status := askFilter(t, "GET", ts.URL+"/filter?token=s3cret&y="+url.QueryEscape(expr), nil)
		if status != 400 || a.Error != cerr.Error() || a.Message != msg || a.Line != pos.Line || a.Column != pos.Column || a.Offset != pos.Offset {
			t.Errorf("%q: status %d, %+v; want 400 with %q at %+v", expr, status, a, cerr, pos)
		}
		// Only compiled: the same answer.
		if b, status := askFilter(t, "GET", ts.URL+"/filter?check=1&token=s3cret&y="+url.QueryEscape(expr), nil); status != 400 || !reflect.DeepEqual(b, a) {
			t.Errorf("%q checked: status %d, %+v", expr, status, b)
		}
	}
	long := `api == "` + strings.Repeat("x", serve.MaxExpr) + `"`
	if a, status := askFilter(t, "GET", ts.URL+"/filter?token=s3cret&y="+url.QueryEscape(long), nil); status != 400 ||
		!strings.Contains(a.Error, fmt.Sprintf("is %d bytes long; the page takes at most %d", len(long), serve.MaxExpr)) {
		t.Errorf("a long expression: status %d, %q", status, a.Error)
	}
	for _, u := range []string{"/filter?y=api%3D%3D%22Fetch%22", "/filter?token=x&y=api%3D%3D%22Fetch%22", "/events?y=api%3D%3D%22Fetch%22"} {
		if a, status := askFilter(t, "GET", ts.URL+u, nil); status != 401 || !strings.Contains(a.Error, "token") {
			t.Errorf("%s: status %d, %q", u, status, a.Error)
		}
	}
	if a, status := askFilter(t, "GET", ts.URL+"/filter?token=s3cret&y=api%3D%3D%22Fetch%22", nil); status != 200 || len(a.Match) == 0 {
		t.Errorf("with the token: status %d, %+v", status, a)
	}
	// A body that is no capture is said to be none, as /upload says it.
	if a, status := askFilter(t, "POST", ts.URL+"/filter?token=s3cret&name=notes.txt&y=api%3D%3D%22Fetch%22", []byte("garbage, not a capture")); status != 422 || !strings.Contains(a.Error, "notes.txt: not a pcap or pcapng file") {
		t.Errorf("POST /filter of a text: status %d, %+v", status, a)
	}
	// Uploads off: no capture may be sent to be filtered either.
	srv = serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), MaxUpload: -1}, false)
	ts2 := httptest.NewServer(srv.Handler())
	defer ts2.Close()
	if _, status := askFilter(t, "POST", ts2.URL+"/filter?y=api%3D%3D%22Fetch%22", []byte("x")); status != 403 {
		t.Errorf("POST /filter with uploads off: status %d", status)
	}
}

// sseMsg is a message of an event stream, with the id its event carried ("" for none).
type sseMsg struct {
	key msgKey
	id  string
}

// sse reads the messages of an event stream until it ends or stop is called.
func sse(t *testing.T, u string, last string) (<-chan sseMsg, func()) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %s %s", u, resp.Status, b)
	}
	out := make(chan sseMsg, 1000)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		event, id := "", ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: ") && event == "":
				var k msgKey
				json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &k)
				out <- sseMsg{k, id}
			case line == "":
				event, id = "", ""
			}
		}
	}()
	return out, func() { resp.Body.Close() }
}

// TestLiveFilter: a live page's event stream with a display filter sends exactly the messages
// -Y shows, each pair once decided, to a page there from the start and to one that comes
// mid-way (which gets what is held first); a page without one gets every message.
func TestLiveFilter(t *testing.T) {
	const capture = "kgo-filters.pcap"
	rec, srv, ts := liveServer(t, capture, nil)
	entries := rec.entries()
	type page struct {
		expr string
		keys <-chan sseMsg
		stop func()
	}
	var pages []page
	open := func(expr string) {
		keys, stop := sse(t, ts.URL+"/events?y="+url.QueryEscape(expr), "")
		pages = append(pages, page{expr, keys, stop})
	}
	for _, expr := range exprs[:4] {
		open(expr)
	}
	open("")
	rec.replay(srv, func(i int, e *model.Entry) {
		if i == len(entries)/2 {
			open(exprs[0])
			open(exprs[3])
		}
	})
	srv.Close()
	all := allKeys(t, capture)
	for _, p := range pages {
		var got []string
		deadline := time.After(10 * time.Second)
	read:
		for {
			select {
			case m, ok := <-p.keys:
				if !ok {
					break read
				}
				got = append(got, m.key.String())
			case <-deadline:
				t.Fatalf("%s: the stream did not end", p.expr)
			}
		}
		p.stop()
		want := all
		if p.expr != "" {
			want = displayFiltered(t, capture, p.expr)
			slices.Sort(got)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: the stream sent\n%v\n-Y shows\n%v", p.expr, got, want)
		}
	}
}

// TestLiveReconnect: a browser that reconnects says what it got last (Last-Event-ID) and is sent
// what came after, with or without a filter.
func TestLiveReconnect(t *testing.T) {
	rec, srv, ts := liveServer(t, "kgo-filters.pcap", nil)
	rec.replay(srv, func(int, *model.Entry) {})
	read := func(u, last string, n int) []sseMsg {
		keys, stop := sse(t, u, last)
		defer stop()
		var got []sseMsg
		for len(got) < n {
			select {
			case m := <-keys:
				got = append(got, m)
			case <-time.After(5 * time.Second):
				t.Fatalf("%s from %q: %d messages, want %d", u, last, len(got), n)
			}
		}
		return got
	}
	names := func(ms []sseMsg) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.key.String())
		}
		return out
	}
	all := allKeys(t, "kgo-filters.pcap")
	if got := names(read(ts.URL+"/events", "9", len(all)-10)); !slices.Equal(got, all[10:]) {
		t.Errorf("reconnecting after message 9: got %v", got)
	}
	// With a filter, the last event of each pair carries its id; reconnecting with the id of
	// the first pair gives the others.
	expr := exprs[0]
	want := displayFiltered(t, "kgo-filters.pcap", expr)
	whole := read(ts.URL+"/events?y="+url.QueryEscape(expr), "", len(want))
	first := slices.IndexFunc(whole, func(m sseMsg) bool { return m.id != "" })
	if first < 0 || first > 1 {
		t.Fatalf("the first ids: %+v", whole[:2])
	}
	if got := names(read(ts.URL+"/events?y="+url.QueryEscape(expr), whole[first].id, len(whole)-first-1)); !slices.Equal(got, names(whole[first+1:])) {
		t.Errorf("reconnecting after the first pair: got %v, want %v", got, names(whole[first+1:]))
	}
}

// TestSlowPage: a page that does not read its stream is let go once its queue is full, told so
// (event lost, not end: the capture goes on), and the server says so.
func TestSlowPage(t *testing.T) {
	warned := make(chan error, 10)
	rec, srv, ts := liveServer(t, "kgo-filters.pcap", func(c *serve.Config, _ int) {
		c.Keep, c.Warn = 200, func(err error) { warned <- err }
	})
	resp, err := http.Get(ts.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Far more than the queue and the sockets' buffers hold, while the page reads nothing.
	for i := 0; i < 60; i++ {
		rec.replay(srv, func(int, *model.Entry) {})
	}
	select {
	case err := <-warned:
		if !strings.Contains(err.Error(), "did not keep up") {
			t.Errorf("warned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the slow page was not let go")
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b, []byte("event: lost\ndata: {}\n\n")) {
		t.Errorf("the stream ends with %q", b[max(0, len(b)-100):])
	}
}

// TestFilterTimeout: an expression slow on every pair is stopped at the bound, by /filter and
// by a filtered stream judging the messages held when it opened, and the page is told so.
func TestFilterTimeout(t *testing.T) {
	const slow = `all(1..999000, {# > 0})` // tens of milliseconds a pair
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t)}, false)
	feed(t, "kgo-filters.pcap", srv.Renderer(), "html")
	serve.SetEvalTimeout(srv, time.Millisecond)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	if a, status := askFilter(t, "GET", ts.URL+"/filter?y="+url.QueryEscape(slow), nil); status != 503 || !strings.Contains(a.Error, "the filter took longer than 1ms over 108 messages") {
		t.Errorf("/filter: status %d, %+v", status, a)
	}

	rec, lsrv, lts := liveServer(t, "kgo-filters.pcap", nil)
	rec.replay(lsrv, func(int, *model.Entry) {})
	serve.SetEvalTimeout(lsrv, time.Millisecond)
	resp, err := http.Get(lts.URL + "/events?y=" + url.QueryEscape(slow))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var warning string
	for event := ""; sc.Scan(); {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
		}
		if event == "warning" && strings.HasPrefix(line, "data: ") {
			warning += line
		}
		if event == "held" {
			break
		}
	}
	if !strings.Contains(warning, "the filter took longer than 1ms over the ") || !strings.Contains(warning, "pairs held") {
		t.Errorf("the stream's warnings: %q", warning)
	}
}

// TestUploadsWait: a capture sent to be shown (/upload) or filtered (POST /filter) is
// dissected in one of the evaluation slots, so a room uploading at once is dissected a few at a
// time (a dissection holds the capture's messages until it is answered); with none free in
// time it is refused, undissected, with words the page shows. A capture shown decodes what the
// page shows and holds no entry.
func TestUploadsWait(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "pcaps", "kgo-filters.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	cut := data[:len(data)/2] // dissected, it warns: truncated
	for _, path := range []string{"/upload?name=cut.pcap", "/filter?name=cut.pcap&y=true"} {
		var warned atomic.Int32 // uploads dissected with a problem
		srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), Warn: func(error) { warned.Add(1) }}, false)
		serve.SetEvalTimeout(srv, 50*time.Millisecond)
		ts := httptest.NewServer(srv.Handler())
		give := serve.TakeEvals(srv)
		a, status := askFilter(t, "POST", ts.URL+path, cut)
		give()
		if status != 503 || !strings.Contains(a.Error, "busy") || !strings.Contains(a.Error, "try again") || warned.Load() != 0 {
			t.Errorf("%s, all slots taken: status %d, %q; %d warnings", path, status, a.Error, warned.Load())
		}
		if _, status := askFilter(t, "POST", ts.URL+path, cut); status != 200 || warned.Load() != 1 {
			t.Errorf("%s, a slot free: status %d; %d warnings", path, status, warned.Load())
		}
		ts.Close()
	}

	if n, want := serve.UploadNeeds(), render.PageFormat().Needs; n != want || n.Facts || n.Holds {
		t.Errorf("an upload decodes %+v, the page needs %+v", n, want)
	}
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t)}, false)
	msgs, entries, err := serve.UploadHeld(srv, data)
	if err != nil || msgs != 108 || entries != 0 {
		t.Errorf("an upload of 108 messages: %d messages, %d entries held to the end, %v", msgs, entries, err)
	}
}
