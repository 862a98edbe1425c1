package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/internal/inert"
	"github.com/kdissect/kdissect/internal/plural"
)

// Compared is what `kdissect schema --compare DIR` shows: what the definitions of Dir change
// against the ones kdissect uses without it (Against: "built-in", or with other --schema-dir
// files).
type Compared struct {
	Dir     string `json:"dir"`
	Against string `json:"against"`
	*schema.Comparison
}

// CompareText writes a comparison API by API: each file that changes something, its versions,
// and per version the fields added, removed or changed, against the same version before or,
// for a new version, against the version before it.
func CompareText(w io.Writer, c *Compared) error {
	apis := len(c.APIs)
	if _, err := fmt.Fprintf(w, "%s against the %s definitions: %s listed, %s the same as before\n",
		inert.String(c.Dir), inert.String(c.Against), plural.Count(apis, "API"), plural.Count(len(c.Same), "file")); err != nil {
		return err
	}
	g := &grid{cols: []column{{}, {sep: "  "}, {sep: "  "}, {sep: "  "}, {sep: "  "}}}
	if len(c.Headers) > 0 {
		g.note(0, "Headers", "")
		compareMessages(g, c.Headers)
	}
	for _, a := range c.APIs {
		title := fmt.Sprintf("%s (API key %d)", a.Name, a.Key)
		if a.New {
			title = fmt.Sprintf("%s (API key %d, new)", a.Name, a.Key)
		}
		g.note(0, title, "")
		compareMessages(g, a.Messages)
	}
	return g.write(w)
}

func compareMessages(g *grid, ms []schema.MessageComparison) {
	for _, m := range ms {
		title := fmt.Sprintf("  %s  %s: v%s", m.Name, m.Source, m.Versions)
		if len(m.Kept) > 0 {
			title += fmt.Sprintf(" (v%s as before)", strings.Join(m.Kept, ", v"))
		}
		g.note(0, title, "")
		for _, r := range m.Runs {
			what := "differs"
			switch {
			case r.New && r.Against != nil:
				what = fmt.Sprintf("new, against v%d", *r.Against)
			case r.New:
				what = "new"
			}
			label := "    v" + r.Versions
			if len(r.Changes) == 0 {
				if r.Against != nil {
					g.add(cell{text: label}, cell{text: what}, cell{text: "same"})
				} else {
					g.add(cell{text: label}, cell{text: what})
				}
			}
			for i, ch := range r.Changes {
				enc := ch.To
				switch ch.Kind {
				case "removed":
					enc = ch.From
				case "changed":
					enc = ch.From + " -> " + ch.To
				}
				if i > 0 {
					g.add(cell{}, cell{}, cell{text: ch.Kind}, cell{text: ch.Path}, cell{text: enc})
					continue
				}
				g.add(cell{text: label}, cell{text: what}, cell{text: ch.Kind}, cell{text: ch.Path}, cell{text: enc})
			}
		}
	}
}

// CompareJSON writes a comparison as one indented JSON object.
func CompareJSON(w io.Writer, c *Compared) error { return writeJSON(w, c) }
