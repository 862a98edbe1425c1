package render_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/render"
)

// The messages a projected lesson opens: a Produce v13 request, a Fetch response with records
// and a JoinGroup request, each from a capture of pcaps/.
var lessonMessages = []struct {
	capture string
	frame   int
	title   string
}{
	{"kgo-filters.pcap", 17, "Produce Request v13"},
	{"kgo-produce-fetch.pcap", 69, "Fetch Response"},
	{"kgo-filters.pcap", 92, "JoinGroup Request v9"},
}

// inViewScript selects the message of frame %d, then clicks each of its first 10 fields, in
// the tree and in the diagram, and says where a lit byte, the field's diagram box or its tree
// row is not inside both the viewport and the visible part of its pane (getBoundingClientRect).
const inViewScript = `(async function (frame) {
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
  var rows = document.querySelectorAll('#tree tr[data-n]'), checked = 0;
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
      for (var i = 0; i < lit.length; i++) inside(lit[i], how + ': byte ' + lit[i].dataset.offset);
      inside(document.querySelector('#diagram [data-n="' + n + '"]'), how + ': its box');
      inside(rows[k], how + ': its row');
      checked++;
    }
  }
  return { title: title, checked: checked, bad: bad };
})(%d)`

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
			p.Eval(strings.Replace(inViewScript, "%d", strconv.Itoa(m.frame), 1), &got)
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

// TestPageExplain: the explanation under the bytes shows the working of the pinned field as
// --explain does in the terminal (the prefix byte in hex, the compact rule, the length it
// gives), and ] steps through the parts, lighting the prefix, then the content.
func TestPageExplain(t *testing.T) {
	b := browsertest.Start(t)
	url := "file://" + writePage(t, "kgo-filters.pcap", render.Options{MaxBytes: 64})
	p := b.Open(t, url)
	p.Viewport(1280, 720)

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
}
