package render

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/internal/inert"
)

// The doctor's report (kdissect doctor --format html): one self-contained page of the
// findings and four pictures drawn as inline SVG by this file, latency per broker, lag per
// partition, the groups' timeline and throughput per topic, over one time axis. The page has
// no script: its policy allows its two style sheets and nothing else, so that a hostile
// capture's strings, escaped, stay text.

// reportCSS is the report's style beyond the workshop page's (pageCSS), whose colours it uses.
const reportCSS = `body.report { max-width: 1100px; margin: 0 auto; padding: 0 1em 2em; }
.report h2 { font-size: 1.1rem; margin: 1.6em 0 .4em; border-bottom: 1px solid var(--line); }
.report figure { margin: 0 0 1em; }
.report figcaption { color: var(--dim); max-width: 60em; }
.report table.findings { border-collapse: collapse; width: 100%; }
.report table.findings td, .report table.findings th { border-bottom: 1px solid var(--line); padding: 2px 6px; text-align: left; vertical-align: top; }
.report .sev-error { color: var(--err); font-weight: 600; }
.report .sev-warning { color: #b26a00; font-weight: 600; }
.report dl dt { font-weight: 600; margin-top: .5em; }
.report dl dd { margin-left: 1.5em; }
.report .empty { color: var(--dim); font-style: italic; }
svg.plot { display: block; max-width: 100%; height: auto; background: var(--box); border: 1px solid var(--line); margin: .3em 0; }
svg.plot text { fill: var(--fg); font: 11px var(--sans); }
svg.plot text.t { font-weight: 600; }
svg.plot .axis { stroke: var(--dim); }
svg.plot .grid { stroke: var(--line); }
svg.plot .gen { fill: var(--panel); }
svg.plot .rebalance { fill: #e69f00; fill-opacity: .35; }
svg.plot .lane line { stroke: var(--line); }
`

// reportCSP is the report's policy: its two style sheets, images from data: URLs, no script,
// no connection.
func reportCSP() string {
	return "default-src 'none'; style-src " + sourceHash(pageCSS) + " " + sourceHash(reportCSS) +
		"; img-src data:; form-action 'none'; base-uri 'none'"
}

// Report writes the doctor's report of a capture, named title: the findings (worst first, as
// doctor.Doctor.Findings orders them) and the pictures of the series.
func Report(w io.Writer, title string, fs []doctor.Finding, s doctor.Series) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString(`<meta http-equiv="Content-Security-Policy" content="` + html.EscapeString(reportCSP()) + "\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"kdissect\">\n")
	b.WriteString("<title>kdissect doctor: " + esc(title) + "</title>\n<style>" + pageCSS + "</style>\n<style>" + reportCSS + "</style>\n</head>\n")
	b.WriteString("<body class=\"report\">\n<h1>kdissect doctor: " + esc(title) + "</h1>\n")
	ax := newTimeAxis(s)
	if !s.First.IsZero() {
		fmt.Fprintf(&b, "<p class=\"meta\">From %s to %s UTC (%s).</p>\n", s.First.UTC().Format("2006-01-02 15:04:05.000000"),
			s.Last.UTC().Format("15:04:05.000000"), s.Last.Sub(s.First).Round(time.Microsecond))
	}
	writeFindingsHTML(&b, fs)
	writeLatencyPlot(&b, s, ax)
	writeLagPlot(&b, s, ax)
	writeTimeline(&b, s, ax)
	writeThroughputPlot(&b, s, ax)
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// esc makes a string from the wire (or a file name) inert, then HTML text.
func esc(s string) string { return html.EscapeString(inert.String(s)) }

// writeFindingsHTML writes the findings as a table, then what each kind means and what to do.
func writeFindingsHTML(b *strings.Builder, fs []doctor.Finding) {
	b.WriteString("<h2>Findings</h2>\n")
	if len(fs) == 0 {
		b.WriteString("<p class=\"empty\">No findings: none of the doctor's checks fired on this capture.</p>\n")
		return
	}
	b.WriteString("<table class=\"findings\"><thead><tr><th>severity</th><th>id</th><th>finding</th><th>frames</th></tr></thead><tbody>\n")
	for _, f := range fs {
		fmt.Fprintf(b, "<tr><td class=\"sev-%s\">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", f.Severity, f.Severity,
			esc(f.ID), esc(f.Title), esc(framesCell(f.Evidence)))
	}
	b.WriteString("</tbody></table>\n<dl>\n")
	said := map[string]bool{}
	for _, f := range fs {
		key := f.ID + "\x00" + f.Why + "\x00" + f.Advice
		if said[key] {
			continue
		}
		said[key] = true
		fmt.Fprintf(b, "<dt>%s</dt><dd>%s</dd><dd>advice: %s</dd>\n", esc(f.ID), esc(f.Why), esc(f.Advice))
	}
	b.WriteString("</dl>\n")
}

// The plots' geometry, in pixels: the plot area starts left of the frame's left margin and
// leaves room on the right for the legend.
const (
	plotWidth   = 1000
	plotLeft    = 70
	plotRight   = 760
	plotTop     = 24
	plotHeight  = 200
	plotBottom  = plotTop + plotHeight
	plotSVGH    = plotBottom + 44
	legendX     = plotRight + 16
	legendLines = 12
	laneHeight  = 22
	laneLeft    = 230
	labelChars  = 34
)

// palette are the lines' colours (Okabe and Ito's, readable by the colour-blind), in turn.
var palette = [...]string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#8c564b", "#7f7f7f"}

// timeAxis maps the capture's times to x: every plot has the same, from the first message to
// the last.
type timeAxis struct {
	t0   time.Time
	span float64 // seconds, > 0
	step float64 // between ticks, seconds
}

func newTimeAxis(s doctor.Series) timeAxis {
	first, last := s.First, s.Last
	span := last.Sub(first).Seconds()
	if span <= 0 {
		span = 1
	}
	return timeAxis{t0: first, span: span, step: niceStep(span, 8)}
}

// x is where t is between left and right.
func (a timeAxis) x(t time.Time, left, right float64) float64 {
	f := t.Sub(a.t0).Seconds() / a.span
	return left + (right-left)*min(max(f, 0), 1)
}

// niceStep is a step of 1, 2 or 5 times a power of ten that cuts span into about n parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsInf(span, 0) || math.IsNaN(span) {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// num writes a number with as many decimals as step needs.
func num(v, step float64) string {
	d := 0
	if step > 0 && step < 1 {
		d = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}

// px writes a coordinate.
func px(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// valueAxis maps values from 0 to top to y between plotBottom and plotTop.
type valueAxis struct{ top, step float64 }

func newValueAxis(maxValue float64) valueAxis {
	if maxValue <= 0 || math.IsNaN(maxValue) || math.IsInf(maxValue, 0) {
		maxValue = 1
	}
	step := niceStep(maxValue, 5)
	return valueAxis{top: math.Ceil(maxValue/step) * step, step: step}
}

func (v valueAxis) y(value float64, top, bottom float64) float64 {
	return bottom - (bottom-top)*min(max(value/v.top, 0), 1)
}

// svgOpen starts a plot's SVG, height h, named plot for tests and readers, with its label.
func svgOpen(b *strings.Builder, plot, label string, h int) {
	fmt.Fprintf(b, "<svg class=\"plot\" data-plot=\"%s\" role=\"img\" aria-label=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		plot, esc(label), plotWidth, h, plotWidth, h)
}

// timeTicks draws the time axis under y, with its grid from top, and its unit.
func timeTicks(b *strings.Builder, ax timeAxis, left, right, top, y float64) {
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\"/>\n", px(left), px(y), px(right), px(y))
	for i := 0; float64(i)*ax.step <= ax.span*(1+1e-9) && i <= 100; i++ {
		sec := float64(i) * ax.step
		x := px(left + (right-left)*sec/ax.span)
		fmt.Fprintf(b, "<line class=\"grid\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\"/>", x, px(top), x, px(y))
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">%s</text>\n", x, px(y+14), num(sec, ax.step))
	}
	fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">time (s since %s UTC)</text>\n", px((left+right)/2), px(y+32),
		ax.t0.UTC().Format("15:04:05.000"))
}

// valueTicks draws the value axis of a plot, with its grid and unit.
func valueTicks(b *strings.Builder, va valueAxis, unit string) {
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", plotLeft, plotTop, plotLeft, plotBottom)
	for v := 0.0; v <= va.top*(1+1e-9); v += va.step {
		y := px(va.y(v, plotTop, plotBottom))
		fmt.Fprintf(b, "<line class=\"grid\" x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\"/>", plotLeft, y, plotRight, y)
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%s\" text-anchor=\"end\" dominant-baseline=\"middle\">%s</text>\n", plotLeft-4, y, num(v, va.step))
	}
	fmt.Fprintf(b, "<text class=\"t\" x=\"%d\" y=\"%d\">%s</text>\n", plotLeft-60, plotTop-10, html.EscapeString(unit))
}

// legend draws the lines' colours and names on the right, the first legendLines of them.
func legend(b *strings.Builder, lines []string, extra ...string) {
	y := plotTop
	for i, l := range lines {
		if i == legendLines {
			fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\">and %d more</text>\n", legendX, y+4, len(lines)-i)
			y += 16
			break
		}
		fmt.Fprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s<title>%s</title></text>\n",
			legendX, y-4, palette[i%len(palette)], legendX+14, y+5, esc(short(l)), esc(l))
		y += 16
	}
	for _, e := range extra {
		fmt.Fprintf(b, "%s\n", strings.ReplaceAll(e, "$Y", strconv.Itoa(y)))
		y += 16
	}
}

// short cuts a label to labelChars characters in its middle: the ends of names tell them apart
// (a member id's suffix, a partition's topic and number).
func short(s string) string {
	r := []rune(s)
	if len(r) <= labelChars {
		return s
	}
	head := labelChars / 3
	return string(r[:head]) + "…" + string(r[len(r)-(labelChars-head-1):])
}

// lineNames returns the lines of the marks, in order, once each.
func lineNames(marks ...[]analysis.Mark) []string {
	var names []string
	for _, ms := range marks {
		for _, m := range ms {
			names = append(names, m.Line)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// figure writes a plot's heading, then its caption after the SVG that draw writes, or the
// reason it has nothing to draw.
func figure(b *strings.Builder, id, title, caption, empty string, draw func()) {
	fmt.Fprintf(b, "<h2 id=\"%s\">%s</h2>\n<figure>\n", id, html.EscapeString(title))
	if empty != "" {
		fmt.Fprintf(b, "<p class=\"empty\" data-empty=\"%s\">%s</p>\n", id, html.EscapeString(empty))
	} else {
		draw()
	}
	fmt.Fprintf(b, "<figcaption>%s</figcaption>\n</figure>\n", caption)
}

// maxOf is the largest Max of the marks.
func maxOf(ms []analysis.Mark) float64 {
	m := 0.0
	for _, k := range ms {
		m = max(m, k.Max)
	}
	return m
}

// colours gives each line its colour by its place in lines.
func colours(lines []string) map[string]string {
	c := make(map[string]string, len(lines))
	for i, l := range lines {
		c[l] = palette[i%len(palette)]
	}
	return c
}

// bucketNote says how a series was bucketed, for a caption.
func bucketNote(s *analysis.Series) string {
	if s.Width() == 0 {
		return ""
	}
	return fmt.Sprintf(" There were more than %d values: each mark holds those of one line in %s.", analysis.SeriesLimit, s.Width())
}
