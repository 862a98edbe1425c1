package render

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/internal/browsertest"
)

func testCodec(t testing.TB, draft bool) *codec.Codec {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if draft {
		if set, err = set.WithDir(filepath.Join("..", "codec", "testdata", "draft"), 200); err != nil {
			t.Fatal(err)
		}
	}
	return codec.New(set)
}

// TestLayoutPage: the page of DescribeGroups Response at every version, v6 open, is the golden
// file; it names the header it uses and why, and links each version to its neighbours.
func TestLayoutPage(t *testing.T) {
	c := testCodec(t, false)
	a, err := c.Schemas.Lookup("DescribeGroups")
	if err != nil {
		t.Fatal(err)
	}
	ls, err := Layouts(c, a, a.Response)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteLayoutPage(&b, ls, 6); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<details open><summary>DescribeGroups Response v6</summary>`,
		`Response Header v1: DescribeGroups v6 is flexible (flexible versions 5+), so the header ends in a tagged section`,
		`Response Header v0: DescribeGroups v4 is not flexible (flexible versions 5+), so the header has no tagged section`,
		`<a href="#v5">&larr; v5</a> 1 change: added Groups.ErrorMessage (compact_nullable_string)`,
		`<span class="n">GroupInstanceId?</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The golden file leaves out the style sheet and the policy that hashes it, which change
	// with every touch of the style; the layout is what it guards.
	page = regexp.MustCompile(`(?s)<style>.*</style>`).ReplaceAllString(page, "<style>…</style>")
	page = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`).ReplaceAllString(page, `<meta http-equiv="Content-Security-Policy" content="…">`)
	golden(t, "DescribeGroupsResponse.html", []byte(page))
}

// TestSite writes the whole reference with the KIP draft of codec/testdata, and opens every
// page in Chromium: no console error, no request leaving it, and a page for every API and
// direction, linked from the index.
func TestSite(t *testing.T) {
	c := testCodec(t, true)
	dir := t.TempDir()
	n, err := WriteSite(dir, c)
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
		p.Check(func(u string) bool { return u == url })
	}
}
