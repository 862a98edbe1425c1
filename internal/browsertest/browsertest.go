// Package browsertest drives a real headless Chromium (Debian's chromium) for the tests of
// kdissect's pages: it opens a page, records what the page wrote to its console and every
// request it made, runs script in it and takes screenshots. Tests skip without chromium, and
// fail without it when CI is set.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is one headless Chromium with a profile of its own.
type Browser struct {
	ctx    context.Context
	cancel func()
}

// Path finds chromium, or skips t (fails it when CI is set).
func Path(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("KDISSECT_CHROMIUM"), "/usr/bin/chromium", "chromium"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found: .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("chromium not found (apt-get install chromium): page tests skipped")
	return ""
}

// Start starts Chromium for t; it stops when t ends.
func Start(t testing.TB) *Browser {
	t.Helper()
	path := Path(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("no-pings", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancel()
		acancel()
		t.Fatalf("starting %s: %v", path, err)
	}
	b := &Browser{ctx: ctx, cancel: func() { cancel(); acancel() }}
	t.Cleanup(b.cancel)
	return b
}

// Page is one tab, with what it logged and requested since it was opened.
type Page struct {
	t   testing.TB
	ctx context.Context

	mu       sync.Mutex
	problems []string // console errors, exceptions, error entries of the browser's log, dialogs
	requests []string // the URL of every request the tab made
	// Took is how long the page took to load (navigation to the load event).
	Took time.Duration
}

// Open opens url in a new tab and waits for it to load.
func (b *Browser) Open(t testing.TB, url string) *Page {
	t.Helper()
	p := &Page{t: t}
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithListener(p.listen))
	t.Cleanup(cancel)
	p.ctx = ctx
	// The first action attaches the tab for as long as ctx lives: it must not be given a
	// context with a timeout, which would end the tab with it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	start := time.Now()
	tctx, tcancel := context.WithTimeout(ctx, 90*time.Second)
	defer tcancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
	p.Took = time.Since(start)
	return p
}

// Navigate loads url in the same tab, forgetting what the tab logged and requested before.
func (p *Page) Navigate(url string) {
	p.t.Helper()
	p.mu.Lock()
	p.problems, p.requests = nil, nil
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(p.ctx, 90*time.Second)
	defer cancel()
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		p.t.Fatalf("opening %s: %v", url, err)
	}
	p.Took = time.Since(start)
}

func (p *Page) listen(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == "error" || ev.Type == "assert" {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			p.problems = append(p.problems, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		s := d.Text
		if d.Exception != nil {
			s += " " + d.Exception.Description
		}
		p.problems = append(p.problems, "exception: "+s)
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			p.problems = append(p.problems, "log ("+string(ev.Entry.Source)+"): "+ev.Entry.Text+" "+ev.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, ev.Request.URL)
	case *page.EventJavascriptDialogOpening:
		// A script ran that no page of kdissect has (alert, confirm, prompt): a problem, and
		// the dialog is dismissed, or the tab would wait for it. (A listener must not wait
		// for the browser itself.)
		p.problems = append(p.problems, "dialog ("+string(ev.Type)+"): "+ev.Message)
		go chromedp.Call(p.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	}
}

// Problems returns the console errors, uncaught exceptions, error entries of the browser's log
// (refused requests, policy violations) and dialogs opened so far.
func (p *Page) Problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.problems...)
}

// Requests returns the URLs of the requests the tab made so far, the page's own included.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// Check fails the test for every problem, and for every request to a URL that allowed does
// not accept.
func (p *Page) Check(allowed func(url string) bool) {
	p.t.Helper()
	for _, s := range p.Problems() {
		p.t.Errorf("page problem: %s", s)
	}
	for _, u := range p.Requests() {
		if !allowed(u) {
			p.t.Errorf("the page made a request to %s", u)
		}
	}
}

// Eval runs script in the page and decodes its JSON result into out (nil: ignored).
func (p *Page) Eval(script string, out any) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 2*time.Minute)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](script, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluating %.80q: %v", script, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			p.t.Fatalf("evaluating %.80q: result %.200s: %v", script, raw, err)
		}
	}
}

// Viewport sets the size of the tab's viewport, width x height CSS pixels.
func (p *Page) Viewport(width, height int64) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		p.t.Fatal(err)
	}
}

// Screenshot writes a PNG of the viewport, width x height CSS pixels, to path.
func (p *Page) Screenshot(path string, width, height int64) {
	p.t.Helper()
	p.Viewport(width, height)
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// Context is the tab's chromedp context, for actions this package does not wrap.
func (p *Page) Context() context.Context { return p.ctx }

// checkScript selects message i of the page, then clicks every field element (tree rows and
// diagram boxes) and reports the bytes lit; then clicks every byte of every pane and reports
// the field selected. It only reads the DOM contract: data-offset, data-size, data-depth,
// class hl.
const checkScript = `(function (i) {
  kdissect.select(i);
  var more = document.querySelectorAll('#detail button');
  for (var k = 0; k < more.length; k++) more[k].click();  // draw every field and every byte
  var rows = document.querySelectorAll('#tree tr[data-offset]');
  var fields = [], bad = [], shades = [], seenShade = {};
  for (var r = 0; r < rows.length; r++) {
    fields.push({name: rows[r].querySelector('td.f').textContent.trim(), pane: +rows[r].dataset.pane,
      offset: +rows[r].dataset.offset, size: +rows[r].dataset.size, depth: +rows[r].dataset.depth, prefix: +(rows[r].dataset.prefix || 0)});
  }
  var els = document.querySelectorAll('#detail [data-size]');
  for (var e = 0; e < els.length; e++) {
    var el = els[e], off = +el.dataset.offset, size = +el.dataset.size, pane = el.dataset.pane;
    el.click();
    var lit = document.querySelectorAll('#panes .hl');
    var want = document.querySelectorAll('.pane[data-pane="' + pane + '"] .hex [data-offset]').length;
    var ok = lit.length === Math.min(size, Math.max(0, want - off));
    for (var h = 0; ok && h < lit.length; h++) {
      ok = +lit[h].dataset.offset === off + h && lit[h].closest('.pane').dataset.pane === pane;
    }
    var pre = document.querySelectorAll('#panes .hlp'), preWant = Math.min(+(el.dataset.prefix || 0), lit.length);
    ok = ok && pre.length === preWant;
    for (h = 0; ok && h < pre.length; h++) {
      ok = +pre[h].dataset.offset === off + h && pre[h].classList.contains('hl');
    }
    if (ok && pre.length > 0 && pre.length < lit.length) {
      var pair = [getComputedStyle(pre[0]).backgroundColor, getComputedStyle(lit[pre.length]).backgroundColor];
      if (!seenShade[pair.join()]) { seenShade[pair.join()] = true; shades.push(pair); }
    }
    if (!ok) bad.push(el.tagName + ' ' + (el.textContent || '').slice(0, 40) + ' at ' + off + '+' + size + ' pane ' + pane + ': lit ' + lit.length + ', prefix lit ' + pre.length);
  }
  var bytes = [];
  var panes = document.querySelectorAll('.pane');
  for (var p = 0; p < panes.length; p++) {
    var spans = panes[p].querySelectorAll('.hex [data-offset]');
    for (var s = 0; s < spans.length; s++) {
      spans[s].click();
      var sel = document.querySelector('#tree tr.sel');
      bytes.push([+panes[p].dataset.pane, +spans[s].dataset.offset, sel ? +sel.dataset.n : -1]);
    }
  }
  return {fields: fields, bad: bad, bytes: bytes, shades: shades, frame: +document.querySelector('#rows tr.cur').dataset.frame};
})(%d)`

// FieldCheck is what CheckFields found.
type FieldCheck struct {
	// Fields are the tree's rows in order; Bad, the field elements that did not light exactly
	// their bytes; Bytes, for every byte clicked, its pane, offset and the index in Fields of
	// the field it selected (-1: none); Frame, the data-frame of the entry selected.
	Fields []Field  `json:"fields"`
	Bad    []string `json:"bad"`
	Bytes  [][3]int `json:"bytes"`
	Frame  int      `json:"frame"`
	// Shades are the background colours of a prefix byte and of a content byte, lit together.
	Shades [][2]string `json:"shades"`
}

// Field is one field in depth-first order: its pane (0: the frame; k: the k-th decompressed
// payload, in the order they come), offset, size and depth.
type Field struct {
	Name   string `json:"name"`
	Pane   int    `json:"pane"`
	Offset int    `json:"offset"`
	Size   int    `json:"size"`
	Depth  int    `json:"depth"`
	Prefix int    `json:"prefix"` // bytes of its length or count prefix
}

// CheckFields selects message i of a workshop page (window.kdissect.select), then clicks
// every field element and every byte, through the DOM contract only.
func (p *Page) CheckFields(i int) FieldCheck {
	p.t.Helper()
	var got FieldCheck
	p.Eval(strings.Replace(checkScript, "%d", strconv.Itoa(i), 1), &got)
	return got
}

// JSONNode is a node of the JSON lines' field tree (--format json), the independent account of
// what a page must show.
type JSONNode struct {
	Name   string     `json:"name"`
	Type   string     `json:"type"`
	Offset int        `json:"offset"`
	Size   int        `json:"size"`
	Value  any        `json:"value"`
	Fields []JSONNode `json:"fields"`
	Prefix *struct {
		Size int `json:"size"`
	} `json:"prefix"`
}

// Flatten lists a JSON field tree in depth-first order, each decompressed payload's nodes in a
// pane of their own, numbered as they come.
func Flatten(ns []JSONNode) []Field {
	var out []Field
	panes := 0
	var walk func(ns []JSONNode, pane, depth int)
	walk = func(ns []JSONNode, pane, depth int) {
		for _, n := range ns {
			f := Field{Name: n.Name, Pane: pane, Offset: n.Offset, Size: n.Size, Depth: depth}
			if n.Prefix != nil {
				f.Prefix = n.Prefix.Size
			}
			out = append(out, f)
			inner := pane
			if n.Type == "compressed_records" && len(n.Fields) > 0 {
				panes++
				inner = panes
			}
			walk(n.Fields, inner, depth+1)
		}
	}
	walk(ns, 0, 0)
	return out
}

// innermost is the index of the deepest field of pane that holds byte off (the last of them
// in depth-first order), or -1.
func innermost(fs []Field, pane, off int) int {
	best := -1
	for i, f := range fs {
		if f.Pane == pane && f.Size > 0 && off >= f.Offset && off < f.Offset+f.Size && (best < 0 || f.Depth >= fs[best].Depth) {
			best = i
		}
	}
	return best
}

// Compare says how the page's fields differ from want (Flatten of the JSON lines' tree): the
// tree must list the same fields at the same pane, offset, size and depth, every field element
// must have lit exactly its bytes, and every byte must have selected its innermost field.
func (c FieldCheck) Compare(want []Field) []string {
	var errs []string
	if len(c.Fields) != len(want) {
		return []string{fmt.Sprintf("the tree has %d fields, the JSON %d", len(c.Fields), len(want))}
	}
	for k, w := range want {
		g := c.Fields[k]
		if g.Pane != w.Pane || g.Offset != w.Offset || g.Size != w.Size || g.Depth != w.Depth || g.Prefix != w.Prefix || !strings.HasSuffix(strings.TrimSuffix(g.Name, "?"), strings.TrimSuffix(w.Name, "?")) {
			return []string{fmt.Sprintf("field %d: page %+v, JSON %+v", k, g, w)}
		}
	}
	errs = append(errs, c.Bad...)
	prefixed := false
	for _, f := range want {
		prefixed = prefixed || (f.Prefix > 0 && f.Prefix < f.Size)
	}
	if prefixed && len(c.Shades) == 0 {
		errs = append(errs, "no field with a prefix lit its prefix and its content")
	}
	for _, s := range c.Shades {
		if s[0] == s[1] || s[0] == "" {
			errs = append(errs, fmt.Sprintf("a prefix and its content lit in the same shade: %q", s))
		}
	}
	for _, bs := range c.Bytes {
		if w := innermost(want, bs[0], bs[1]); w != bs[2] && w >= 0 {
			errs = append(errs, fmt.Sprintf("byte %d of pane %d selects field %d, want %d (%+v)", bs[1], bs[0], bs[2], w, want[w]))
		}
	}
	if len(c.Bytes) == 0 {
		errs = append(errs, "no byte to click")
	}
	return errs
}
