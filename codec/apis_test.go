package codec

import (
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec/schema"
)

// TestAPIAbout: every API of the built-in definitions has one description, and apis.txt
// describes no API they lack (a misspelt name would leave its API without one).
func TestAPIAbout(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, a := range set.APIs() {
		known[a.Name] = true
		if about := APIAbout(a.Name); about == "" || !strings.HasSuffix(about, ".") {
			t.Errorf("%d %s: description %q, want a sentence", a.Key, a.Name, about)
		}
	}
	if len(known) < 95 {
		t.Errorf("only %d APIs", len(known))
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(apiAbout, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, _, ok := strings.Cut(l, ": ")
		if !ok {
			t.Errorf("apis.txt: %q is not \"Name: description\"", l)
			continue
		}
		if !known[name] {
			t.Errorf("apis.txt describes %s, which is not an API", name)
		}
		if seen[name] {
			t.Errorf("apis.txt describes %s twice", name)
		}
		seen[name] = true
	}
}

// TestAPIErrors: every line of apierrors.txt names an API of the built-in definitions once and
// only error names of the error table, each once; Produce gets its list in code order, and an
// API without a line gets none.
func TestAPIErrors(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	apis := map[string]bool{}
	for _, a := range set.APIs() {
		apis[a.Name] = true
	}
	errs := map[string]bool{}
	for _, e := range ErrorCodes() {
		errs[e.Name] = true
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(apiErrorList, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, list, ok := strings.Cut(l, ": ")
		switch {
		case !ok:
			t.Errorf("apierrors.txt: %q is not \"Name: ERROR ...\"", l)
			continue
		case !apis[name]:
			t.Errorf("apierrors.txt lists errors of %s, which is not an API", name)
		case seen[name]:
			t.Errorf("apierrors.txt lists errors of %s twice", name)
		}
		seen[name] = true
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
