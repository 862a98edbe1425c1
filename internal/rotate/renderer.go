package rotate

import (
	"io"
	"time"

	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// Renderer writes a format's output to a file per period: it forwards entries and notices to
// the renderer of the current period, made by New on the period's file, and closes it at the
// period's end, so that each file is complete in itself (a Parquet file per period, with the
// columns of any other). Its methods may be called while a timer rotates it.
type Renderer struct {
	*rotator
	out *periodRenderer
}

// NewRenderer begins the first period's file in d at once; newRenderer makes the renderer of
// each period. Warn is told of files left out.
func NewRenderer(d *Dir, p Policy, newRenderer func(w io.Writer) render.Renderer, warn func(error)) *Renderer {
	return newRendererAt(d, p, newRenderer, warn, time.Now)
}

func newRendererAt(d *Dir, p Policy, newRenderer func(w io.Writer) render.Renderer, warn func(error), now func() time.Time) *Renderer {
	out := &periodRenderer{new: newRenderer}
	return &Renderer{rotator: newRotator(d, p, warn, out, now), out: out}
}

// periodRenderer is the content of a Renderer's files.
type periodRenderer struct {
	new func(w io.Writer) render.Renderer
	cur render.Renderer
}

func (p *periodRenderer) start(w io.Writer) {
	if w == nil {
		p.cur = render.Discard{}
		return
	}
	p.cur = p.new(w)
}

func (p *periodRenderer) end() error { return p.cur.Close() }

// Message writes e to the current period's file. A failing file is said and left out, not
// returned: the capture goes on.
func (r *Renderer) Message(e *model.Entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.check(r.out.cur.Message(e))
	return nil
}

// Notice writes n to the current period's file.
func (r *Renderer) Notice(n *model.Notice) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.check(r.out.cur.Notice(n))
	return nil
}

// Flush does nothing: a live capture flushes after each message so that it shows at once, but
// a period's file is read only once it is complete, and its renderer writes it out at the end.
func (r *Renderer) Flush() error { return nil }
