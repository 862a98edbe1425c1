package dissect

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/render"
)

// TestNewPlan: each format's plan, and what a filter, statistics, analyses and --records
// change in it.
func TestNewPlan(t *testing.T) {
	bodies := func(s *Selection) { s.Expr = "resp.ErrorCode != 0" }
	lag := []codec.Kept{{APIKey: 1, Response: true, Fields: []string{"HighWatermark"}}}
	batches := []codec.Kept{{APIKey: 1, Response: true, Fields: []string{"Records", "baseOffset"}}}
	for _, tc := range []struct {
		name, format string
		asks         Asks
		sel          func(s *Selection)
		want         Plan
	}{
		{name: "summary", format: "summary",
			want: Plan{Records: "headers", Shallow: true, Facts: true, LearnNames: true, Lend: true, SpillOver: spillOver}},
		{name: "diagram", format: "diagram",
			want: Plan{Records: "full", LazyRecords: true, Notes: true, LearnNames: true, SpillOver: spillOver}},
		{name: "html", format: "html", want: Plan{Records: "full", Notes: true, LearnNames: true}},
		{name: "parquet holds small entries", format: "parquet",
			want: Plan{Records: "full", LazyRecords: true, Facts: true, Notes: true, LearnNames: true, SpillOver: spillOver}},
		{name: "none with stats", format: "none", sel: func(s *Selection) { s.Stats = true },
			want: Plan{Records: "headers", Shallow: true, Facts: true, LearnNames: true, Lend: true, SpillOver: spillOver}},
		{name: "filter on facts", format: "json", sel: func(s *Selection) { s.Errors = true },
			want: Plan{Records: "full", LazyRecords: true, Facts: true, Expand: true, Notes: true, LearnNames: true, SpillOver: spillOver}},
		{name: "filter on bodies", format: "summary", sel: bodies,
			want: Plan{Records: "full", Facts: true, Expand: true, Notes: true, LearnNames: true}},
		{name: "records none", format: "summary", asks: Asks{Records: "none"},
			want: Plan{Records: "none", Shallow: true, Facts: true, LearnNames: true, Lend: true, SpillOver: spillOver}},
		{name: "analyses keep fields, shallow still", format: "none", asks: Asks{Keep: lag},
			want: Plan{Records: "headers", Shallow: true, Keep: lag, Facts: true, Notes: true, LearnNames: true, Lend: true, SpillOver: spillOver}},
		{name: "analyses read batch headers", format: "none", asks: Asks{Keep: batches},
			want: Plan{Records: "headers", Shallow: true, Keep: batches, BatchHeaders: true, Facts: true, Notes: true, LearnNames: true, Lend: true, SpillOver: spillOver}},
		{name: "batch headers expanded before the analyses", format: "json", asks: Asks{Keep: batches},
			want: Plan{Records: "full", Keep: batches, BatchHeaders: true, Notes: true, LearnNames: true, SpillOver: spillOver}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := render.LookupFormat(tc.format)
			if !ok {
				t.Fatalf("no format %q", tc.format)
			}
			a := tc.asks
			a.Select = SelectAll()
			if tc.sel != nil {
				tc.sel(&a.Select)
			}
			got, err := NewPlan(f, a)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("plan %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestPlanRefused: a depth of records that does not exist, and a pipeline given a plan made
// for another selection, are refused.
func TestPlanRefused(t *testing.T) {
	f, _ := render.LookupFormat("summary")
	var re *RecordsError
	if _, err := NewPlan(f, Asks{Records: "some", Select: SelectAll()}); !errors.As(err, &re) || re.Depth != "some" {
		t.Errorf("records depth \"some\": %v", err)
	}
	plan, err := NewPlan(f, Asks{Select: SelectAll()})
	if err != nil {
		t.Fatal(err)
	}
	sel := SelectAll()
	sel.Expr = "req.TransactionalId == \"t\""
	if _, err := New(Config{Codec: newCodec(t), Out: render.Discard{}, Plan: plan, Select: sel}); !errors.Is(err, errPlan) {
		t.Errorf("a plan for every message, with a filter on bodies: %v", err)
	}
	plan, err = NewPlan(f, Asks{Select: sel})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Codec: newCodec(t), Out: render.Discard{}, Plan: plan, Select: sel}); err != nil {
		t.Errorf("the filter's own plan: %v", err)
	}
}
