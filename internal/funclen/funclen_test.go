package funclen

import (
	"path/filepath"
	"testing"
)

// TestNoLongFunctions holds the module to functions of 80 lines or fewer outside tests and
// generated code.
func TestNoLongFunctions(t *testing.T) {
	long, err := Long(filepath.Join("..", ".."), 80)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range long {
		t.Errorf("%s: %s has %d lines; split it (80 at most)", f.Pos, f.Name, f.Lines)
	}
}

// TestLong finds the long functions of testdata/src, and only those.
func TestLong(t *testing.T) {
	long, err := Long(filepath.Join("testdata", "src"), 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name  string
		lines int
	}{{"long", 7}, {"T.long", 6}, {"G.long", 6}}
	if len(long) != len(want) {
		t.Fatalf("found %v, want %v", long, want)
	}
	for i, w := range want {
		if long[i].Name != w.name || long[i].Lines != w.lines {
			t.Errorf("function %d: %s with %d lines, want %s with %d", i, long[i].Name, long[i].Lines, w.name, w.lines)
		}
	}
}
