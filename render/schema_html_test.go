package render

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
)

// SchemaCodec gives the tests of render_test the definitions testCodec loads.
var SchemaCodec = testCodec

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
	if err := WriteLayoutPage(&b, ls, 6, nil); err != nil {
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
