package dissect

import (
	"testing"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// fieldsSeen is a collector that notes the names of the nodes of the messages it is told of,
// as they are when it is told (a lent tree is released after), and counts their records.
type fieldsSeen struct {
	names   map[string]bool
	records int
}

func (s *fieldsSeen) Add(e *model.Entry) {
	codec.Walk(e.Msg.Fields, func(n *codec.Node, _ int) bool {
		s.names[n.Name] = true
		return true
	})
	for _, r := range e.Facts.RecordSets {
		s.records += r.Records
	}
}

// TestCodecKeep: with --format none (shallow decodes of lent frames, record batches decoded
// as far as their counts), the fields that Keep names reach the collector: body fields, and
// fields of record batches' headers (besides counts and attributes, those named only); the trees of other messages do not (they are released), and
// the facts' record counts are there either way.
func TestCodecKeep(t *testing.T) {
	fetch := func(fields ...string) []codec.Kept {
		return []codec.Kept{{APIKey: codec.KeyFetch, Response: true, Fields: fields}}
	}
	tests := []struct {
		name    string
		keep    []codec.Kept
		seen    []string
		notSeen []string
	}{
		{"nothing kept", nil, nil, []string{"HighWatermark", "baseOffset", "recordsCount"}},
		{"a body field", fetch("HighWatermark"), []string{"HighWatermark", "recordsCount"}, []string{"baseOffset"}},
		{"batch headers", fetch("baseOffset"), []string{"baseOffset", "recordsCount"}, []string{"HighWatermark", "maxTimestamp"}},
	}
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, _ := render.LookupFormat("none")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel := SelectAll()
			sel.Stats = true
			plan, err := NewPlan(f, Asks{Select: sel, Keep: tt.keep})
			if err != nil {
				t.Fatal(err)
			}
			if !plan.Shallow {
				t.Fatal("the plan decodes in full: it keeps nothing by name")
			}
			c := NewCodec(set, plan, CodecOptions{})
			seen := &fieldsSeen{names: map[string]bool{}}
			p, err := New(Config{Codec: c, Out: f.New(nil, render.Options{}), Plan: plan, Select: sel, Detect: true, Workers: 2, Stats: seen})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.File(pcapPath("kgo-produce-fetch.pcap")); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if seen.records == 0 {
				t.Error("no record counted")
			}
			for _, n := range tt.seen {
				if !seen.names[n] {
					t.Errorf("no %s", n)
				}
			}
			for _, n := range tt.notSeen {
				if seen.names[n] {
					t.Errorf("%s, not asked for", n)
				}
			}
		})
	}
}
