package analysis_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// The tests read captures through the same pipeline kdissect runs, in one of two ways: as
// --stats does (analyse), or as --format json does (jsonOutput, table), so that what a test
// expects can come from the JSON lines rather than from the analysis's code.

// capturePath finds a capture of pcaps/ by its name; a path under testdata/ (a capture cut
// for one test) is taken as it is.
func capturePath(name string) string {
	if strings.HasPrefix(name, "testdata/") {
		return name
	}
	return filepath.Join("..", "..", "pcaps", name)
}

// feed is a renderer that tells analyses of each message, as --stats does.
type feed []analysis.Analysis

func (f feed) Message(e *model.Entry) error {
	for _, a := range f {
		a.Add(e)
	}
	return nil
}
func (feed) Notice(*model.Notice) error { return nil }
func (feed) Close() error               { return nil }
func (feed) Flush() error               { return nil }

// dissectCapture reads a capture through a pipeline that decodes what format f shows, with
// the facts, record batches as records says ("" for f's default), and writes its messages to
// out.
func dissectCapture(capture string, f render.Format, records string, out render.Renderer) error {
	set, err := schema.Embedded()
	if err != nil {
		return err
	}
	sel := dissect.SelectAll()
	plan, err := dissect.NewPlan(f, dissect.Asks{Records: records, Select: sel})
	if err != nil {
		return err
	}
	plan.Facts = true
	c := dissect.NewCodec(set, plan, dissect.CodecOptions{})
	p, err := dissect.New(dissect.Config{Codec: c, Out: out, Plan: plan, Select: sel, Detect: true, Workers: 1})
	if err != nil {
		return err
	}
	if _, err := p.File(capturePath(capture)); err != nil {
		return err
	}
	return p.Close()
}

// analyseFile feeds the messages of a capture to as, decoding record batches to their headers
// as summaries with --records headers do.
func analyseFile(capture string, as ...analysis.Analysis) error {
	f := render.Format{Needs: render.Needs{Tree: true}, Records: "headers"}
	return dissectCapture(capture, f, "", feed(as))
}

// analyse is analyseFile that fails the test on an error.
func analyse(t *testing.T, capture string, as ...analysis.Analysis) {
	t.Helper()
	if err := analyseFile(capture, as...); err != nil {
		t.Fatal(err)
	}
}

// jsonFormat is the format whose output the tests read their expectations from.
func jsonFormat(t *testing.T) render.Format {
	t.Helper()
	f, ok := render.LookupFormat("json")
	if !ok {
		t.Fatal("no json format")
	}
	return f
}

// jsonOutput returns a capture's JSON lines, record batches decoded as records says ("" for
// the json format's default, full).
func jsonOutput(t *testing.T, capture, records string) *bytes.Buffer {
	t.Helper()
	var out bytes.Buffer
	f := jsonFormat(t)
	if err := dissectCapture(capture, f, records, f.New(&out, render.Options{})); err != nil {
		t.Fatalf("%s: %v", capture, err)
	}
	return &out
}

// table runs analysis a over a capture, decoded as jsonOutput decodes it, and returns its one
// table.
func table(t *testing.T, capture, records string, a analysis.Analysis) model.Table {
	t.Helper()
	if err := dissectCapture(capture, jsonFormat(t), records, feed{a}); err != nil {
		t.Fatalf("%s: %v", capture, err)
	}
	tables := a.Tables()
	if len(tables) != 1 {
		t.Fatalf("%d tables", len(tables))
	}
	tab := tables[0]
	for _, r := range tab.Rows {
		if len(r) != len(tab.Columns) {
			t.Fatalf("row of %d values for %d columns: %v", len(r), len(tab.Columns), r)
		}
	}
	return tab
}
