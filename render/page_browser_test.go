package render_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/render"
)

// The messages a projected lesson opens: a Produce v13 request, a Fetch response with records
// and a JoinGroup request, each from a capture of pcaps/.
var lessonMessages = []struct {
	capture string
	frame   int
	title   string
	last    bool // the last 10 fields rather than the first: far down the bytes of a big message
}{
	{"kgo-filters.pcap", 17, "Produce Request v13", false},
	{"kgo-produce-fetch.pcap", 69, "Fetch Response", false},
	{"kgo-filters.pcap", 92, "JoinGroup Request v9", false},
	{"kgo-filters.pcap", 115, "Fetch Response", true},
}

// inViewScript selects the message of frame %d, then clicks each of its first (or LAST) 10 fields, in
// the tree and in the diagram, and says where a lit byte, the field's diagram box or its tree
// row is not inside both the viewport and the visible part of its pane (getBoundingClientRect).
const inViewScript = `(async function (frame, last) {
  var frames = function () { return new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(r); }); }); };
  document.querySelector('#rows tr[data-frame="' + frame + '"]').click();
  await frames();
  var bad = [], title = document.querySelector('#dg h2').textContent;
  function inside(e, what) {
    var r = e.getBoundingClientRect(), pane = e.closest('#dg, #fields, #panes');
    var p = pane.getBoundingClientRect(), top = p.top + pane.clientTop, left = p.left + pane.clientLeft;
    var box = { top: Math.max(0, top), left: Math.max(0, left),
      bottom: Math.min(innerHeight, top + pane.clientHeight), right: Math.min(innerWidth, left + pane.clientWidth) };
    if (r.height > box.bottom - box.top && e.querySelector('.l')) {
      // A box taller than its pane (an array holding most of the message) cannot be in view:
      // its heading must be, and the box must fill the pane (but for the margin above it).
      var l = e.querySelector('.l').getBoundingClientRect();
      if (l.top < box.top - 0.5 || l.bottom > box.bottom + 0.5 || r.top > box.top + 8 || r.bottom < box.bottom - 0.5) {
        bad.push(what + ' (taller than its pane) at ' + [r.left, r.top, r.right, r.bottom].map(Math.round) + ': its heading or the pane ' + [box.left, box.top, box.right, box.bottom].map(Math.round) + ' not filled');
      }
      return;
    }
    if (r.width === 0 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5 || r.left < box.left - 0.5 || r.right > box.right + 0.5) {
      bad.push(what + ' at ' + [r.left, r.top, r.right, r.bottom].map(Math.round) + ', outside ' + pane.id + ' ' + [box.left, box.top, box.right, box.bottom].map(Math.round));
    }
  }
  var rows = Array.prototype.slice.call(document.querySelectorAll('#tree tr[data-n]')), checked = 0;
  if (last) rows = rows.slice(-10);
  for (var k = 0; k < Math.min(10, rows.length); k++) {
    var n = rows[k].dataset.n, name = rows[k].querySelector('td.f').textContent.trim();
    var targets = [rows[k], document.querySelector('#diagram [data-n="' + n + '"]')];
    for (var t = 0; t < targets.length; t++) {
      if (!targets[t]) { bad.push(name + ': no diagram box'); continue; }
      targets[t].click();
      await frames();
      var how = name + ' (clicked in the ' + (t ? 'diagram' : 'tree') + ')';
      var lit = document.querySelectorAll('#panes .hex .hl');
      if (lit.length !== +rows[k].dataset.size) bad.push(how + ': ' + lit.length + ' bytes lit, size ' + rows[k].dataset.size);
      var panes = document.getElementById('panes'), first = lit.length && lit[0].getBoundingClientRect();
      if (lit.length && lit[lit.length - 1].getBoundingClientRect().bottom - first.top > panes.clientHeight) {
        // More bytes than the pane holds (a 60 KB record value): the first must be in view,
        // and the bytes must fill the pane below it.
        inside(lit[0], how + ': its first byte (of more than the pane holds)');
        if (lit[lit.length - 1].getBoundingClientRect().bottom < panes.getBoundingClientRect().top + panes.clientHeight) bad.push(how + ': its bytes do not fill the pane');
      } else for (var i = 0; i < lit.length; i++) inside(lit[i], how + ': byte ' + lit[i].dataset.offset);
      inside(document.querySelector('#diagram [data-n="' + n + '"]'), how + ': its box');
      inside(rows[k], how + ': its row');
      checked++;
    }
  }
  return { title: title, checked: checked, bad: bad };
})(%d, LAST)`

// TestPageFieldsInView: on a projector (1280×720) and a monitor (1920×1080), clicking any of
// the first fields of a Produce request, a Fetch response and a JoinGroup request, in the tree
// or in the diagram, shows all its lit bytes, its diagram box and its tree row, each in its
// pane and in the viewport.
func TestPageFieldsInView(t *testing.T) {
	b := browsertest.Start(t)
	pages := map[string]string{}
	for _, m := range lessonMessages {
		if pages[m.capture] == "" {
			pages[m.capture] = "file://" + writePage(t, m.capture, render.Options{MaxBytes: 64})
		}
	}
	for _, size := range [][2]int64{{1280, 720}, {1920, 1080}} {
		for _, m := range lessonMessages {
			p := b.Open(t, pages[m.capture])
			p.Viewport(size[0], size[1])
			var got struct {
				Title   string
				Checked int
				Bad     []string
			}
			p.Eval(strings.NewReplacer("%d", strconv.Itoa(m.frame), "LAST", strconv.FormatBool(m.last)).Replace(inViewScript), &got)
			if !strings.Contains(got.Title, m.title) || got.Checked != 20 {
				t.Fatalf("%dx%d frame %d: %q, %d clicks checked", size[0], size[1], m.frame, got.Title, got.Checked)
			}
			for _, e := range got.Bad {
				t.Errorf("%dx%d frame %d %s: %s", size[0], size[1], m.frame, m.title, e)
			}
			if shots := os.Getenv("KDISSECT_SHOTS"); shots != "" {
				p.Screenshot(filepath.Join(shots, strconv.FormatInt(size[0], 10)+"-"+strconv.Itoa(m.frame)+".png"), size[0], size[1])
			}
			p.Check(onlyItself(pages[m.capture]))
		}
	}
	// Nothing runs out of its pane sideways: the list's addresses (which broker) at 1280 and
	// up, and the field tree of a deep message at 800.
	p := b.Open(t, pages["kgo-produce-fetch.pcap"])
	for _, size := range [][2]int64{{1280, 720}, {1920, 1080}, {800, 600}} {
		p.Viewport(size[0], size[1])
		var over []string
		p.Eval(`(async function () {
		  document.querySelector('#rows tr[data-frame="69"]').click();
		  await new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(r); }); });
		  var out = [];
		  ['list', 'fields'].forEach(function (id) {
		    var e = document.getElementById(id);
		    if (e.scrollWidth > e.clientWidth) out.push(id + ': ' + e.scrollWidth + ' px wide in ' + e.clientWidth);
		  });
		  return out;
		})()`, &over)
		for _, o := range over {
			t.Errorf("%dx%d: %s", size[0], size[1], o)
		}
	}
	p.Check(onlyItself(pages["kgo-produce-fetch.pcap"]))
}

// explainScript selects the message of frame %d and pins the field named by NAME in its tree,
// then says what the explanation shows, the bytes lit as its prefix, and the bytes each step
// lights as ] is pressed through them.
const explainScript = `(async function (frame, name) {
  var frames = function () { return new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(r); }); }); };
  document.querySelector('#rows tr[data-frame="' + frame + '"]').click();
  await frames();
  var row = Array.prototype.filter.call(document.querySelectorAll('#tree tr[data-n]'), function (r) { return r.querySelector('td.f').textContent.trim() === name; })[0];
  row.click();
  var ex = document.querySelector('[data-role=explain]');
  var offs = function (sel) { return Array.prototype.map.call(document.querySelectorAll('#panes .hex ' + sel), function (s) { return +s.dataset.offset; }); };
  var out = { text: ex.textContent, size: +row.dataset.size, offset: +row.dataset.offset,
    prefix: Array.prototype.map.call(document.querySelectorAll('#panes .hex .hlp'), function (s) { return s.textContent; }).join(''), steps: [] };
  var n = ex.querySelectorAll('li[data-step]').length;
  for (var i = 0; i < n; i++) {
    document.dispatchEvent(new KeyboardEvent('keydown', { key: ']', bubbles: true }));
    await frames();
    out.steps.push(offs('.stp'));
  }
  return out;
})(%d, NAME)`

type explained struct {
	Text   string
	Size   int
	Offset int
	Prefix string
	Steps  [][]int
}

func explainField(t *testing.T, p *browsertest.Page, frame int, name string) explained {
	t.Helper()
	var got explained
	q, _ := json.Marshal(name)
	p.Eval(strings.Replace(strings.Replace(explainScript, "%d", strconv.Itoa(frame), 1), "NAME", string(q), 1), &got)
	return got
}

// projectorPage opens the page of a capture of pcaps/ in a browser window of a projector's
// size (1280×720), and says its URL.
func projectorPage(t *testing.T, capture string) (*browsertest.Page, string) {
	t.Helper()
	b := browsertest.Start(t)
	url := "file://" + writePage(t, capture, render.Options{MaxBytes: 64})
	p := b.Open(t, url)
	p.Viewport(1280, 720)
	return p, url
}

// TestPageExplain: the explanation under the bytes shows the working of the pinned field as
// --explain does in the terminal (the prefix byte in hex, the compact rule, the length it
// gives), and ] steps through the parts, lighting the prefix, then the content; a field of a
// decompressed payload has its offset marked d, as in the tree.
func TestPageExplain(t *testing.T) {
	p, url := projectorPage(t, "kgo-filters.pcap")

	got := explainField(t, p, 92, "GroupId") // a compact string: its length + 1 before it
	if len(got.Prefix) != 2 {
		t.Fatalf("GroupId: prefix bytes lit %q, want one byte", got.Prefix)
	}
	for _, want := range []string{"0x" + got.Prefix + " uvarint", fmt.Sprintf("→ length %d", got.Size-1), "length in bytes + 1, so 0 is null"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("GroupId: the explanation %q does not say %q", got.Text, want)
		}
	}
	var content []int
	for o := got.Offset + 1; o < got.Offset+got.Size; o++ {
		content = append(content, o)
	}
	if want := [][]int{{got.Offset}, content}; fmt.Sprint(got.Steps) != fmt.Sprint(want) {
		t.Errorf("GroupId: the steps lit %v, want the prefix then the content %v", got.Steps, want)
	}

	got = explainField(t, p, 92, "request_api_version")
	if !strings.Contains(got.Text, "request header v2") {
		t.Errorf("request_api_version: the explanation %q does not say why the header is v2", got.Text)
	}
	got = explainField(t, p, 17, "timestampDelta") // a record's zigzag varint
	if !strings.Contains(got.Text, "→ zigzag ") || !strings.Contains(got.Text, "then zigzag") || len(got.Steps) != 1 || len(got.Steps[0]) != got.Size {
		t.Errorf("timestampDelta: the explanation %q, steps %v", got.Text, got.Steps)
	}
	p.Check(onlyItself(url))

	// A field of a decompressed payload: its offset marked d, as in the tree.
	url = "file://" + writePage(t, "kgo-codecs.pcap", render.Options{MaxBytes: 64})
	p.Navigate(url)
	got = explainField(t, p, 68, "offsetDelta")
	if want := fmt.Sprintf(" at d0x%04x", got.Offset); !strings.Contains(got.Text, want) {
		t.Errorf("offsetDelta of a gzip batch: the explanation %q does not say %q", got.Text, want)
	}
	p.Check(onlyItself(url))
}

// contrastScript pins GroupId of the JoinGroup request (frame 92), previews another field, and
// measures, from computed styles in the theme given, the contrast of the selection marks with
// what is under them and of a prefix byte's colour with a content byte's (WCAG's formula); then
// steps to the content with ] and measures the stepped characters' mark.
const contrastScript = `(async function (theme) {
  var frames = function () { return new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(r); }); }); };
  document.documentElement.setAttribute('data-theme', theme);
  document.querySelector('#rows tr[data-frame="92"]').click();
  await frames();
  var rows = Array.prototype.filter.call(document.querySelectorAll('#tree tr[data-n]'), function (r) { return /^(GroupId|MemberId)$/.test(r.querySelector('td.f').textContent.trim()); });
  rows[0].click();
  document.querySelector('#diagram [data-n="' + rows[1].dataset.n + '"]').dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
  await frames();
  function rgb(s) { var m = /rgba?\((\d+), (\d+), (\d+)/.exec(s); return m ? [+m[1], +m[2], +m[3]] : null; }
  function lum(c) {
    var l = c.map(function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  }
  function contrast(a, b) { var x = lum(rgb(a)), y = lum(rgb(b)); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); }
  function hue(s) {
    var c = rgb(s).map(function (v) { return v / 255; }), mx = Math.max.apply(null, c), mn = Math.min.apply(null, c), d = mx - mn;
    if (!d) return -1;
    var h = mx === c[0] ? (c[1] - c[2]) / d % 6 : mx === c[1] ? (c[2] - c[0]) / d + 2 : (c[0] - c[1]) / d + 4;
    return (h * 60 + 360) % 360;
  }
  function apart(a, b) { var d = Math.abs(hue(a) - hue(b)); return Math.min(d, 360 - d); }
  var cs = function (sel) { var e = document.querySelector(sel); return e ? getComputedStyle(e) : null; };
  var box = cs('#diagram .box.sel'), tr = cs('#tree tr.sel'), hv = cs('#diagram .box.hv');
  var pre = cs('#panes .hex .hlp'), con = cs('#panes .hex .hl:not(.hlp)'), bg = getComputedStyle(document.body).backgroundColor;
  var out = {
    'selected box outline / its background': contrast(box.outlineColor, box.backgroundColor),
    'selected box outline / the page': contrast(box.outlineColor, bg),
    'selected row mark / its background': contrast(tr.boxShadow, tr.backgroundColor),
    'previewed box outline / its background': contrast(hv.outlineColor, hv.backgroundColor),
    'prefix byte / content byte': contrast(pre.backgroundColor, con.backgroundColor),
    'prefix text / prefix byte': contrast(pre.color, pre.backgroundColor),
    'content text / content byte': contrast(con.color, con.backgroundColor),
    'hue apart of prefix and content': apart(pre.backgroundColor, con.backgroundColor)
  };
  // ] twice: the prefix, then the content, whose characters in the text column must stay
  // readable under the step's mark (no outline over them).
  var preBg = pre.backgroundColor, conBg = con.backgroundColor;
  for (var i = 0; i < 2; i++) {
    document.dispatchEvent(new KeyboardEvent('keydown', { key: ']', bubbles: true }));
    await frames();
  }
  var stp = cs('#panes .hex .stpa');
  out['stepped text / stepped byte'] = contrast(stp.color, stp.backgroundColor);
  out['stepped byte / content byte'] = contrast(stp.backgroundColor, conBg);
  out['hue apart of stepped and prefix'] = apart(stp.backgroundColor, preBg);
  out['outline over stepped characters (px)'] = stp.outlineStyle === 'none' ? 0 : parseFloat(stp.outlineWidth);
  return out;
})(%q)`

// TestPageProjector: the page reads on a projector. The selection, the preview and the prefix
// against the content contrast 3:1 or more in light and dark (computed from the styles
// Chromium applies), prefix and content differ in hue, a stepped part (]) is marked by a
// background that contrasts with the content's and no outline over its characters, and A+ grows the diagram's text, kept
// in the URL across a reload.
func TestPageProjector(t *testing.T) {
	p, url := projectorPage(t, "kgo-filters.pcap")
	for _, theme := range []string{"light", "dark"} {
		var got map[string]float64
		p.Eval(strings.Replace(contrastScript, "%q", strconv.Quote(theme), 1), &got)
		if len(got) != 12 {
			t.Fatalf("%s: measured %v", theme, got)
		}
		for what, c := range got {
			switch {
			case strings.HasPrefix(what, "outline"):
				if c != 0 {
					t.Errorf("%s: %s: %.0f, want none", theme, what, c)
				}
			case strings.HasPrefix(what, "hue"):
				if c < 60 {
					t.Errorf("%s: %s: %.0f°, want 60° or more", theme, what, c)
				}
			case c < 3:
				t.Errorf("%s: %s: contrast %.2f:1, want 3:1 or more", theme, what, c)
			}
		}
		t.Logf("%s: %v", theme, got)
	}

	const boxFont = `parseFloat(getComputedStyle(document.querySelector('#diagram .box')).fontSize)`
	var before, after, reloaded float64
	var hash string
	p.Eval(boxFont, &before)
	p.Eval(`document.querySelector('[data-role=zoom-in]').click(); document.querySelector('[data-role=zoom-in]').click(); location.hash`, &hash)
	p.Eval(boxFont, &after)
	if after < before*1.2 {
		t.Errorf("A+ twice: the diagram's font went from %.1f px to %.1f px", before, after)
	}
	if !strings.Contains(hash, "zoom=") {
		t.Fatalf("A+: the URL's fragment is %q, with no zoom", hash)
	}
	p.Navigate(url + hash)
	p.Eval(boxFont, &reloaded)
	if reloaded != after {
		t.Errorf("reloaded with %s: the diagram's font is %.1f px, was %.1f px", hash, reloaded, after)
	}
	var smaller float64
	p.Eval(`document.querySelector('[data-role=zoom-out]').click(); `+boxFont, &smaller)
	if smaller >= reloaded {
		t.Errorf("A-: the diagram's font went from %.1f px to %.1f px", reloaded, smaller)
	}
	p.Check(func(u string) bool { return strings.HasPrefix(u, url) })
}

// TestPagePairLinks: a request links to its response and the response back to its request
// (kgo-filters.pcap: JoinGroup #92 answered by #93); an acks=0 Produce says it has none.
func TestPagePairLinks(t *testing.T) {
	b := browsertest.Start(t)
	url := "file://" + writePage(t, "kgo-filters.pcap", render.Options{MaxBytes: 64})
	p := b.Open(t, url)
	var got []string
	p.Eval(`(function () {
	  var out = [], cur = function () { return document.querySelector('#rows tr.cur').dataset.frame; };
	  document.querySelector('#rows tr[data-frame="92"]').click();
	  var a = document.querySelector('#dg .pair .link');
	  out.push(cur() + ' ' + a.textContent);
	  a.click();
	  a = document.querySelector('#dg .pair .link');
	  out.push(cur() + ' ' + a.textContent);
	  a.click();
	  out.push(cur());
	  document.querySelector('#rows tr[data-frame="17"]').click();
	  out.push(cur() + ' ' + document.querySelector('#dg .pair').textContent + ' ' + document.querySelectorAll('#dg .pair .link').length);
	  return out;
	})()`, &got)
	want := []string{"92 answered by #93", "93 answers #92 after ", "92", "17 no response on this page 0"}
	if len(got) != len(want) || got[0] != want[0] || !strings.HasPrefix(got[1], want[1]) || !strings.HasSuffix(got[1], " ms") || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("following the links: %q, want %q", got, want)
	}
	p.Check(onlyItself(url))
}

// TestPageLadder: the conversation view draws one arrow per message of the selected message's
// connection, and of every connection naming the same consumer group (the JSON lines say which:
// a GroupId at the top of the body); clicking an arrow opens its message.
func TestPageLadder(t *testing.T) {
	type line struct {
		Frame  int        `json:"frame"`
		Stream int        `json:"stream"`
		Fields []jsonNode `json:"fields"`
	}
	var lines []line
	for _, b := range bytes.Split(dissectTo(t, "kgo-filters.pcap", "json", render.Options{}, dissect.CodecOptions{}), []byte("\n")) {
		var l line
		if len(b) == 0 || bytes.Contains(b[:min(len(b), 40)], []byte(`"kind":"notice"`)) {
			continue
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	// conversation is the frames of the messages of stream's connection and of those naming
	// its groups.
	conversation := func(stream int) []int {
		streams, groups := map[int]bool{stream: true}, map[any]bool{}
		for _, l := range lines {
			for _, f := range l.Fields {
				if f.Name == "GroupId" && streams[l.Stream] {
					groups[f.Value] = true
				}
			}
		}
		for _, l := range lines {
			for _, f := range l.Fields {
				if f.Name == "GroupId" && groups[f.Value] {
					streams[l.Stream] = true
				}
			}
		}
		var frames []int
		for _, l := range lines {
			if streams[l.Stream] {
				frames = append(frames, l.Frame)
			}
		}
		return frames
	}
	p, url := projectorPage(t, "kgo-filters.pcap")
	var open bool
	p.Eval(`document.getElementById('ladder-toggle').click(); !document.querySelector('[data-role=ladder]').hidden`, &open)
	if !open {
		t.Fatal("the conversation toggle did not show the ladder")
	}
	for _, c := range []struct{ frame, stream int }{{17, 1}, {92, 8}} {
		var got []int
		p.Eval(`(async function (frame) {
		  document.querySelector('#rows tr[data-frame="' + frame + '"]').click();
		  await new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(r); }); });
		  return Array.prototype.map.call(document.querySelectorAll('[data-role=ladder] [data-frame]'), function (a) { return +a.dataset.frame; });
		})(`+strconv.Itoa(c.frame)+`)`, &got)
		want := conversation(c.stream)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("frame %d: the ladder's arrows are frames %v, want %v", c.frame, got, want)
		}
		if streams := map[int]bool{}; c.frame == 92 {
			for _, l := range lines {
				if slices.Contains(want, l.Frame) {
					streams[l.Stream] = true
				}
			}
			if len(streams) < 2 {
				t.Errorf("frame 92: the group's conversation holds streams %v: the test would not see its connections together", streams)
			}
		}
	}
	var opened int
	p.Eval(`(async function () {
	  var a = document.querySelector('[data-role=ladder] [data-frame="99"]');
	  a.dispatchEvent(new MouseEvent('click', { bubbles: true }));
	  return +document.querySelector('#rows tr.cur').dataset.frame;
	})()`, &opened)
	if opened != 99 {
		t.Errorf("clicking the arrow of frame 99 opened frame %d", opened)
	}
	p.Check(onlyItself(url))
}

// TestPageListRows: on a projector (1280×720) every row of the message list is one line, so
// the list shows as many messages as its pane holds; a cell too long for its column (an API
// name, a client id, the addresses) is cut with its full text in a title rather than wrapped;
// the addresses keep room enough to name the broker; the direction's drop-down shows its
// whole label.
func TestPageListRows(t *testing.T) {
	p, url := projectorPage(t, "kgo-filters.pcap")
	var got struct {
		Line    float64
		Heights []float64
		Bad     []string
	}
	p.Eval(`(function () {
	  var rows = document.querySelectorAll('#rows tr'), out = { line: parseFloat(getComputedStyle(rows[0]).lineHeight), heights: [], bad: [] };
	  for (var i = 0; i < rows.length; i++) {
	    out.heights.push(rows[i].getBoundingClientRect().height);
	    var m = rows[i].cells, addr = m[m.length - 1];
	    Array.prototype.forEach.call(m, function (c) {
	      if (c.scrollWidth > c.clientWidth + 1 && c.title !== c.textContent) out.bad.push('frame ' + rows[i].dataset.frame + ': "' + c.textContent + '" cut with the title "' + c.title + '"');
	    });
	    var ch = parseFloat(getComputedStyle(addr).fontSize) * 0.6;
	    if (addr.clientWidth < 24 * ch) out.bad.push('frame ' + rows[i].dataset.frame + ': the addresses have ' + addr.clientWidth + ' px, under 24 characters');
	  }
	  var s = document.getElementById('f-kind'), ctx = document.createElement('canvas').getContext('2d');
	  ctx.font = getComputedStyle(s).font;
	  var w = ctx.measureText(s.options[s.selectedIndex].text).width;
	  if (s.clientWidth < w + 16) out.bad.push('the direction drop-down is ' + s.clientWidth + ' px wide for a label of ' + Math.round(w) + ' px');
	  return out;
	})()`, &got)
	if len(got.Heights) < 20 {
		t.Fatalf("%d rows listed", len(got.Heights))
	}
	for i, h := range got.Heights {
		if h != got.Heights[0] || h > 1.6*got.Line {
			t.Errorf("row %d is %.1f px high (the first %.1f px, a line %.1f px): want one line each", i, h, got.Heights[0], got.Line)
			break
		}
	}
	for _, e := range got.Bad {
		t.Error(e)
	}
	p.Check(onlyItself(url))
}

// TestPageRecordTree: in the field tree of a decompressed batch (kgo-codecs.pcap, frame 68:
// records with headers, deep in the message), at 1280×720 the indentation is capped, so names
// stay in their column and values keep room: no name runs out of its cell, no value is narrower
// than 30 characters, and a value that wraps does so between words (or after a hyphen).
func TestPageRecordTree(t *testing.T) {
	p, url := projectorPage(t, "kgo-codecs.pcap")
	var got struct {
		Rows int
		Bad  []string
	}
	p.Eval(`(async function () {
	  document.querySelector('#rows tr[data-frame="68"]').click();
	  await new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(r); }); });
	  var rows = document.querySelectorAll('#tree tr.dec'), out = { rows: rows.length, bad: [] };
	  for (var i = 0; i < rows.length; i++) {
	    var f = rows[i].querySelector('td.f'), v = rows[i].querySelector('td.v'), ch = parseFloat(getComputedStyle(v).fontSize) * 0.6;
	    if (f.scrollWidth > f.clientWidth + 1) out.bad.push(f.textContent.trim() + ': the name runs out of its cell');
	    if (v.clientWidth < 30 * ch) out.bad.push(f.textContent.trim() + ': the value has ' + v.clientWidth + ' px, under 30 characters');
	    var text = v.firstChild, re = /[^\s-]+-?/g, m; // a word, or the part of one up to a hyphen
	    while (text && (m = re.exec(text.data))) {
	      var r = document.createRange();
	      r.setStart(text, m.index);
	      r.setEnd(text, m.index + m[0].length);
	      var tops = {};
	      Array.prototype.forEach.call(r.getClientRects(), function (q) { tops[Math.round(q.top)] = 1; });
	      if (Object.keys(tops).length > 1) out.bad.push(f.textContent.trim() + ': the value breaks inside "' + m[0] + '"');
	    }
	  }
	  return out;
	})()`, &got)
	if got.Rows < 20 {
		t.Fatalf("%d decompressed rows in the tree", got.Rows)
	}
	for _, e := range got.Bad {
		t.Error(e)
	}
	p.Check(onlyItself(url))
}

// TestPageNotices: the summary of the notices says how many there are and what the first one
// is (as the JSON lines give it), rather than a fixed list of kinds the capture may not have.
func TestPageNotices(t *testing.T) {
	var texts []string
	for _, l := range bytes.Split(dissectTo(t, "kgo-filters.pcap", "json", render.Options{}, dissect.CodecOptions{}), []byte("\n")) {
		var n struct{ Kind, Text string }
		if len(l) > 0 && json.Unmarshal(l, &n) == nil && n.Kind == "notice" {
			texts = append(texts, n.Text)
		}
	}
	if len(texts) != 1 {
		t.Fatalf("kgo-filters.pcap has %d notices %q; the test wants one", len(texts), texts)
	}
	b := browsertest.Start(t)
	url := "file://" + writePage(t, "kgo-filters.pcap", render.Options{MaxBytes: 64})
	p := b.Open(t, url)
	var got string
	p.Eval(`document.querySelector('#notices summary').textContent`, &got)
	if want := "1 notice: " + texts[0]; got != want {
		t.Errorf("the notices' summary reads %q, want %q", got, want)
	}
	p.Check(onlyItself(url))
}
