package dissect

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/kdissect/kdissect/pcaps"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
	"github.com/kdissect/kdissect/render"
)

// factsCheck is a renderer that checks each message's facts, counted with its records left
// unexpanded, against the facts of its whole tree.
type factsCheck struct {
	t    *testing.T
	name string
	// lazy counts the messages that held records unexpanded, records those with records.
	lazy, records int
}

func (c *factsCheck) Message(e *model.Entry) error {
	if e.Facts == nil {
		c.t.Errorf("%s: frame %d: no facts", c.name, e.Frame)
		return nil
	}
	if !e.Msg.Unexpanded() {
		return nil
	}
	c.lazy++
	got := e.Msg.Facts()
	e.Msg.Expand()
	want := e.Msg.Facts()
	if len(want.RecordSets) > 0 {
		c.records++
	}
	if !reflect.DeepEqual(got, want) {
		c.t.Errorf("%s: frame %d: facts with records unexpanded\n%+v\nexpanded\n%+v", c.name, e.Frame, got, want)
	}
	return nil
}

func (*factsCheck) Notice(*model.Notice) error { return nil }
func (*factsCheck) Close() error               { return nil }
func (*factsCheck) Flush() error               { return nil }

// TestLazyFacts: on every capture in pcaps/, the facts of a message whose records are left
// unexpanded (a format that expands them as it writes, with facts: Parquet) are those of its
// expanded tree: record counts, bytes, codecs, topics and partitions.
func TestLazyFacts(t *testing.T) {
	f, ok := render.LookupFormat("parquet")
	if !ok || !f.Needs.Expands || !f.Needs.Facts {
		t.Fatalf("parquet is not a format that expands records and reads facts: %+v", f.Needs)
	}
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ports, err := capture.ParsePorts([]string{pcaps.Ports})
	if err != nil {
		t.Fatal(err)
	}
	lazy, records := 0, 0
	for _, mode := range []string{"full", "headers"} {
		for _, file := range captures(t) {
			plan, err := NewPlan(f, Asks{Records: mode, Select: SelectAll()})
			if err != nil {
				t.Fatal(err)
			}
			c := NewCodec(set, plan, CodecOptions{})
			check := &factsCheck{t: t, name: fmt.Sprintf("%s (--records %s)", file, mode)}
			cfg := Config{Codec: c, Out: check, Plan: plan, Select: SelectAll(), IsServerPort: ports.Has, Workers: 2}
			if kl := keylogOf(file); kl != "" {
				if cfg.Keys, err = tlsdec.OpenKeyLog(kl, false); err != nil {
					t.Fatal(err)
				}
			}
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.File(file); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			lazy, records = lazy+check.lazy, records+check.records
		}
	}
	// The captures hold records of every codec, legacy message sets, control batches.
	if lazy < 100 || records < 100 {
		t.Errorf("only %d messages with records unexpanded, %d with record sets: the test checks little", lazy, records)
	}
	t.Logf("%d messages with records unexpanded, %d with record sets", lazy, records)
}
