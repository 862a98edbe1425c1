package dissect

import (
	"io"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/render"
)

// Examples reads the capture in r, named name, with c and keeps the first message of each API,
// direction and version for the schema pages. Kafka is found on any port, as the capture's
// first requests show it.
func Examples(c *codec.Codec, r io.Reader, name string) (*render.Examples, error) {
	x := render.NewExamples(name)
	plan, err := NewPlan(render.PageFormat(), Asks{Select: SelectAll()}) // the page's trees, bytes and notes
	if err != nil {
		return nil, err
	}
	p, err := New(Config{Codec: c, Out: x, Plan: plan, Select: SelectAll(), Detect: true})
	if err != nil {
		return nil, err
	}
	cr, err := capture.NewReader(r, name)
	if err != nil {
		return nil, err
	}
	defer cr.Close()
	if _, err := p.Read(cr, name); err != nil {
		return nil, err
	}
	return x, p.Close()
}
