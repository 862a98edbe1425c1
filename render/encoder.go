package render

import (
	"io"

	"github.com/kdissect/kdissect/model"
)

// Parallel is a Renderer whose messages can be written on other goroutines, each by an
// Encoder of its own, and their bytes put in order after: the pipeline spreads the writing of
// a capture file's messages over cores so. Everything else (notices, file headers, flushing)
// is still the Renderer's, called on one goroutine, in order.
type Parallel interface {
	Renderer
	// Encoder returns an Encoder for one more goroutine. It writes a message as Message would
	// write it now: with the options, the start of the capture and the file name as they are
	// (so it is asked for once those are set, and again after File). It returns nil when a
	// message's output depends on the messages written before it (-t d): Message must then
	// write them all, in order.
	Encoder() Encoder
	// WriteEncoded writes the bytes an Encoder appended for a message, where Message would
	// have written them.
	WriteEncoded(b []byte) error
}

// Encoder writes messages as a Parallel renderer's Message does, elsewhere. It is used by one
// goroutine; several, each with its own, may write at once.
type Encoder interface {
	// WriteMessage writes the bytes Message would write for e to w, in pieces as they are
	// made: a big message's are never held whole.
	WriteMessage(w io.Writer, e *model.Entry) error
}

// The renderers that write on several goroutines.
var (
	_ Parallel = (*JSON)(nil)
	_ Parallel = (*Diagram)(nil)
)

// copyEncoder is an Encoder made of a copy of a renderer that writes to to, which writes to
// the writer WriteMessage is given.
type copyEncoder struct {
	r  Renderer
	to *redirect
}

func (c *copyEncoder) WriteMessage(w io.Writer, e *model.Entry) error {
	c.to.w = w
	err := c.r.Message(e)
	if ferr := c.r.Flush(); err == nil {
		err = ferr
	}
	c.to.w = nil
	return err
}

// redirect is an io.Writer that writes to w, set for each message.
type redirect struct{ w io.Writer }

func (r *redirect) Write(p []byte) (int, error) { return r.w.Write(p) }

// Encoder returns a copy of j that writes where WriteMessage says: a line depends on the
// entry, MaxBytes and the file name only.
func (j *JSON) Encoder() Encoder {
	to := new(redirect)
	c := NewJSON(to)
	c.MaxBytes, c.file = j.MaxBytes, j.file
	return &copyEncoder{r: c, to: to}
}

// WriteEncoded writes lines an Encoder made.
func (j *JSON) WriteEncoded(b []byte) error {
	_, err := j.w.Write(b)
	return err
}

// Encoder returns a copy of d that writes where WriteMessage says, or nil when headings show
// the time since the previous message (-t d), or since a start not known yet (-t r).
func (d *Diagram) Encoder() Encoder {
	if d.clock.format == TimeDelta || d.clock.format == TimeRel && d.clock.start.IsZero() {
		return nil
	}
	to := new(redirect)
	c := NewDiagram(to, d.opt)
	c.clock = d.clock
	return &copyEncoder{r: c, to: to}
}

// WriteEncoded writes messages an Encoder made.
func (d *Diagram) WriteEncoded(b []byte) error {
	_, err := d.w.Write(b)
	return err
}
