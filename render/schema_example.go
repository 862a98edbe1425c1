package render

import (
	"bufio"
	"fmt"
	"html"
	"strings"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/model"
)

// Examples keeps, for the schema pages, the first message of each API, direction and version
// in one capture, drawn as the diagram format draws it. It is a Renderer: a pipeline that reads
// the capture fills it.
type Examples struct {
	// Capture names the capture the messages come from, as the pages say it.
	Capture string
	first   map[exampleKey]*Example
}

// Example is one message of a capture, ready to show on a schema page.
type Example struct {
	Frame   int
	Version int16
	// Diagram is the message as the diagram format writes it, without colour.
	Diagram string
}

type exampleKey struct {
	key      int16
	response bool
	version  int16
}

// anyVersion stands for every version in the index of the first message of an API and
// direction.
const anyVersion = -1

// NewExamples returns an empty set of examples from the capture named capture.
func NewExamples(capture string) *Examples {
	return &Examples{Capture: capture, first: map[exampleKey]*Example{}}
}

// Message keeps e if it is the first of its API, direction and version.
func (x *Examples) Message(e *model.Entry) error {
	k := exampleKey{e.Msg.APIKey, e.Msg.Response, e.Msg.Version}
	if x.first[k] != nil || e.Msg.HeaderFields <= 1 { // a raw SASL token is no API's message
		return nil
	}
	var b strings.Builder
	d := NewDiagram(&b, DiagramOptions{MaxBytes: exampleMaxBytes})
	if err := d.Message(e); err != nil {
		return err
	}
	if err := d.Flush(); err != nil {
		return err
	}
	ex := &Example{Frame: e.Frame, Version: e.Msg.Version, Diagram: b.String()}
	x.first[k] = ex
	if k.version = anyVersion; x.first[k] == nil {
		x.first[k] = ex
	}
	return nil
}

// exampleMaxBytes cuts long values in examples: a page shows the message's shape.
const exampleMaxBytes = 64

// Notice ignores notices: pages show messages only.
func (x *Examples) Notice(*model.Notice) error { return nil }

// Flush does nothing: examples are kept, not written.
func (x *Examples) Flush() error { return nil }

// Close does nothing.
func (x *Examples) Close() error { return nil }

// Lookup returns the first message of API key in the direction at version, or failing that the
// first at any version (its Version says which); ok is false when the capture has none.
func (x *Examples) Lookup(key int16, response bool, version int16) (ex *Example, ok bool) {
	if x == nil {
		return nil, false
	}
	if ex := x.first[exampleKey{key, response, version}]; ex != nil {
		return ex, true
	}
	ex = x.first[exampleKey{key, response, anyVersion}]
	return ex, ex != nil
}

// writeExample shows the example of the message laid out by l, or says the capture holds none;
// nothing without examples.
func writeExample(w *bufio.Writer, x *Examples, l *Layout) {
	if x == nil {
		return
	}
	title := l.API + " " + directionTitle(l.Direction)
	w.WriteString("<h2 id=\"example\">Example</h2>\n")
	ex, ok := x.Lookup(l.APIKey, l.Direction == schema.TypeResponse, l.Version)
	if !ok {
		fmt.Fprintf(w, "<p>%s has no %s to show.</p>\n", html.EscapeString(x.Capture), html.EscapeString(title))
		return
	}
	which := ""
	if ex.Version != l.Version {
		which = fmt.Sprintf(" (the capture has no v%d)", l.Version)
	}
	fmt.Fprintf(w, "<p>%s v%d%s, frame %d of %s:</p>\n<pre class=\"example\">%s</pre>\n",
		html.EscapeString(title), ex.Version, which, ex.Frame, html.EscapeString(x.Capture), html.EscapeString(ex.Diagram))
}
