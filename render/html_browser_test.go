package render_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	neturl "net/url"
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
	return dissectFile(t, filepath.Join("..", "pcaps", capture), name, o, co, nil)
}

// dissectFile is dissectTo of any capture file, with Kafka on the ports isServerPort names
// (nil: none) as well as where it is detected.
func dissectFile(t testing.TB, path, name string, o render.Options, co dissect.CodecOptions, isServerPort func(uint16) bool) []byte {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, ok := render.LookupFormat(name)
	if !ok {
		t.Fatalf("no format %q", name)
	}
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: dissect.SelectAll()})
	if err != nil {
		t.Fatal(err)
	}
	c := dissect.NewCodec(set, plan, co)
	var out bytes.Buffer
	p, err := dissect.New(dissect.Config{Codec: c, Out: f.New(&out, o), Plan: plan, Select: dissect.SelectAll(), Detect: true, Workers: 1,
		IsServerPort: isServerPort})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.File(path); err != nil {
		t.Logf("%s: %v", path, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

type jsonNode = browsertest.JSONNode

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
			// No server to ask: the display filter box says so rather than pretend.
			var box struct {
				Disabled    bool
				Placeholder string
				Apply       bool
			}
			p.Eval(`(function () { var b = document.getElementById('f-y'); return {disabled: b.disabled, placeholder: b.placeholder, apply: !document.getElementById('y-apply').hidden}; })()`, &box)
			if !box.Disabled || box.Apply || !strings.Contains(box.Placeholder, "needs kdissect serve") || !strings.Contains(box.Placeholder, "-Y on the command line") {
				t.Errorf("the file page's display filter box: %+v", box)
			}
			if name == "kgo-filters.pcap" {
				// A link with a filter (as a served page's): the page says why it shows everything.
				lp := b.Open(t, url+"?y="+neturl.QueryEscape(`api == "Fetch"`))
				var msg string
				lp.Eval(`document.getElementById('y-msg').textContent`, &msg)
				if !strings.Contains(msg, `no kdissect serve to evaluate -Y api == "Fetch"`) || !strings.Contains(msg, "every message") {
					t.Errorf("the file page opened with ?y=: it says %q", msg)
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
	start := time.Now()
	got := p.CheckFields(i)
	t.Logf("frame %d %s %s: %d fields, %d bytes checked in %v", m.Frame, m.API, m.Kind, len(got.Fields), len(got.Bytes), time.Since(start))
	if got.Frame != m.Frame {
		t.Fatalf("message %d: selected frame %d, want %d", i, got.Frame, m.Frame)
	}
	for _, e := range got.Compare(browsertest.Flatten(m.Fields)) {
		t.Errorf("frame %d %s %s: %s", m.Frame, m.API, m.Kind, e)
	}
}

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

// TestScreenshots takes the pictures of the README and of docs/lesson.md in Chromium at
// 1280x720, a projector's size: a JoinGroup request with its GroupId pinned and the first step
// of its encoding lit; a record of a gzip batch with its zigzag varint explained; the
// conversation of a consumer joining its group; the schema page of DescribeGroups Response v6.
// With -update they are written to docs/; otherwise to a temporary directory (they are looked
// at, not compared: fonts differ between machines).
func TestScreenshots(t *testing.T) {
	b := browsertest.Start(t)
	dir := t.TempDir()
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		dir = filepath.Join("..", "docs")
	}
	url := "file://" + writePage(t, "kgo-filters.pcap", render.Options{MaxBytes: 64})
	p := b.Open(t, url)
	p.Viewport(1280, 720)
	got := explainField(t, p, 92, "GroupId")
	p.Eval(`document.dispatchEvent(new KeyboardEvent('keydown', { key: ']', bubbles: true })); true`, nil)
	if len(got.Steps) != 2 {
		t.Fatalf("GroupId: %+v", got)
	}
	shoot(t, p, filepath.Join(dir, "page.png"))

	p.Eval(`document.getElementById('ladder-toggle').click(); true`, nil)
	shoot(t, p, filepath.Join(dir, "ladder.png"))
	p.Check(onlyItself(url))

	url = "file://" + writePage(t, "kgo-codecs.pcap", render.Options{MaxBytes: 64})
	p.Navigate(url)
	var picked string
	p.Eval(`(async function () {
	  document.querySelector('#rows tr[data-frame="68"]').click();
	  var f = Array.prototype.filter.call(document.querySelectorAll('#tree tr.dec'), function (r) { return / offsetDelta$/.test(r.querySelector('td.f').textContent); })[1];
	  f.click();
	  document.dispatchEvent(new KeyboardEvent('keydown', { key: ']', bubbles: true }));
	  return f.querySelector('td.f').textContent.trim() + ' ' + document.querySelectorAll('#panes .hl').length;
	})()`, &picked)
	if !strings.HasPrefix(picked, "offsetDelta ") {
		t.Fatalf("picked %q", picked)
	}
	shoot(t, p, filepath.Join(dir, "record.png"))
	p.Check(onlyItself(url))

	var page bytes.Buffer
	c := dissectCodec(t)
	a, _ := c.Schemas.Lookup("DescribeGroups")
	ls, err := render.Layouts(c, a, a.Response)
	if err != nil {
		t.Fatal(err)
	}
	if err := render.WriteLayoutPage(&page, ls, 6, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "schema.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Navigate("file://" + path)
	p.Eval(`document.getElementById('v6').scrollIntoView(); true`, nil)
	p.Check(onlyItself("file://" + path))
	p.Screenshot(filepath.Join(dir, "schema.png"), 1280, 720)
}

// shoot takes a screenshot at 1280x720 once the page has drawn what the last action did.
func shoot(t *testing.T, p *browsertest.Page, path string) {
	t.Helper()
	p.Eval(`new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(function () { r(true); }); }); })`, nil)
	p.Screenshot(path, 1280, 720)
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
