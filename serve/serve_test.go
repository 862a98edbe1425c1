package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
	"github.com/kdissect/kdissect/serve"
)

func htmlCodec(t testing.TB) *codec.Codec {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, _ := render.LookupFormat("html")
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: dissect.SelectAll()})
	if err != nil {
		t.Fatal(err)
	}
	return dissect.NewCodec(set, plan, dissect.CodecOptions{})
}

// feed runs a capture of pcaps/ through the pipeline into out, as serve's pipeline does for
// format html.
func feed(t testing.TB, capture string, out render.Renderer, format string) {
	t.Helper()
	feedFile(t, filepath.Join("..", "pcaps", capture), out, format)
}

// feedFile is feed of any capture file.
func feedFile(t testing.TB, path string, out render.Renderer, format string) {
	t.Helper()
	set, _ := schema.Embedded()
	f, _ := render.LookupFormat(format)
	if format == "html" {
		f.Needs = serve.Needs() // the page's format, as serve's pipeline has it
	}
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: dissect.SelectAll()})
	if err != nil {
		t.Fatal(err)
	}
	c := dissect.NewCodec(set, plan, dissect.CodecOptions{})
	p, err := dissect.New(dissect.Config{Codec: c, Out: out, Plan: plan, Select: dissect.SelectAll(), Detect: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.File(path); err != nil {
		t.Log(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

type jsonMessage struct {
	Frame  int                    `json:"frame"`
	API    string                 `json:"api_name"`
	Kind   string                 `json:"kind"`
	Fields []browsertest.JSONNode `json:"fields"`
}

// jsonMessages are the JSON lines of a capture: what the page must list.
func jsonMessages(t testing.TB, capture string) []jsonMessage {
	var b bytes.Buffer
	f, _ := render.LookupFormat("json")
	feed(t, capture, f.New(&b, render.Options{}), "json")
	return jsonLines[jsonMessage](t, b.Bytes())
}

// jsonLines decodes the message lines of JSON output (notices left out).
func jsonLines[T any](t testing.TB, out []byte) []T {
	t.Helper()
	var ms []T
	for _, line := range bytes.Split(out, []byte("\n")) {
		if len(line) == 0 || bytes.Contains(line, []byte(`"kind":"notice"`)) {
			continue
		}
		var m T
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

func sameOrigin(base string) func(string) bool {
	return func(u string) bool { return strings.HasPrefix(u, strings.TrimSuffix(base, "/")+"/") }
}

// listed is the data-frame of every entry of the page's list.
func listed(p *browsertest.Page) []int {
	var frames []int
	p.Eval(`Array.prototype.map.call(document.querySelectorAll('#rows tr[data-frame]'), function (r) { return +r.dataset.frame; })`, &frames)
	return frames
}

func checkList(t *testing.T, p *browsertest.Page, want []jsonMessage) {
	t.Helper()
	got := listed(p)
	if len(got) != len(want) {
		t.Fatalf("the page lists %d messages, the JSON lines have %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i].Frame {
			t.Fatalf("entry %d: data-frame %d, JSON frame %d", i, got[i], want[i].Frame)
		}
	}
}

// TestServeCaptures serves a capture and checks its page as the file page is checked: every
// message listed, no console error, no request but to the server, and the byte/field contract
// on the messages of a compressed batch.
func TestServeCaptures(t *testing.T) {
	b := browsertest.Start(t)
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), MaxBytes: 64}, false)
	feed(t, "kgo-codecs.pcap", srv.Renderer(), "html")
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	want := jsonMessages(t, "kgo-codecs.pcap")
	p := b.Open(t, ts.URL+"/")
	checkList(t, p, want)
	checked := 0
	for i, m := range want {
		if m.API == "Produce" && m.Kind == "request" && checked < 3 {
			checked++
			for _, e := range p.CheckFields(i).Compare(browsertest.Flatten(m.Fields)) {
				t.Errorf("frame %d: %s", m.Frame, e)
			}
		}
	}
	p.Check(sameOrigin(ts.URL))
}

// TestUpload drops a capture onto an empty page (through its file input, as a drop does): the
// page lists the capture's messages, which the server dissected in memory.
func TestUpload(t *testing.T) {
	b := browsertest.Start(t)
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t)}, false)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	p := b.Open(t, ts.URL+"/")
	if n := len(listed(p)); n != 0 {
		t.Fatalf("an empty server's page lists %d messages", n)
	}
	path, _ := filepath.Abs(filepath.Join("..", "pcaps", "sarama-codecs.pcap"))
	ctx, cancel := context.WithTimeout(p.Context(), time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("#upload-file"), []string{path})); err != nil {
		t.Fatal(err)
	}
	want := jsonMessages(t, "sarama-codecs.pcap")
	deadline := time.Now().Add(20 * time.Second)
	for len(listed(p)) != len(want) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	checkList(t, p, want)
	if srv.Messages() != 0 {
		t.Errorf("the upload was kept by the server: %d messages", srv.Messages())
	}
	p.Check(sameOrigin(ts.URL))

	// The server busy with other uploads and filters: the page says so, and keeps what it lists.
	serve.SetEvalTimeout(srv, 50*time.Millisecond)
	give := serve.TakeEvals(srv)
	defer give()
	path, _ = filepath.Abs(filepath.Join("..", "pcaps", "kgo-filters.pcap"))
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("#upload-file"), []string{path})); err != nil {
		t.Fatal(err)
	}
	var bar string
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(bar, "busy") && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		p.Eval(`document.getElementById('bar').textContent`, &bar)
	}
	if !strings.HasPrefix(bar, "kgo-filters.pcap: the server is busy") || !strings.Contains(bar, "try again") {
		t.Errorf("an upload refused as busy: the page says %q", bar)
	}
	checkList(t, p, want)
}

// TestLivePages: a live server pushes each message to the open pages as it comes; a page opened
// mid-way gets what is held and everything after; past Keep, old messages are dropped and the
// page says so.
func TestLivePages(t *testing.T) {
	b := browsertest.Start(t)
	rec, srv, ts := liveServer(t, "kgo-produce-fetch.pcap", func(c *serve.Config, n int) { c.Keep = n - 3 })
	entries := rec.entries()
	first := b.Open(t, ts.URL+"/")
	var second *browsertest.Page
	rec.replay(srv, func(i int, e *model.Entry) {
		if i == len(entries)/2 {
			second = b.Open(t, ts.URL+"/")
		}
		if i > 0 {
			for _, p := range []*browsertest.Page{first, second} {
				if p != nil {
					waitFor(t, p, entries[i-1].Frame, i-1, time.Second)
				}
			}
		}
	})
	for _, p := range []*browsertest.Page{first, second} {
		waitFor(t, p, entries[len(entries)-1].Frame, len(entries)-1, time.Second)
	}
	for _, p := range []*browsertest.Page{first, second} {
		if n := len(listed(p)); n != len(entries)-3 {
			t.Errorf("the page lists %d messages, want the last %d", n, len(entries)-3)
		}
		var bar string
		p.Eval(`document.getElementById('bar').textContent`, &bar)
		if !strings.Contains(bar, "3 older messages were dropped") {
			t.Errorf("the page says %q", bar)
		}
		p.Check(sameOrigin(ts.URL))
	}
}

// waitFor waits until the page lists frame as its last entry.
func waitFor(t *testing.T, p *browsertest.Page, frame, i int, limit time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		var last int
		p.Eval(`(function () { var r = document.querySelectorAll('#rows tr[data-frame]'); return r.length ? +r[r.length - 1].dataset.frame : -1; })()`, &last)
		if last == frame {
			return
		}
		if time.Since(start) > limit {
			t.Fatalf("message %d (frame %d) did not appear within %v (last listed: %d)", i, frame, limit, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recording keeps what a pipeline writes: its entries (their trees stay: the codec is not told
// to release them) and, between them, the ends of connections.
type recording struct{ steps []step }

// step is an entry, or the end of connection closed (e nil).
type step struct {
	e      *model.Entry
	closed int
}

func (r *recording) Message(e *model.Entry) error {
	x := *e
	r.steps = append(r.steps, step{e: &x})
	return nil
}
func (r *recording) ConnClosed(stream int) error {
	r.steps = append(r.steps, step{closed: stream})
	return nil
}
func (r *recording) Notice(*model.Notice) error { return nil }
func (r *recording) Flush() error               { return nil }
func (r *recording) Close() error               { return nil }

func (r *recording) entries() []*model.Entry {
	var es []*model.Entry
	for _, s := range r.steps {
		if s.e != nil {
			es = append(es, s.e)
		}
	}
	return es
}

// liveServer is a live server, with no capture behind it, and the recording of a capture of
// pcaps/ to replay to it; config adjusts its Config (n: the capture's messages; Keep is n
// unless it says). The server is closed (its event streams ended) before its listener.
func liveServer(t *testing.T, capture string, config func(c *serve.Config, n int)) (*recording, *serve.Server, *httptest.Server) {
	t.Helper()
	rec := &recording{}
	feed(t, capture, rec, "html")
	n := len(rec.entries())
	cfg := serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), Keep: n}
	if config != nil {
		config(&cfg, n)
	}
	srv := serve.New(cfg, true)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close) // cleanups run last first: the streams end, then ts.Close waits for none
	return rec, srv, ts
}

// replay writes the recording to a server, calling before(i) before its i-th entry.
func (r *recording) replay(srv *serve.Server, before func(i int, e *model.Entry)) {
	out := srv.Renderer()
	i := 0
	for _, s := range r.steps {
		if s.e == nil {
			out.(render.ConnCloser).ConnClosed(s.closed)
			continue
		}
		before(i, s.e)
		out.Message(s.e)
		i++
	}
}

// TestHTTP: what the server answers besides the page: nothing else, every response with the
// policy, the token required when set, a foreign Host refused, uploads bounded.
func TestHTTP(t *testing.T) {
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), Token: "s3cret", MaxUpload: 1000, Hosts: []string{"localhost"}}, false)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	small, err := os.ReadFile(filepath.Join("..", "pcaps", "kgo-produce-fetch.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path, host string
		body                     []byte
		status                   int
		says                     string
	}{
		{"page", "GET", "/?token=s3cret", "", nil, 200, "<!DOCTYPE html>"},
		{"no token", "GET", "/", "", nil, 401, "token"},
		{"wrong token", "GET", "/?token=x", "", nil, 401, "token"},
		{"a path", "GET", "/etc/passwd?token=s3cret", "", nil, 404, ""},
		{"dot dot", "GET", "/../go.mod?token=s3cret", "", nil, 404, ""},
		{"post to page", "POST", "/?token=s3cret", "", nil, 405, ""},
		{"events of captures", "GET", "/events?token=s3cret", "", nil, 404, "not a live capture"},
		{"foreign host", "GET", "/?token=s3cret", "attacker.example", nil, 421, "unknown host"},
		{"upload too big", "POST", "/upload?token=s3cret&name=big.pcap", "", small, 413, "over the limit of 1000 bytes"},
		{"upload not a capture", "POST", "/upload?token=s3cret&name=x.txt", "", []byte("hello, not a pcap"), 422, `"error"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, ts.URL+tt.path, bytes.NewReader(tt.body))
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, body := send(t, req, tt.status)
			if !strings.Contains(string(body), tt.says) {
				t.Errorf("body %.200q lacks %q", body, tt.says)
			}
			if resp.Header.Get("Content-Security-Policy") != serve.CSP() {
				t.Errorf("policy %q", resp.Header.Get("Content-Security-Policy"))
			}
		})
	}
	// An upload within the limit is dissected.
	srv = serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t)}, false)
	ts2 := httptest.NewServer(srv.Handler())
	defer ts2.Close()
	resp, err := http.Post(ts2.URL+"/upload?name=kgo-produce-fetch.pcap", "application/octet-stream", bytes.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Messages []json.RawMessage `json:"messages"`
		Error    string            `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if want := len(jsonMessages(t, "kgo-produce-fetch.pcap")); len(res.Messages) != want || res.Error != "" {
		t.Errorf("upload: %d messages, want %d; error %q", len(res.Messages), want, res.Error)
	}
}

// TestTokenInURLs: a token with characters that mean something in a query (+ & # %) is passed
// on escaped in the URLs the page is given, so that the page's own requests carry it whole.
func TestTokenInURLs(t *testing.T) {
	const token = "a+b&c#d%e"
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), Token: token}, false)
	feed(t, "kgo-produce-fetch.pcap", srv.Renderer(), "html")
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	get := func(u string) (int, string) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, page := get(ts.URL + "/?token=" + url.QueryEscape(token))
	if status != 200 {
		t.Fatalf("the page: %d", status)
	}
	m := regexp.MustCompile(`"filter":("[^"]*")`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page names no filter URL")
	}
	var filterURL string
	if err := json.Unmarshal([]byte(m[1]), &filterURL); err != nil {
		t.Fatal(err)
	}
	if status, body := get(ts.URL + "/" + filterURL + "&y=true"); status != 200 || !strings.Contains(body, `"match":[0,`) {
		t.Errorf("%s: %d %s", filterURL, status, body)
	}
}

// TestUploadWarning: a capture that cannot be read is named once in the server's warning,
// whether the page gave its file name or not.
func TestUploadWarning(t *testing.T) {
	for _, tt := range []struct{ query, want string }{
		{"", "upload: "},
		{"?name=cut.pcap", "upload: cut.pcap: "},
	} {
		var warned []string
		srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), Warn: func(err error) { warned = append(warned, err.Error()) }}, false)
		ts := httptest.NewServer(srv.Handler())
		res, err := http.Post(ts.URL+"/upload"+tt.query, "application/octet-stream", strings.NewReader("abc"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		ts.Close()
		srv.Close()
		if len(warned) != 1 || !strings.HasPrefix(warned[0], tt.want) || strings.Count(warned[0], "upload") != 1 {
			t.Errorf("upload%s of 3 bytes (status %d): warnings %q, want one that starts %q and says upload once", tt.query, res.StatusCode, warned, tt.want)
		}
	}
}

// TestCrossOrigin: a POST that a browser says comes from another origin (Origin, or
// Sec-Fetch-Site) is refused, so that a page open in the same browser cannot make the server
// read uploads or run filters; the page's own POSTs and programs that name no origin go on.
func TestCrossOrigin(t *testing.T) {
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t)}, false)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	data, err := os.ReadFile(filepath.Join("..", "pcaps", "kgo-produce-fetch.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	own := ts.URL // http://127.0.0.1:PORT, the origin of the page it serves
	paths := []string{"/upload?name=kgo-produce-fetch.pcap", "/filter?name=kgo-produce-fetch.pcap&y=" + url.QueryEscape(`api == "Fetch"`)}
	tests := []struct {
		name          string
		origin, fetch string // Origin and Sec-Fetch-Site; "" leaves the header out
		status        int
	}{
		{"another site", "https://attacker.example", "cross-site", 403},
		{"another site, Origin only", "https://attacker.example", "", 403},
		{"another port of this host", "http://127.0.0.1:1", "same-site", 403},
		{"another port, Origin only", "http://127.0.0.1:1", "", 403},
		{"an opaque origin", "null", "", 403},
		{"Sec-Fetch-Site only", "", "cross-site", 403},
		{"the page itself", own, "same-origin", 200},
		{"the page itself, Origin only", own, "", 200},
		{"a program", "", "", 200},
	}
	for _, tt := range tests {
		for _, path := range paths {
			t.Run(tt.name+" "+path[:strings.Index(path, "?")], func(t *testing.T) {
				req, _ := http.NewRequest("POST", ts.URL+path, bytes.NewReader(data))
				if tt.origin != "" {
					req.Header.Set("Origin", tt.origin)
				}
				if tt.fetch != "" {
					req.Header.Set("Sec-Fetch-Site", tt.fetch)
				}
				send(t, req, tt.status)
			})
		}
	}
	// Reading is not refused: a page elsewhere cannot read the answer anyway.
	req, _ := http.NewRequest("GET", ts.URL+"/", nil)
	req.Header.Set("Origin", "https://attacker.example")
	send(t, req, 200)
}

// send makes the request and reads the answer, failing t unless its status is status.
func send(t *testing.T, req *http.Request, status int) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Errorf("%s %s: status %d, want %d: %.200s", req.Method, req.URL.Path, resp.StatusCode, status, body)
	}
	return resp, body
}
