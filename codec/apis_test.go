package codec

import (
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec/schema"
)

// apiLines checks the "Name: text" lines of an embedded file: each names an API of the
// built-in definitions, once. It returns the text of each API's line.
func apiLines(t *testing.T, file, text string) map[string]string {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, a := range set.APIs() {
		known[a.Name] = true
	}
	if len(known) < 95 {
		t.Errorf("only %d APIs", len(known))
	}
	lines := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, rest, ok := strings.Cut(l, ": ")
		switch {
		case !ok:
			t.Errorf("%s: %q is not \"Name: text\"", file, l)
			continue
		case !known[name]:
			t.Errorf("%s names %s, which is not an API", file, name)
		}
		if _, twice := lines[name]; twice {
			t.Errorf("%s names %s twice", file, name)
		}
		lines[name] = rest
	}
	return lines
}

// TestAPIAbout: every API of the built-in definitions has one description, and apis.txt
// describes no API they lack (a misspelt name would leave its API without one).
func TestAPIAbout(t *testing.T) {
	apiLines(t, "apis.txt", apiAbout)
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range set.APIs() {
		if about := APIAbout(a.Name); about == "" || !strings.HasSuffix(about, ".") {
			t.Errorf("%d %s: description %q, want a sentence", a.Key, a.Name, about)
		}
	}
}

// TestAPIErrors: every line of apierrors.txt names an API of the built-in definitions once and
// only error names of the error table, each once; Produce gets its list in code order, and an
// API without a line gets none.
func TestAPIErrors(t *testing.T) {
	errs := map[string]bool{}
	for _, e := range ErrorCodes() {
		errs[e.Name] = true
	}
	for name, list := range apiLines(t, "apierrors.txt", apiErrorList) {
		names := strings.Fields(list)
		if len(names) == 0 || len(APIErrors(name)) != len(names) {
			t.Errorf("%s: %d names, APIErrors gives %d", name, len(names), len(APIErrors(name)))
		}
		dup := map[string]bool{}
		for _, n := range names {
			if !errs[n] {
				t.Errorf("%s: %s is not in the error table", name, n)
			}
			if dup[n] {
				t.Errorf("%s: %s listed twice", name, n)
			}
			dup[n] = true
		}
	}
	produce := APIErrors("Produce")
	if len(produce) == 0 || produce[0].Name != "CORRUPT_MESSAGE" || produce[0].Code != 2 || produce[0].About == "" {
		t.Errorf("Produce errors start with %+v, want CORRUPT_MESSAGE (2) with its meaning", produce)
	}
	for i := 1; i < len(produce); i++ {
		if produce[i-1].Code >= produce[i].Code {
			t.Errorf("Produce errors out of code order: %d before %d", produce[i-1].Code, produce[i].Code)
		}
	}
	if got := APIErrors("DescribeTopicPartitions"); got != nil {
		t.Errorf("DescribeTopicPartitions has no listed errors, got %v", got)
	}
}
