package render_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/render"
)

// doctoredPage writes the page of a capture with the doctor's findings in its panel, the
// doctor told of every message shown as a run of --format html tells it, then extra; it
// returns its path and the findings.
func doctoredPage(t *testing.T, capture string, isServerPort func(uint16) bool, extra ...doctor.Finding) (string, []doctor.Finding) {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f := render.PageFormat()
	d := doctor.New()
	f.Needs.Facts = true
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: dissect.SelectAll(), Keep: d.Reads()})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	out := f.New(&page, render.Options{MaxBytes: 64})
	p, err := dissect.New(dissect.Config{Codec: dissect.NewCodec(set, plan, dissect.CodecOptions{}), Out: out, Plan: plan,
		Select: dissect.SelectAll(), Detect: true, Workers: 1, IsServerPort: isServerPort, OnShow: d.Add})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.File(capture); err != nil {
		t.Fatal(err)
	}
	fs := append(d.Findings(), extra...)
	out.(render.FindingsPage).Findings(fs)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "findings.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, fs
}

// panelState is what the page shows after a click in its findings panel.
type panelState struct {
	Findings []string // each finding's summary: severity, id, title
	Selected int      // the frame of the selected message (-1: none)
	Row      int      // the frame of the list's row marked selected
	Heading  string   // the detail's heading
	Bytes    int      // the bytes drawn in the hex dump of the selected message
	Listed   []int    // the frames of the rows listed
	Bar      bool     // the bar that says the list shows a finding's evidence is shown
}

const panelScript = `(function () {
  var v = window.kdissect.view(), r = document.querySelector('#rows tr.cur');
  return {
    findings: Array.prototype.map.call(document.querySelectorAll('#findings .finding > summary'), function (s) { return s.textContent; }),
    selected: v ? v.m.frame : -1,
    row: r ? +r.dataset.frame : -1,
    heading: (document.querySelector('#dg h2') || {}).textContent || '',
    bytes: document.querySelectorAll('#panes .pane .b[data-offset]').length,
    listed: Array.prototype.map.call(document.querySelectorAll('#rows tr[data-frame]'), function (r) { return +r.dataset.frame; }),
    bar: !document.getElementById('evbar').hidden
  };
})()`

// TestFindingsPanel opens the page of a capture with findings in Chromium: the panel lists
// them worst first, as the doctor does; clicking a finding's evidence narrows the list to the
// messages of its frames and selects the first, drawn as a click on it draws it; the button
// works from the keyboard too; "show every message" lists them all again. No console error, no
// request but the page.
func TestFindingsPanel(t *testing.T) {
	b := browsertest.Start(t)
	path, fs := doctoredPage(t, filepath.Join("..", "pcaps", "kgo-filters.pcap"), nil)
	if len(fs) < 2 {
		t.Fatalf("kgo-filters.pcap: %d findings, the test wants a few", len(fs))
	}
	url := "file://" + path
	p := b.Open(t, url)
	var all panelState
	p.Eval(panelScript, &all)
	if len(all.Findings) != len(fs) {
		t.Fatalf("the panel lists %d findings, the doctor found %d", len(all.Findings), len(fs))
	}
	for i, f := range fs {
		if want := f.Severity.String() + f.ID + f.Title; all.Findings[i] != want {
			t.Errorf("finding %d: the panel says %q, the doctor %q", i, all.Findings[i], want)
		}
	}
	for i, f := range fs {
		var got panelState
		p.Eval(`(function () {
		  var d = document.querySelectorAll('#findings .finding')[`+strconv.Itoa(i)+`];
		  document.getElementById('findings').open = true;
		  d.open = true;
		  d.querySelector('button[data-role=evidence]').click();
		  return true;
		})()`, nil)
		p.Eval(panelScript, &got)
		first := f.Evidence.Frames[0]
		if got.Selected != first || got.Row != first {
			t.Errorf("%s %q: selected frame %d, row %d; its first evidence frame is %d", f.ID, f.Title, got.Selected, got.Row, first)
		}
		if got.Bytes == 0 || !bytes.HasPrefix([]byte(got.Heading), []byte("#"+strconv.Itoa(first)+" ")) {
			t.Errorf("%s: the detail shows %q with %d bytes, not the message of frame %d", f.ID, got.Heading, got.Bytes, first)
		}
		if !got.Bar || len(got.Listed) == 0 {
			t.Errorf("%s: the list shows %v, bar %v", f.ID, got.Listed, got.Bar)
		}
		for _, fr := range got.Listed {
			if !slices.Contains(f.Evidence.Frames, fr) {
				t.Errorf("%s: frame %d is listed, not one of its evidence %v", f.ID, fr, f.Evidence.Frames)
			}
		}
		p.Eval(`document.getElementById('ev-all').click(); true`, nil)
		p.Eval(panelScript, &got)
		if len(got.Listed) != len(all.Listed) || got.Bar {
			t.Errorf("%s: show every message lists %d of %d (bar %v)", f.ID, len(got.Listed), len(all.Listed), got.Bar)
		}
	}

	// From the keyboard: the last finding's evidence button, focused, pressed with Enter, with
	// another message selected before.
	last := fs[len(fs)-1]
	var before panelState
	p.Eval(`window.kdissect.select(window.kdissect.messages().length - 1); true`, nil)
	p.Eval(panelScript, &before)
	if before.Selected == last.Evidence.Frames[0] {
		t.Fatalf("the last message is the evidence of %s", last.ID)
	}
	p.Eval(`(function () { var d = document.querySelectorAll('#findings .finding'); d[d.length - 1].querySelector('button[data-role=evidence]').focus(); return true; })()`, nil)
	if err := chromedp.Do(p.Context(), pressEnter); err != nil {
		t.Fatal(err)
	}
	var got panelState
	p.Eval(panelScript, &got)
	if got.Selected != last.Evidence.Frames[0] {
		t.Errorf("Enter on the evidence of %s selected frame %d, not %d", last.ID, got.Selected, last.Evidence.Frames[0])
	}
	if flag.Lookup("update").Value.String() == "true" {
		p.Navigate(url)
		p.Eval(`(function () { document.getElementById('findings').open = true; document.querySelectorAll('#findings .finding')[0].open = true;
		  document.querySelector('#findings .finding button[data-role=evidence]').click(); return true; })()`, nil)
		shootTop(t, p, filepath.Join("..", "docs", "page-findings.png"), "#dg .meta")
	}
	p.Check(onlyItself(url))
}

// pressEnter presses Enter as a keyboard does: a key down that carries its text, whose press
// (the click of a focused button) a keydown handler's preventDefault cancels, and a key up.
// (chromedp.KeyEvent sends the text in an event of its own, which nothing cancels.)
var pressEnter = chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
	down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13, Text: "\r", UnmodifiedText: "\r"}
	up := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
	for _, k := range []input.DispatchKeyEventParams{down, up} {
		if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, k); err != nil {
			return err
		}
	}
	return nil
})

// shootTop takes a screenshot of the page at 1280x720 down to the bottom of the element sel
// names: the panels above the detail, without the rest, which the other screenshots show.
func shootTop(t *testing.T, p *browsertest.Page, path, sel string) {
	t.Helper()
	p.Viewport(1280, 720)
	var bottom float64
	p.Eval(`new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(function () {
	  r(Math.ceil(document.querySelector('`+sel+`').getBoundingClientRect().bottom) + 8); }); }); })`, &bottom)
	shot := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		r, err := cdp.Call(ctx, tg, page.CaptureScreenshot, page.CaptureScreenshotParams{Clip: &page.Viewport{Width: 1280, Height: min(bottom, 720), Scale: 1}})
		if err != nil {
			return err
		}
		return os.WriteFile(path, r.Data, 0o644)
	})
	if err := chromedp.Do(p.Context(), shot); err != nil {
		t.Fatal(err)
	}
}
