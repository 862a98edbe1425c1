package dissect

import (
	"io"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/render"
)

// Examples reads the capture in r, named name, with c and keeps the first message of each API,
// direction and version for the schema pages. Kafka is found on any port, as the capture's
// first requests show it.
func Examples(c *codec.Codec, r io.Reader, name string) (*render.Examples, error) {
	x := render.NewExamples(name)
	p, err := New(Config{Codec: c, Out: x, Needs: render.Needs{Tree: true, Bytes: true, Notes: true}, Select: SelectAll(), Detect: true})
	if err != nil {
		return nil, err
	}
	if _, err := p.FileFrom(r, name); err != nil {
		return nil, err
	}
	return x, p.Close()
}
