package render

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestFormatLists: every format is named once in the records defaults, under its own depth,
// and the schema formats are those that lay out schemas, in the table's order.
func TestFormatLists(t *testing.T) {
	s := RecordsDefaults(Formats())
	under := map[string]string{} // format name -> depth
	// "default full for diagram, json and html, headers for summary and none": each part starts
	// with "DEPTH for ".
	body := strings.TrimPrefix(s, "default ")
	starts := regexp.MustCompile(`(?:^|, )\w+ for `).FindAllStringIndex(body, -1)
	if len(starts) == 0 {
		t.Fatalf("%q: no DEPTH for FORMATS", s)
	}
	for i, st := range starts {
		end := len(body)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		part := strings.TrimPrefix(body[st[0]:end], ", ")
		depth, names, ok := strings.Cut(part, " for ")
		if !ok {
			t.Fatalf("%q: %q is not DEPTH for FORMATS", s, part)
		}
		for _, n := range strings.Split(strings.ReplaceAll(names, " and ", ", "), ", ") {
			if _, dup := under[n]; dup {
				t.Errorf("%q names %s twice", s, n)
			}
			under[n] = depth
		}
	}
	for _, f := range Formats() {
		if under[f.Name] != f.Records {
			t.Errorf("%q: %s is under %q, want %q", s, f.Name, under[f.Name], f.Records)
		}
	}
	if len(under) != len(Formats()) {
		t.Errorf("%q names %d formats, want %d", s, len(under), len(Formats()))
	}
	for _, tt := range []struct {
		name string
		list []Format
		has  func(f Format) bool
	}{
		{"schema", SchemaFormats(), func(f Format) bool { return f.Layout != nil || f.Page != nil }},
		{"diff", DiffFormats(), func(f Format) bool { return f.Diff != nil }},
	} {
		var want, got []string
		for _, f := range Formats() {
			if tt.has(f) {
				want = append(want, f.Name)
			}
		}
		for _, f := range tt.list {
			got = append(got, f.Name)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || len(got) == 0 {
			t.Errorf("%s formats %v, want %v", tt.name, got, want)
		}
	}
}

// TestPageFormat: the page kdissect serve serves is the one format with a schema page, and it
// writes messages too.
func TestPageFormat(t *testing.T) {
	f := PageFormat()
	if f.Page == nil || f.New == nil || f.Binary || f.Batch || len(formatsThat(func(f Format) bool { return f.Page != nil })) != 1 {
		t.Errorf("PageFormat %q: not the one format of pages that writes messages as text", f.Name)
	}
}
