package render_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/render"
)

// dissectTo runs the pipeline over a capture of pcaps/ in format name and returns the output.
func dissectTo(t testing.TB, capture, name string, o render.Options, co dissect.CodecOptions) []byte {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, ok := render.LookupFormat(name)
	if !ok {
		t.Fatalf("no format %q", name)
	}
	c, err := dissect.NewCodec(set, f, co)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p, err := dissect.New(dissect.Config{Codec: c, Out: f.New(&out, o), Needs: f.Needs, Select: dissect.SelectAll(), Detect: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Files([]string{filepath.Join("..", "pcaps", capture)}, nil, func(err error) { t.Logf("%s: %v", capture, err) }); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// jsonNode is a node of the JSON lines' field tree, the independent account of what the page
// must show.
type jsonNode struct {
	Name   string     `json:"name"`
	Offset int        `json:"offset"`
	Size   int        `json:"size"`
	Fields []jsonNode `json:"fields"`
	Type   string     `json:"type"`
	Value  any        `json:"value"`
	Prefix *struct {
		Size int `json:"size"`
	} `json:"prefix"`
}

type jsonMessage struct {
	Frame   int        `json:"frame"`
	Kind    string     `json:"kind"`
	API     string     `json:"api_name"`
	Version int        `json:"api_version"`
	Fields  []jsonNode `json:"fields"`
}

// kindKey tells messages apart for the field-by-field check: API, direction, version, and the
// kinds of record data they hold (codecs, legacy message sets), so that one of each is checked.
func (m jsonMessage) kindKey() string {
	k := fmt.Sprintf("%s %s v%d", m.API, m.Kind, m.Version)
	var walk func(ns []jsonNode)
	walk = func(ns []jsonNode) {
		for _, n := range ns {
			switch n.Type {
			case "compressed_records", "record_batch", "message":
				k += " " + n.Type + fmt.Sprint(n.Value)
			}
			walk(n.Fields)
		}
	}
	walk(m.Fields)
	return k
}

func jsonMessages(t testing.TB, capture string) []jsonMessage {
	t.Helper()
	var out []jsonMessage
	for _, line := range bytes.Split(dissectTo(t, capture, "json", render.Options{}, dissect.CodecOptions{}), []byte("\n")) {
		if len(line) == 0 || bytes.Contains(line[:min(len(line), 40)], []byte(`"kind":"notice"`)) {
			continue
		}
		var m jsonMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// flatField is one field in depth-first order: its pane (0: the frame; k: the k-th
// decompressed payload, in the order they come), offset, size and depth.
type flatField struct {
	Name   string `json:"name"`
	Pane   int    `json:"pane"`
	Offset int    `json:"offset"`
	Size   int    `json:"size"`
	Depth  int    `json:"depth"`
	Prefix int    `json:"prefix"` // bytes of its length or count prefix
}

func flatten(ns []jsonNode) []flatField {
	var out []flatField
	panes := 0
	var walk func(ns []jsonNode, pane, depth int)
	walk = func(ns []jsonNode, pane, depth int) {
		for _, n := range ns {
			f := flatField{Name: n.Name, Pane: pane, Offset: n.Offset, Size: n.Size, Depth: depth}
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
func innermost(fs []flatField, pane, off int) int {
	best := -1
	for i, f := range fs {
		if f.Pane == pane && f.Size > 0 && off >= f.Offset && off < f.Offset+f.Size && (best < 0 || f.Depth >= fs[best].Depth) {
			best = i
		}
	}
	return best
}

// checkScript selects message i of the page, then clicks every field element (tree rows and
// diagram boxes) and reports the bytes lit; then clicks every byte of every pane and reports
// the field selected. It only reads the DOM contract: data-offset, data-size, data-prefix, class
// hl, and class hlp on the bytes of a length or count prefix, in a shade of their own.
const checkScript = `(function (i) {
  kdissect.select(i);
  var more = document.querySelectorAll('#detail button');
  for (var k = 0; k < more.length; k++) more[k].click();  // draw every field and every byte
  var rows = document.querySelectorAll('#tree tr[data-offset]');
  var fields = [], bad = [], shades = [], seenShade = {};
  for (var r = 0; r < rows.length; r++) {
    var depth = rows[r].querySelector('td.f').textContent.match(/^ */)[0].length / 2;
    fields.push({name: rows[r].querySelector('td.f').textContent.trim(), pane: +rows[r].dataset.pane,
      offset: +rows[r].dataset.offset, size: +rows[r].dataset.size, depth: depth, prefix: +(rows[r].dataset.prefix || 0)});
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

type pageCheck struct {
	Fields []flatField `json:"fields"`
	Bad    []string    `json:"bad"`
	// Shades are the background colours of a prefix byte and of a content byte, lit together.
	Shades [][2]string `json:"shades"`
	Bytes  [][3]int    `json:"bytes"`
	Frame  int         `json:"frame"`
}

func writePage(t *testing.T, capture string, o render.Options) string {
	t.Helper()
	page := dissectTo(t, capture, "html", o, dissect.CodecOptions{})
	path := filepath.Join(t.TempDir(), strings.TrimSuffix(capture, filepath.Ext(capture))+".html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// onlyItself allows the page's own URL and nothing else.
func onlyItself(url string) func(string) bool {
	return func(u string) bool { return u == url }
}

// TestPageInBrowser opens the page of every capture in pcaps/ in Chromium: no console error, no
// request but the page itself, every message listed in order; and for every message of the
// captures with compressed batches and legacy message sets, every field lights exactly its
// bytes and every byte selects its innermost field.
func TestPageInBrowser(t *testing.T) {
	b := browsertest.Start(t)
	captures, err := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap*"))
	if err != nil || len(captures) == 0 {
		t.Fatal("no captures in pcaps/", err)
	}
	deep := map[string]bool{"kgo-codecs.pcap": true, "sarama-codecs.pcap": true, "kafkago-produce-consume.pcap": true,
		"kgo-admin.pcapng": true, "kgo-sasl-plain.pcap": true}
	for _, c := range captures {
		name := filepath.Base(c)
		t.Run(name, func(t *testing.T) {
			want := jsonMessages(t, name)
			url := "file://" + writePage(t, name, render.Options{MaxBytes: 64})
			p := b.Open(t, url)
			var frames []int
			p.Eval(`Array.prototype.map.call(document.querySelectorAll('#rows tr[data-frame]'), function (r) { return +r.dataset.frame; })`, &frames)
			if len(frames) != len(want) {
				t.Fatalf("the page lists %d messages, the JSON lines have %d", len(frames), len(want))
			}
			for i := range want {
				if frames[i] != want[i].Frame {
					t.Fatalf("entry %d: data-frame %d, JSON frame %d", i, frames[i], want[i].Frame)
				}
			}
			if deep[name] {
				seen := map[string]bool{}
				for i, m := range want {
					if k := m.kindKey(); !seen[k] {
						seen[k] = true
						checkMessage(t, p, i, m)
					}
				}
			}
			p.Check(onlyItself(url))
		})
	}
}

func checkMessage(t *testing.T, p *browsertest.Page, i int, m jsonMessage) {
	t.Helper()
	var got pageCheck
	start := time.Now()
	p.Eval(strings.Replace(checkScript, "%d", itoa(i), 1), &got)
	t.Logf("frame %d %s %s: %d fields, %d bytes checked in %v", m.Frame, m.API, m.Kind, len(got.Fields), len(got.Bytes), time.Since(start))
	want := flatten(m.Fields)
	if got.Frame != m.Frame {
		t.Fatalf("message %d: selected frame %d, want %d", i, got.Frame, m.Frame)
	}
	if len(got.Fields) != len(want) {
		t.Fatalf("frame %d %s %s: the tree has %d fields, the JSON %d", m.Frame, m.API, m.Kind, len(got.Fields), len(want))
	}
	for k, w := range want {
		g := got.Fields[k]
		if g.Pane != w.Pane || g.Offset != w.Offset || g.Size != w.Size || g.Depth != w.Depth || g.Prefix != w.Prefix || !strings.HasSuffix(strings.TrimSuffix(g.Name, "?"), w.Name) {
			t.Fatalf("frame %d field %d: page %+v, JSON %+v", m.Frame, k, g, w)
		}
	}
	for _, s := range got.Bad {
		t.Errorf("frame %d: %s", m.Frame, s)
	}
	prefixed := false
	for _, f := range want {
		prefixed = prefixed || (f.Prefix > 0 && f.Prefix < f.Size)
	}
	if prefixed && len(got.Shades) == 0 {
		t.Errorf("frame %d: no field with a prefix lit its prefix and its content", m.Frame)
	}
	for _, s := range got.Shades {
		if s[0] == s[1] || s[0] == "" {
			t.Errorf("frame %d: a prefix and its content lit in the same shade: %q", m.Frame, s)
		}
	}
	clicked := 0
	for _, bs := range got.Bytes {
		if w := innermost(want, bs[0], bs[1]); w != bs[2] && w >= 0 {
			t.Errorf("frame %d: byte %d of pane %d selects field %d, want %d (%+v)", m.Frame, bs[1], bs[0], bs[2], w, want[w])
		}
		clicked++
	}
	if clicked == 0 {
		t.Errorf("frame %d: no byte to click", m.Frame)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestPageSecrets: the page of a SASL PLAIN capture holds no password, neither in its values
// nor in its bytes.
func TestPageSecrets(t *testing.T) {
	const capture = "kgo-sasl-plain.pcap"
	shown := dissectTo(t, capture, "json", render.Options{}, dissect.CodecOptions{ShowSecrets: true})
	hidden := dissectTo(t, capture, "json", render.Options{}, dissect.CodecOptions{})
	secrets := secretValues(t, shown, hidden)
	if len(secrets) == 0 {
		t.Fatal("no secret found in the capture: the test would prove nothing")
	}
	page := dissectTo(t, capture, "html", render.Options{}, dissect.CodecOptions{})
	var msgs []struct {
		B string   `json:"b"`
		S []string `json:"s"`
	}
	if err := json.Unmarshal(between(t, page, `<script type="application/json" id="kd-msgs">`, `</script>`), &msgs); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		for _, m := range msgs {
			raw, _ := base64.StdEncoding.DecodeString(m.B)
			if bytes.Contains(raw, []byte(s)) || strings.Contains(strings.Join(m.S, "\n"), s) {
				t.Errorf("the page shows the secret %q", s)
			}
		}
	}
}

// secretValues are the string values that differ between the JSON lines with and without
// --show-secrets.
func secretValues(t *testing.T, shown, hidden []byte) []string {
	var out []string
	sl, hl := bytes.Split(shown, []byte("\n")), bytes.Split(hidden, []byte("\n"))
	if len(sl) != len(hl) {
		t.Fatalf("%d lines with secrets shown, %d without", len(sl), len(hl))
	}
	for i := range sl {
		if bytes.Equal(sl[i], hl[i]) {
			continue
		}
		var a, b map[string]any
		json.Unmarshal(sl[i], &a)
		json.Unmarshal(hl[i], &b)
		out = append(out, diffValues(a["fields"], b["fields"])...)
	}
	return out
}

func diffValues(a, b any) []string {
	var out []string
	switch a := a.(type) {
	case []any:
		bb, _ := b.([]any)
		for i := range a {
			if i < len(bb) {
				out = append(out, diffValues(a[i], bb[i])...)
			}
		}
	case map[string]any:
		bm, _ := b.(map[string]any)
		if v, ok := a["value"].(string); ok && v != bm["value"] && len(v) >= 4 {
			out = append(out, v)
		}
		out = append(out, diffValues(a["fields"], bm["fields"])...)
	}
	return out
}

func between(t *testing.T, b []byte, start, end string) []byte {
	t.Helper()
	i := bytes.Index(b, []byte(start))
	if i < 0 {
		t.Fatalf("no %q in the page", start)
	}
	b = b[i+len(start):]
	j := bytes.Index(b, []byte(end))
	if j < 0 {
		t.Fatalf("no %q after %q", end, start)
	}
	return b[:j]
}

// TestScreenshots takes the README's pictures in Chromium: the page of kgo-codecs.pcap with a
// record of a gzip batch selected, and the schema page of DescribeGroups Response v6. With
// -update they are written to docs/; otherwise to a temporary directory (they are looked at,
// not compared: fonts differ between machines).
func TestScreenshots(t *testing.T) {
	b := browsertest.Start(t)
	dir := t.TempDir()
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		dir = filepath.Join("..", "docs")
	}
	url := "file://" + writePage(t, "kgo-codecs.pcap", render.Options{MaxBytes: 64})
	p := b.Open(t, url)
	var picked string
	p.Eval(`(function () {
	  var rows = document.querySelectorAll('#rows tr[data-frame="68"]');
	  rows[0].click();
	  var f = Array.prototype.filter.call(document.querySelectorAll('#tree tr.dec'), function (r) { return / value$/.test(r.querySelector('td.f').textContent); })[0];
	  f.click();
	  f.scrollIntoView({block: 'end'});
	  return f.querySelector('td.f').textContent.trim() + ' ' + document.querySelectorAll('#panes .hl').length;
	})()`, &picked)
	if !strings.HasPrefix(picked, "value ") {
		t.Fatalf("picked %q", picked)
	}
	p.Check(onlyItself(url))
	p.Screenshot(filepath.Join(dir, "page.png"), 1400, 860)

	var page bytes.Buffer
	c := dissectCodec(t)
	a, _ := c.Schemas.Lookup("DescribeGroups")
	ls, err := render.Layouts(c, a, a.Response)
	if err != nil {
		t.Fatal(err)
	}
	if err := render.WriteLayoutPage(&page, ls, 6); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "schema.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Navigate("file://" + path)
	p.Eval(`document.getElementById('v6').scrollIntoView(); true`, nil)
	p.Check(onlyItself("file://" + path))
	p.Screenshot(filepath.Join(dir, "schema.png"), 1100, 720)
}

func dissectCodec(t testing.TB) *codec.Codec {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return codec.New(set)
}

// TestPageLimit: past --max-messages, the page holds the first messages, counts the others,
// and says so on the page and through Warn.
func TestPageLimit(t *testing.T) {
	all := jsonMessages(t, "kgo-produce-fetch.pcap")
	var warned []string
	page := dissectTo(t, "kgo-produce-fetch.pcap", "html", render.Options{MaxMessages: 5, Warn: func(s string) { warned = append(warned, s) }}, dissect.CodecOptions{})
	var msgs []json.RawMessage
	if err := json.Unmarshal(between(t, page, `<script type="application/json" id="kd-msgs">`, `</script>`), &msgs); err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Limit   int `json:"limit"`
		LeftOut int `json:"left_out"`
	}
	if err := json.Unmarshal(between(t, page, `<script type="application/json" id="kd-meta">`, `</script>`), &meta); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 5 || meta.Limit != 5 || meta.LeftOut != len(all)-5 {
		t.Errorf("%d messages on the page, limit %d, %d left out; the capture has %d", len(msgs), meta.Limit, meta.LeftOut, len(all))
	}
	if len(warned) != 1 || !strings.Contains(warned[0], fmt.Sprintf("%d more were left out", len(all)-5)) {
		t.Errorf("warned %q", warned)
	}
}

var openPage = flag.String("page", "", "TestOpenPage: a page to open in Chromium, timed")

// TestOpenPage opens the page -page names and reports how long Chromium took to load it and to
// draw its first message (for the note's measurements; skipped without -page).
func TestOpenPage(t *testing.T) {
	if *openPage == "" {
		t.Skip("no -page given")
	}
	abs, err := filepath.Abs(*openPage)
	if err != nil {
		t.Fatal(err)
	}
	b := browsertest.Start(t)
	start := time.Now()
	p := b.Open(t, "file://"+abs)
	var n int
	p.Eval(`document.querySelectorAll('#rows tr[data-frame]').length`, &n)
	t.Logf("%s: %d messages listed; loaded in %v, listed and first message drawn after %v", *openPage, n, p.Took, time.Since(start))
	p.Check(onlyItself("file://" + abs))
}
