package render_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/pcaps"
	"github.com/kdissect/kdissect/render"
)

// siteCodec returns the built-in definitions, with the KIP draft of codec/testdata if draft, and
// the examples of the demo capture decoded with them.
func siteCodec(t *testing.T, draft bool) (*codec.Codec, *render.Examples) {
	t.Helper()
	plan, err := dissect.NewPlan(render.PageFormat(), dissect.Asks{Select: dissect.SelectAll()})
	if err != nil {
		t.Fatal(err)
	}
	c := dissect.NewCodec(render.SchemaCodec(t, draft).Schemas, plan, dissect.CodecOptions{})
	x, err := dissect.Examples(c, bytes.NewReader(pcaps.Demo), pcaps.DemoName)
	if err != nil {
		t.Fatal(err)
	}
	return c, x
}

// firstMessage finds, in the JSON lines of the demo capture, the first message of api in
// direction kind: the independent account of what the page's example must show.
func firstMessage(t *testing.T, api, kind string) (frame, version int, fields []browsertest.JSONNode) {
	t.Helper()
	out := dissectTo(t, pcaps.DemoName, "json", render.Options{}, dissect.CodecOptions{})
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m struct {
			Frame   int                    `json:"frame"`
			Kind    string                 `json:"kind"`
			API     string                 `json:"api_name"`
			Version int                    `json:"api_version"`
			Fields  []browsertest.JSONNode `json:"fields"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m.API == api && m.Kind == kind {
			return m.Frame, m.Version, m.Fields
		}
	}
	t.Fatalf("%s has no %s %s", pcaps.DemoName, api, kind)
	return 0, 0, nil
}

// schemaPage writes the page of an API's message with version show open.
func schemaPage(t *testing.T, c *codec.Codec, x *render.Examples, api string, response bool, show int16) string {
	t.Helper()
	a, err := c.Schemas.Lookup(api)
	if err != nil {
		t.Fatal(err)
	}
	m := a.Request
	if response {
		m = a.Response
	}
	ls, err := render.Layouts(c, a, m)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := render.WriteLayoutPage(&b, ls, show, x); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSchemaPageExample: the Produce request's page says what Produce is for, has its error
// codes section, and shows the capture's first Produce request with the values the JSON lines
// give it; at a version the capture lacks it says which it shows; an API the capture lacks says
// so.
func TestSchemaPageExample(t *testing.T) {
	c, x := siteCodec(t, false)
	frame, version, fields := firstMessage(t, "Produce", "request")
	page := schemaPage(t, c, x, "Produce", false, int16(version))
	want := []string{
		`<p class="about">` + html.EscapeString(codec.APIAbout("Produce")) + `</p>`,
		`<h2>Error codes</h2>`,
		fmt.Sprintf("Produce Request v%d, frame %d of %s:", version, frame, pcaps.DemoName),
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	// Every top-level field of the body, with the value the JSON gives it, is in the example.
	_, example, ok := strings.Cut(page, `<pre class="example">`)
	example, _, closed := strings.Cut(example, "</pre>")
	if !ok || !closed {
		t.Fatal("the page has no example")
	}
	example = html.UnescapeString(example)
	checked := 0
	for _, f := range fields {
		v, ok := f.Value.(float64)
		if !ok || len(f.Fields) > 0 { // an array's value is its count, which the diagram words
			continue
		}
		line := regexp.MustCompile(`(?m)^0x[0-9a-f]{4} +` + fmt.Sprint(f.Size) + ` +\S+ +` + regexp.QuoteMeta(f.Name) + ` +` + fmt.Sprint(v) + `\b`)
		if !line.MatchString(example) {
			t.Errorf("the example has no line for %s = %v:\n%s", f.Name, v, example)
		}
		checked++
	}
	if checked < 5 {
		t.Errorf("only %d numeric fields checked", checked)
	}
	older := schemaPage(t, c, x, "Produce", false, 3)
	if w := fmt.Sprintf("Produce Request v%d (the capture has no v3), frame %d of %s:", version, frame, pcaps.DemoName); !strings.Contains(older, w) {
		t.Errorf("the page at v3 lacks %q", w)
	}
	none := schemaPage(t, c, x, "DeleteAcls", true, 3)
	if w := "<p>" + pcaps.DemoName + " has no DeleteAcls Response to show.</p>"; !strings.Contains(none, w) {
		t.Errorf("the DeleteAcls Response page lacks %q", w)
	}
}

// TestSite writes the whole reference with the KIP draft of codec/testdata, and opens every
// page in Chromium: no console error, no request leaving it, and a page for every API and
// direction, linked from the index; the pages of APIs in the demo capture show its message.
func TestSite(t *testing.T) {
	c, x := siteCodec(t, true)
	dir := t.TempDir()
	n, err := render.WriteSite(dir, c, x)
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	pages := 0
	for _, a := range c.Schemas.APIs() {
		for _, dir := range []struct {
			m    *schema.Message
			name string
		}{{a.Request, "request"}, {a.Response, "response"}} {
			if dir.m == nil {
				continue
			}
			pages++
			name := strings.NewReplacer(" ", "_").Replace(a.Name) + "-" + dir.name + ".html"
			if !bytes.Contains(index, []byte(`href="`+name+`"`)) {
				t.Errorf("the index does not link %s", name)
			}
			if about := codec.APIAbout(a.Name); about != "" && !bytes.Contains(index, []byte(html.EscapeString(about))) {
				t.Errorf("the index does not say what %s is for", a.Name)
			}
		}
	}
	if a, err := c.Schemas.Lookup("GroupLagDescribe"); err != nil || a.Response == nil {
		t.Fatalf("the draft is not in the definitions: %v", err)
	}
	if n != pages+2 {
		t.Errorf("%d files written, want %d pages, the index and the error codes", n, pages)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.html"))
	if len(files) != n {
		t.Fatalf("%d files in the site, %d written", len(files), n)
	}
	b := browsertest.Start(t)
	var p *browsertest.Page
	for _, f := range files {
		url := "file://" + f
		if p == nil {
			p = b.Open(t, url)
		} else {
			p.Navigate(url)
		}
		var title string
		p.Eval(`document.querySelector('h1') ? document.querySelector('h1').textContent : ''`, &title)
		if title == "" {
			t.Errorf("%s: no title", filepath.Base(f))
		}
		var example string
		p.Eval(`document.querySelector('pre.example') ? document.querySelector('pre.example').textContent : ''`, &example)
		if _, ok := x.Lookup(apiOfPage(t, c, f)); ok != (example != "") {
			t.Errorf("%s: example %q, the capture has one: %v", filepath.Base(f), firstLine(example), ok)
		}
		p.Check(onlyItself(url))
	}
}

// apiOfPage reads the API key and direction of a site's page from its file name, with a
// version no message has, so that Examples.Lookup takes any.
func apiOfPage(t *testing.T, c *codec.Codec, file string) (int16, bool, int16) {
	name, dir, ok := strings.Cut(strings.TrimSuffix(filepath.Base(file), ".html"), "-")
	if !ok {
		return -1, false, -1 // the index, the error codes
	}
	a, err := c.Schemas.Lookup(name)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return a.Key, dir == schema.TypeResponse, -1
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestSchemaErrorCodes: the Produce and SyncGroup response pages list every error code Kafka
// names for them, each with its number and the error table's meaning, and nothing after the
// table's end; the Produce request page says the errors come back in the response and shows the
// same list; an API Kafka names no codes for says so.
func TestSchemaErrorCodes(t *testing.T) {
	c := render.SchemaCodec(t, false)
	section := func(page string) string {
		_, s, _ := strings.Cut(page, "<h2>Error codes</h2>")
		s, _, _ = strings.Cut(s, "<h2")
		return s
	}
	for _, api := range []string{"Produce", "SyncGroup"} {
		codes := codec.APIErrors(api)
		if len(codes) < 5 {
			t.Fatalf("%s: only %d error codes", api, len(codes))
		}
		for _, response := range []bool{true, false} {
			s := section(schemaPage(t, c, nil, api, response, 0))
			if rows := strings.Count(s, "<tr><td>"); rows != len(codes) {
				t.Errorf("%s (response %v): %d rows, want %d", api, response, rows, len(codes))
			}
			for _, e := range codes {
				row := fmt.Sprintf("<tr><td>%d</td><td>%s</td><td class=\"a\">%s</td></tr>", e.Code, e.Name, html.EscapeString(e.About))
				if !strings.Contains(s, row) {
					t.Errorf("%s (response %v) lacks %s", api, response, row)
				}
			}
			if back := strings.Contains(s, "errors come back in the response"); back == response {
				t.Errorf("%s (response %v): says the errors come back in the response: %v", api, response, back)
			}
		}
	}
	s := section(schemaPage(t, c, nil, "DescribeTopicPartitions", true, 0))
	if !strings.Contains(s, "name no specific codes for this API") || strings.Contains(s, "<tr>") {
		t.Errorf("DescribeTopicPartitions response: %s", s)
	}
}
