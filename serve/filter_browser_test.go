package serve_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/filter"
	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
	"github.com/kdissect/kdissect/serve"
)

// listedKeys are the keys of the messages the page lists, sorted.
func listedKeys(p *browsertest.Page) []string {
	var ks []msgKey
	p.Eval(`Array.prototype.map.call(document.querySelectorAll('#rows tr[data-i]'), function (r) { var m = kdissect.messages()[+r.dataset.i]; return {frame: m.frame, kind: m.kind, stream: m.stream, correlation_id: m.correlation_id}; })`, &ks)
	var out []string
	for _, k := range ks {
		out = append(out, k.String())
	}
	slices.Sort(out)
	return out
}

// typeY types expr into the page's display filter box, replacing what is there, and presses
// Enter.
func typeY(t *testing.T, p *browsertest.Page, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.Context(), time.Minute)
	defer cancel()
	p.Eval(`document.getElementById('f-y').value = ''`, nil)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#f-y"), expr+kb.Enter)); err != nil {
		t.Fatal(err)
	}
}

// waitApplied waits until the page says it applies expr (data-applied), and returns what its
// box and message say.
func waitApplied(t *testing.T, p *browsertest.Page, expr string) (class, msg string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var st struct{ Applied, Class, Msg string }
		p.Eval(`(function () { var b = document.getElementById('f-y'); return {applied: b.getAttribute('data-applied') || '', class: b.className, msg: document.getElementById('y-msg').textContent}; })()`, &st)
		if st.Applied == expr && !strings.Contains(st.Msg, "applying") {
			return st.Class, st.Msg
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not apply %q: %+v", expr, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitMsg waits until the box has class cls, and returns the message under it.
func waitMsg(t *testing.T, p *browsertest.Page, cls string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var st struct{ Class, Msg string }
		p.Eval(`({class: document.getElementById('f-y').className, msg: document.getElementById('y-msg').textContent})`, &st)
		if st.Class == cls {
			return st.Msg
		}
		if time.Now().After(deadline) {
			t.Fatalf("the box is not %q: %+v", cls, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPageFilter types -Y expressions into a served capture's page: it lists exactly what -Y
// shows, with the list's own filters on top; a wrong expression is shown red with its position
// and the last good filter stays; an empty box shows everything; the filter is in the URL, and
// a link with it opens filtered; the token is needed and passed on.
func TestPageFilter(t *testing.T) {
	const capture = "kgo-filters.pcap"
	b := browsertest.Start(t)
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), Token: "s3cret"}, false)
	feed(t, capture, srv.Renderer(), "html")
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	all := allKeys(t, capture)
	slices.Sort(all)
	p := b.Open(t, ts.URL+"/?token=s3cret")
	for _, expr := range exprs {
		typeY(t, p, expr)
		if class, msg := waitApplied(t, p, expr); class != "ok" || msg != "" {
			t.Errorf("%s: box %q, message %q", expr, class, msg)
		}
		if got, want := listedKeys(p), displayFiltered(t, capture, expr); !slices.Equal(got, want) {
			t.Errorf("%s: the page lists\n%v\n-Y shows\n%v", expr, got, want)
		}
	}
	// With the list's own filter: both hold.
	last := exprs[len(exprs)-1]
	p.Eval(`(function () { var k = document.getElementById('f-kind'); k.value = 'request'; k.dispatchEvent(new Event('change')); return true; })()`, nil)
	var want []string
	for _, k := range displayFiltered(t, capture, last) {
		if strings.Contains(k, " request ") {
			want = append(want, k)
		}
	}
	if got := listedKeys(p); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("-Y %s and requests: the page lists %v, want %v", last, got, want)
	}
	// A link with both opens the list as it was.
	var both string
	p.Eval(`location.href`, &both)
	p3 := b.Open(t, both)
	waitApplied(t, p3, last)
	if got := listedKeys(p3); !slices.Equal(got, want) {
		t.Errorf("the link %s lists %v, want %v", both, got, want)
	}
	p.Eval(`(function () { var k = document.getElementById('f-kind'); k.value = ''; k.dispatchEvent(new Event('change')); return true; })()`, nil)
	filtered := displayFiltered(t, capture, last)

	// The URL carries the filter.
	var loc string
	p.Eval(`location.search`, &loc)
	if q, _ := url.ParseQuery(strings.TrimPrefix(loc, "?")); q.Get("y") != last || q.Get("token") != "s3cret" || q.Has("kind") {
		t.Errorf("the URL's query is %q", loc)
	}

	// A wrong expression: red, the position named, the last good filter still applied.
	bad := `api == "Fetch" &&& x`
	_, cerr := filter.Compile(bad)
	pos, _, _ := filter.ErrorAt(cerr)
	typeY(t, p, bad)
	msg := waitMsg(t, p, "bad")
	if !strings.Contains(msg, fmt.Sprintf("(%d:%d)", pos.Line, pos.Column)) || !strings.Contains(msg, cerr.Error()) || !strings.Contains(msg, "still shows -Y "+last) {
		t.Errorf("a wrong expression: the page says %q; want line %d column %d and %q", msg, pos.Line, pos.Column, cerr)
	}
	if got := listedKeys(p); !slices.Equal(got, filtered) {
		t.Errorf("after a wrong expression the page lists %d messages, want the last filter's %d", len(got), len(filtered))
	}
	var caret int
	p.Eval(`document.getElementById('f-y').selectionStart`, &caret)
	if caret != pos.Offset {
		t.Errorf("the caret is at %d, the error at %d", caret, pos.Offset)
	}
	// Esc puts back the filter applied (not the search box's own Escape, which empties it).
	escape(t, p)
	var box struct{ Value, Class, Msg string }
	p.Eval(`({value: document.getElementById('f-y').value, class: document.getElementById('f-y').className, msg: document.getElementById('y-msg').textContent})`, &box)
	if box.Value != last || box.Class != "ok" || box.Msg != "" {
		t.Errorf("after Esc the box is %+v, want %q applied", box, last)
	}
	if class, _ := waitApplied(t, p, last); class != "ok" {
		t.Errorf("after Esc the box is %q", class)
	}
	if got := listedKeys(p); !slices.Equal(got, filtered) {
		t.Errorf("after Esc the page lists %d messages, want the filter's %d", len(got), len(filtered))
	}

	// Too long: refused, and said so at the box.
	p.Eval(fmt.Sprintf(`(function () { var b = document.getElementById('f-y'); b.value = 'api == "' + 'x'.repeat(%d) + '"'; document.getElementById('y-apply').click(); return true; })()`, serve.MaxExpr), nil)
	// Only the final state is waited for: the "applying" between may be too short to be seen
	// (the server refuses a long expression at once). The box was "ok" before.
	if msg := waitMsg(t, p, "bad"); !strings.Contains(msg, fmt.Sprintf("the page takes at most %d", serve.MaxExpr)) {
		t.Errorf("a long expression: the page says %q", msg)
	}

	// Emptied: every message again, and no filter in the URL.
	ctx, cancel := context.WithTimeout(p.Context(), time.Minute)
	p.Eval(`document.getElementById('f-y').value = 'x'`, nil)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#f-y"), kb.End+kb.Backspace)); err != nil {
		t.Fatal(err)
	}
	cancel()
	waitApplied(t, p, "")
	if got := listedKeys(p); !slices.Equal(got, all) {
		t.Errorf("with the box emptied the page lists %d of %d messages", len(got), len(all))
	}
	p.Eval(`location.search`, &loc)
	if strings.Contains(loc, "y=") {
		t.Errorf("the URL's query is %q", loc)
	}
	checkRefusals(t, p, ts.URL)

	// A link with a filter opens filtered.
	q := exprs[0]
	p2 := b.Open(t, ts.URL+"/?token=s3cret&y="+url.QueryEscape(q))
	waitApplied(t, p2, q)
	if got, want := listedKeys(p2), displayFiltered(t, capture, q); !slices.Equal(got, want) {
		t.Errorf("a link with -Y %s lists %v, want %v", q, got, want)
	}
	checkRefusals(t, p2, ts.URL)
}

// TestPageFilterUpload: a filter applies to an uploaded capture (sent again with the
// expression), and to the next one uploaded; Enter on the expression already applied sends
// nothing.
func TestPageFilterUpload(t *testing.T) {
	b := browsertest.Start(t)
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t)}, false)
	var posted atomic.Int32 // captures sent to /filter
	h := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/filter" {
			posted.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	p := b.Open(t, ts.URL+"/")
	expr := exprs[1]
	for _, capture := range []string{"kgo-filters.pcap", "kgo-produce-fetch.pcap"} {
		upload(t, p, capture)
		if capture == "kgo-filters.pcap" {
			typeY(t, p, expr)
			waitApplied(t, p, expr)
			// Enter again, and after Esc: the answer is the one listed.
			for range 2 {
				typeY(t, p, expr)
				escape(t, p)
			}
			if class, msg := waitApplied(t, p, expr); class != "ok" || msg != "" || posted.Load() != 1 {
				t.Errorf("Enter on the expression applied: box %q, message %q; the capture was sent %d times", class, msg, posted.Load())
			}
		}
		want := displayFiltered(t, capture, expr)
		deadline := time.Now().Add(20 * time.Second)
		got := listedKeys(p)
		for !slices.Equal(got, want) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			got = listedKeys(p)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s uploaded, -Y %s: the page lists %v, want %v", capture, expr, got, want)
		}
	}
	if srv.Messages() != 0 {
		t.Errorf("the uploads were kept by the server: %d messages", srv.Messages())
	}
	checkRefusals(t, p, ts.URL)
}

// TestLivePageFilter: a live page with a filter (from its link, or typed mid-way) lists exactly
// what -Y shows of the messages pushed; the server wants a token, which the page passes on.
func TestLivePageFilter(t *testing.T) {
	const capture = "kgo-filters.pcap"
	b := browsertest.Start(t)
	rec, srv, ts := liveServer(t, capture, func(c *serve.Config, _ int) { c.Token = "t0k" })
	entries := rec.entries()
	linked := b.Open(t, ts.URL+"/?token=t0k&y="+url.QueryEscape(exprs[0]))
	waitApplied(t, linked, exprs[0])
	var typed *browsertest.Page
	rec.replay(srv, func(i int, e *model.Entry) {
		if i == len(entries)/2 {
			typed = b.Open(t, ts.URL+"/?token=t0k")
			typeY(t, typed, exprs[3])
			waitApplied(t, typed, exprs[3])
		}
	})
	for _, c := range []struct {
		p    *browsertest.Page
		expr string
	}{{linked, exprs[0]}, {typed, exprs[3]}} {
		want := displayFiltered(t, capture, c.expr)
		deadline := time.Now().Add(10 * time.Second)
		got := listedKeys(c.p)
		for !slices.Equal(got, want) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			got = listedKeys(c.p)
		}
		if !slices.Equal(got, want) {
			t.Errorf("live, -Y %s: the page lists\n%v\n-Y shows\n%v", c.expr, got, want)
		}
		var count string
		c.p.Eval(`document.getElementById('count').textContent`, &count)
		if !strings.Contains(count, "that match -Y") {
			t.Errorf("the count says %q", count)
		}
		checkRefusals(t, c.p, ts.URL)
	}
	// Paused, a new filter still lists what is held (only new messages wait).
	typed.Eval(`document.getElementById('pause').click()`, nil)
	typeY(t, typed, exprs[1])
	waitApplied(t, typed, exprs[1])
	want := displayFiltered(t, capture, exprs[1])
	deadline := time.Now().Add(10 * time.Second)
	for got := listedKeys(typed); !slices.Equal(got, want); got = listedKeys(typed) {
		if time.Now().After(deadline) {
			t.Fatalf("paused, -Y %s: the live page lists %v, want %v", exprs[1], got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	typed.Eval(`document.getElementById('pause').click()`, nil)

	// Emptied: every message held.
	ctx, cancel := context.WithTimeout(typed.Context(), time.Minute)
	defer cancel()
	typed.Eval(`document.getElementById('f-y').value = 'x'`, nil)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#f-y"), kb.End+kb.Backspace)); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, typed, "")
	all := allKeys(t, capture)
	slices.Sort(all)
	deadline = time.Now().Add(10 * time.Second)
	for got := listedKeys(typed); !slices.Equal(got, all); got = listedKeys(typed) {
		if time.Now().After(deadline) {
			t.Fatalf("emptied, the live page lists %d of %d", len(got), len(all))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkRefusals checks the page as Check does, but for the expressions the server refused
// (400: a wrong one, or one half typed when the box checked it), which Chromium logs as
// failed loads.
func checkRefusals(t *testing.T, p *browsertest.Page, base string) {
	t.Helper()
	for _, s := range p.Problems() {
		if !strings.Contains(s, "status of 400 (Bad Request) "+base+"/filter?") {
			t.Errorf("page problem: %s", s)
		}
	}
	for _, u := range p.Requests() {
		if !sameOrigin(base)(u) {
			t.Errorf("the page made a request to %s", u)
		}
	}
}

// upload gives the page a capture of pcaps/ (or the file named) through its file input, as a
// drop does, and waits until the page has its messages.
func upload(t *testing.T, p *browsertest.Page, capture string, file ...string) {
	t.Helper()
	path, _ := filepath.Abs(filepath.Join("..", "pcaps", capture))
	if len(file) > 0 { // a capture outside pcaps/ (TestFilterTiming's)
		path, _ = filepath.Abs(file[0])
	}
	ctx, cancel := context.WithTimeout(p.Context(), time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("#upload-file"), []string{path})); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var bar string
		p.Eval(`document.getElementById('bar').textContent`, &bar)
		if strings.HasPrefix(bar, capture+": ") && strings.Contains(bar, " messages") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("uploading %s: the page says %q", capture, bar)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var timedCapture = flag.String("capture", "", "TestFilterTiming: a capture to serve and filter in Chromium, timed")

// TestFilterTiming serves the capture -capture names (the first --max-messages 5000 of it),
// types -Y expressions into its page and reports how long each took to be applied: the
// server's evaluation, and from Enter to the list redrawn (for the note's measurements;
// skipped without -capture).
func TestFilterTiming(t *testing.T) {
	if *timedCapture == "" {
		t.Skip("no -capture given")
	}
	// The capture is read before Chromium starts, so that a path that cannot be read, or a
	// file with no Kafka in it, fails the test at once rather than timing an empty page.
	f, err := os.Open(*timedCapture)
	if err != nil && !filepath.IsAbs(*timedCapture) {
		t.Fatalf("-capture: %v (go test runs in serve/: a relative path is read from there; give an absolute one)", err)
	} else if err != nil {
		t.Fatalf("-capture: %v", err)
	}
	f.Close()
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), MaxMessages: render.DefaultMaxMessages}, false)
	pf := render.PageFormat()
	pf.Needs = serve.Needs()
	plan, err := dissect.NewPlan(pf, dissect.Asks{Select: dissect.SelectAll()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := dissect.New(dissect.Config{Codec: htmlCodec(t), Out: srv.Renderer(), Plan: plan, Select: dissect.SelectAll(), Detect: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, readErr := p.File(*timedCapture)
	p.Close()
	if readErr != nil {
		t.Fatalf("-capture %s: %v", *timedCapture, readErr)
	}
	if srv.Messages() == 0 {
		t.Fatalf("-capture %s: no Kafka message to filter in it", *timedCapture)
	}
	t.Logf("%s: %d messages held, read in %v", *timedCapture, srv.Messages(), time.Since(start))
	b := browsertest.Start(t)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	page := b.Open(t, ts.URL+"/")
	t.Logf("page loaded in %v", page.Took)
	for _, expr := range []string{`api == "Fetch"`, `"orders" in topics`, `api == "Produce" && req.Acks == -1`, `len(errors) > 0`, `api == "Fetch" && any(resp.Responses, any(.Partitions, .HighWatermark > 1000))`} {
		start := time.Now()
		resp, err := http.Get(ts.URL + "/filter?y=" + url.QueryEscape(expr))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		server := time.Since(start)
		// In the page: from apply to the list redrawn (the observer runs after the task that
		// applies the answer and relists).
		var took struct {
			Ms     float64
			Listed int
		}
		js, _ := json.Marshal(expr)
		page.Eval(fmt.Sprintf(`new Promise(function (done) {
			var b = document.getElementById('f-y'), e = %s, t0;
			new MutationObserver(function (_, o) {
				if (b.getAttribute('data-applied') !== e) return;
				o.disconnect();
				done({ms: performance.now() - t0, listed: document.querySelectorAll('#rows tr[data-frame]').length});
			}).observe(b, {attributes: true});
			b.value = e; t0 = performance.now(); document.getElementById('y-apply').click();
		})`, js), &took)
		t.Logf("-Y %s: %d listed; server %v (GET /filter), page %.0f ms (apply to list redrawn)", expr, took.Listed, server, took.Ms)
		page.Eval(`(function () { var b = document.getElementById('f-y'); b.value = ''; b.dispatchEvent(new Event('input')); return true; })()`, nil)
		waitApplied(t, page, "")
	}

	// The capture uploaded onto the page of an empty server: each Enter of a new expression
	// sends it again, an Enter of the one applied does not.
	empty := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), MaxMessages: render.DefaultMaxMessages}, false)
	ets := httptest.NewServer(empty.Handler())
	defer ets.Close()
	up := b.Open(t, ets.URL+"/")
	start = time.Now()
	upload(t, up, filepath.Base(*timedCapture), *timedCapture)
	t.Logf("uploaded in %v", time.Since(start))
	for _, expr := range []string{`api == "Fetch"`, `api == "Fetch"`, `"orders" in topics`, `"orders" in topics`} {
		var ms float64
		js, _ := json.Marshal(expr)
		up.Eval(fmt.Sprintf(`new Promise(function (done) {
			var b = document.getElementById('f-y'), e = %s, t0;
			var check = function () {
				if (b.getAttribute('data-applied') === e && document.getElementById('y-msg').textContent.indexOf('applying') < 0) done(performance.now() - t0);
				else setTimeout(check, 5);
			};
			b.value = e; t0 = performance.now(); document.getElementById('y-apply').click(); check();
		})`, js), &ms)
		t.Logf("uploaded, Enter on -Y %s: %.0f ms to applied", expr, ms)
	}
}

// escape presses Esc in the display filter box, and waits a little for what it might start
// (an emptied box applies at once).
func escape(t *testing.T, p *browsertest.Page) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.Context(), time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#f-y"), kb.Escape)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
}

// TestPageFilterUnfinished: an expression the server could not finish in time is shown as a
// warning (yellow), not as a wrong expression (red), and the list keeps its filter; the caret
// of a wrong expression is on the character named, past an emoji (two UTF-16 units in the box).
func TestPageFilterUnfinished(t *testing.T) {
	b := browsertest.Start(t)
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t)}, false)
	feed(t, "kgo-filters.pcap", srv.Renderer(), "html")
	serve.SetEvalTimeout(srv, time.Millisecond)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	p := b.Open(t, ts.URL+"/")
	all := listedKeys(p)
	typeY(t, p, `all(1..999000, {# > 0})`)
	msg := waitMsg(t, p, "warn")
	if !strings.Contains(msg, "the filter took longer than 1ms") || !strings.Contains(msg, "The list shows every message.") {
		t.Errorf("a filter past its time: the page says %q", msg)
	}
	if got := listedKeys(p); !slices.Equal(got, all) {
		t.Errorf("a filter past its time: the page lists %d of %d messages", len(got), len(all))
	}

	bad := `client_id == "😀" &&& x`
	_, cerr := filter.Compile(bad)
	pos, _, _ := filter.ErrorAt(cerr)
	js, _ := json.Marshal(bad)
	p.Eval(`(function () { var b = document.getElementById('f-y'); b.focus(); b.value = `+string(js)+`; document.getElementById('y-apply').click(); return true; })()`, nil)
	waitMsg(t, p, "bad")
	var caret struct{ Start, End int }
	p.Eval(`({start: document.getElementById('f-y').selectionStart, end: document.getElementById('f-y').selectionEnd})`, &caret)
	at := len(utf16.Encode([]rune(bad)[:pos.Offset]))
	if pos.Offset <= strings.Index(bad, "😀") || caret.Start != at || caret.End != at+1 {
		t.Errorf("%s: the caret is at %d-%d, the error (character %d) at unit %d", bad, caret.Start, caret.End, pos.Offset, at)
	}
	for _, s := range p.Problems() {
		if !strings.Contains(s, ts.URL+"/filter?") || !strings.Contains(s, "status of 400") && !strings.Contains(s, "status of 503") {
			t.Errorf("page problem: %s", s)
		}
	}
}
