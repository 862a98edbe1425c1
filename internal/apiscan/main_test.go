package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun scans a module of two packages: a name used by the other package is left out, one
// used only by its own package or only by another's tests is listed, internal/ is not scanned.
func TestRun(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("lib/lib.go", "package lib\n\nfunc Used() {}\nfunc Alone() {}\nfunc Tested() {}\nfunc private() {}\nconst (\n\tA = 1\n\tB = 2\n)\ntype T int\n")
	write("lib/lib_test.go", "package lib\n\nfunc use() { Alone() }\n")
	write("app/app.go", "package app\n\nimport l \"example.com/m/lib\"\n\nfunc Run() { l.Used(); _ = l.A; var _ l.T }\n")
	write("app/app_test.go", "package app\n\nimport \"example.com/m/lib\"\n\nfunc use() { lib.Tested() }\n")
	write("internal/x/x.go", "package x\n\nfunc Hidden() {}\n")
	var out strings.Builder
	if err := run(root, false, &out); err != nil {
		t.Fatal(err)
	}
	want := `example.com/m/app: 1 exported, 1 used by no other package
  func  Run
example.com/m/lib: 6 exported, 3 used by no other package
  func  Alone
  const B
  func  Tested (tests of other packages: 1)
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
