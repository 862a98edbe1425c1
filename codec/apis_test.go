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
