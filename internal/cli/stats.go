package cli

import (
	"io"

	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/render"
)

// Analyses returns the analyses of --stats when asked (nil otherwise). The codec must keep
// the fields they read: Common.CodecPlan is given their Reads.
func Analyses(asked bool) analysis.Set {
	if !asked {
		return nil
	}
	return analysis.Registered()
}

// TablesOnPage gives the tables of stats to an output that shows them on its page (the HTML
// page), before it is closed; it reports whether it did. Other outputs get them as text or
// JSON lines after the messages.
func TablesOnPage(out render.Renderer, stats analysis.Set) bool {
	p, ok := out.(render.TablePage)
	if ok {
		p.Tables(stats.Tables())
	}
	return ok
}

// TableWidth is the width that tables written to w fit in: render.TableWidth on a terminal,
// any width in a file or a pipe (whose readers are programs and pagers).
func TableWidth(w io.Writer) int {
	if IsTerminal(w) {
		return render.TableWidth
	}
	return 0
}
