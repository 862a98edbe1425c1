package render

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
)

// Layouts lays out message m of API a at each of its valid versions, oldest first.
func Layouts(c *codec.Codec, a *schema.API, m *schema.Message) ([]*Layout, error) {
	var ls []*Layout
	for v := m.ValidVersions.Lo; m.ValidVersions.Contains(v); v++ {
		l, err := LayoutAt(c, a, m, v)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		if v == schema.MaxVersion {
			break
		}
	}
	if len(ls) == 0 {
		return nil, fmt.Errorf("%s has no valid version", m.Name)
	}
	return ls, nil
}

// staticCSP is the policy of the schema pages: their own style, no script, nothing fetched.
func staticCSP() string {
	return "default-src 'none'; style-src " + sourceHash(pageCSS) + "; img-src data:; form-action 'none'; base-uri 'none'"
}

// WriteLayoutPage writes the page of one message (the layouts of every version of it, as
// Layouts makes them) with version show open: for each version the header it uses and why,
// the wire diagram in the documented layout, every field with type, size, nullability, tag
// and about text, what the API is for, the error codes its response can carry, the first message
// of the API in x's capture (when x is not nil), and links to the previous and next version with
// what changed.
func WriteLayoutPage(w io.Writer, ls []*Layout, show int16, x *Examples) error {
	return writeLayoutPage(w, ls, show, x, siteLinks{})
}

// siteLinks are the links of a page inside a site (none for a page on its own).
type siteLinks struct {
	index, errors, other, otherName string
}

func writeLayoutPage(w io.Writer, ls []*Layout, show int16, x *Examples, links siteLinks) error {
	if len(ls) == 0 {
		return fmt.Errorf("no layout to draw")
	}
	bw := bufio.NewWriter(w)
	last := ls[len(ls)-1]
	title := last.API + " " + directionTitle(last.Direction)
	bw.WriteString(pageHeadCSP(title+" — kdissect schema", "", staticCSP()))
	bw.WriteString(`<div class="doc">` + "\n")
	if links.index != "" {
		fmt.Fprintf(bw, `<p class="nav"><a href="%s">all APIs</a><a href="%s">%s</a><a href="%s">error codes</a></p>`+"\n",
			links.index, links.other, html.EscapeString(links.otherName), links.errors)
	}
	fmt.Fprintf(bw, "<h1>%s</h1>\n", html.EscapeString(title))
	if about := codec.APIAbout(last.API); about != "" {
		fmt.Fprintf(bw, "<p class=\"about\">%s</p>\n", html.EscapeString(about))
	}
	flexFrom := "never"
	for _, l := range ls {
		if l.Flexible {
			flexFrom = fmt.Sprintf("v%d", l.Version)
			break
		}
	}
	fmt.Fprintf(bw, "<p>API key %d, versions %d to %d, flexible from %s. Offsets count from the size prefix; <code>?</code> marks a nullable field; <code>var</code> sizes depend on the value.</p>\n",
		last.APIKey, ls[0].Version, last.Version, flexFrom)
	bw.WriteString(`<p class="nav">`)
	for _, l := range ls {
		fmt.Fprintf(bw, `<a href="#v%d">v%d</a>`, l.Version, l.Version)
	}
	bw.WriteString("</p>\n")
	writeErrorCodes(bw, ls, links)
	writeExample(bw, x, layoutAt(ls, show))
	for i, l := range ls {
		open := ""
		if l.Version == show {
			open = " open"
		}
		fmt.Fprintf(bw, "<details%s><summary>%s %s v%d</summary>\n<h2 id=\"v%d\">%s %s v%d</h2>\n", open,
			html.EscapeString(l.API), directionTitle(l.Direction), l.Version, l.Version, html.EscapeString(l.API), directionTitle(l.Direction), l.Version)
		fmt.Fprintf(bw, "<p>%s v%d: %s</p>\n", html.EscapeString(l.Header.Name), l.Header.Version, html.EscapeString(l.Header.Reason))
		bw.WriteString(`<p class="nav">`)
		if i > 0 {
			fmt.Fprintf(bw, `<a href="#v%d">&larr; v%d</a> %s`, ls[i-1].Version, ls[i-1].Version, html.EscapeString(changesText(Diff(ls[i-1], l))))
		}
		if i+1 < len(ls) {
			if i > 0 {
				bw.WriteString("<br>")
			}
			fmt.Fprintf(bw, `<a href="#v%d">v%d &rarr;</a> %s`, ls[i+1].Version, ls[i+1].Version, html.EscapeString(changesText(Diff(l, ls[i+1]))))
		}
		bw.WriteString("</p>\n")
		writeLayoutDiagram(bw, l)
		writeLayoutTable(bw, l)
		writeEncodingsTable(bw, l)
		bw.WriteString("</details>\n")
	}
	bw.WriteString("</div>\n</body>\n</html>\n")
	return bw.Flush()
}

// layoutAt returns the layout of version v, or the latest.
func layoutAt(ls []*Layout, v int16) *Layout {
	for _, l := range ls {
		if l.Version == v {
			return l
		}
	}
	return ls[len(ls)-1]
}

// changesText sums up a diff: "2 changes: added Topics.TopicId; removed Topics.Name".
func changesText(cs []Change) string {
	if len(cs) == 0 {
		return "no change in the layout"
	}
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		switch c.Kind {
		case "added":
			parts = append(parts, "added "+c.Path+" ("+c.To+")")
		case "removed":
			parts = append(parts, "removed "+c.Path)
		default:
			parts = append(parts, c.Path+" "+c.From+" → "+c.To)
		}
	}
	n := "1 change"
	if len(cs) > 1 {
		n = strconv.Itoa(len(cs)) + " changes"
	}
	return n + ": " + strings.Join(parts, "; ")
}

var errorName = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)

// apiErrorCodes gives, in code order, the error codes of ls's API: those Kafka names for its
// response (codec.APIErrors) and those the definitions' texts of ls name (a draft given with
// --schema-dir may name some); and whether ls has an ErrorCode field.
func apiErrorCodes(ls []*Layout) ([]codec.ErrorCode, bool) {
	found := map[int16]codec.ErrorCode{}
	for _, e := range codec.APIErrors(ls[0].API) {
		found[e.Code] = e
	}
	hasCode := false
	for _, l := range ls {
		walkLayout(l.Body.Fields, func(f *LayoutField, _ int) {
			for _, name := range errorName.FindAllString(f.About, -1) {
				if e, ok := codec.LookupError(name); ok && e.Name == name {
					found[e.Code] = e
				}
			}
			hasCode = hasCode || strings.HasSuffix(f.Name, "ErrorCode")
		})
	}
	codes := make([]codec.ErrorCode, 0, len(found))
	for _, e := range found {
		codes = append(codes, e)
	}
	sort.Slice(codes, func(i, j int) bool { return codes[i].Code < codes[j].Code })
	return codes, hasCode
}

// writeErrorCodes lists the error codes the API's response can carry, with their numbers and
// meanings, or says that Kafka names none for it; a request page says the errors come back in
// the response (linked when the page is part of a site).
func writeErrorCodes(w *bufio.Writer, ls []*Layout, links siteLinks) {
	codes, hasCode := apiErrorCodes(ls)
	table := "the error table of <code>kdissect errors</code>"
	if links.errors != "" {
		table = `the <a href="` + links.errors + `">error table</a>`
	}
	w.WriteString("<h2>Error codes</h2>\n")
	request := ls[0].Direction == schema.TypeRequest
	if request {
		response := "the response"
		if links.other != "" {
			response = `the <a href="` + links.other + `">response</a>`
		}
		fmt.Fprintf(w, "<p>A request carries no error code: the broker's errors come back in %s.</p>\n", response)
	}
	switch {
	case len(codes) > 0:
		fmt.Fprintf(w, "<p>Kafka's message definitions and response classes name these error codes for the %s response; %s has every code:</p>\n", html.EscapeString(ls[0].API), table)
		w.WriteString("<table class=\"layout\"><tr><th>code</th><th>name</th><th>meaning</th></tr>\n")
		for _, e := range codes {
			fmt.Fprintf(w, "<tr><td>%d</td><td>%s</td><td class=\"a\">%s</td></tr>\n", e.Code, e.Name, html.EscapeString(e.About))
		}
		w.WriteString("</table>\n")
	case request || hasCode:
		fmt.Fprintf(w, "<p>Kafka's definitions and documentation name no specific codes for this API; any code of %s may appear.</p>\n", table)
	default:
		w.WriteString("<p>This message has no ErrorCode field.</p>\n")
	}
}

// writeLayoutDiagram draws the documented layout: a block for the header and one for the body,
// a box per field with its name, type and size, nested fields inside their box.
func writeLayoutDiagram(w *bufio.Writer, l *Layout) {
	flex := "not flexible"
	if l.Flexible {
		flex = "flexible"
	}
	for i, p := range []Part{l.Header, l.Body} {
		cls, name := "hdr", fmt.Sprintf("%s v%d · %s", p.Name, p.Version, flex)
		if i == 1 {
			cls, name = "bdy", fmt.Sprintf("%s v%d", p.Name, p.Version)
		}
		fmt.Fprintf(w, `<div class="block %s"><div class="bt">%s</div><div class="kids">`, cls, html.EscapeString(name))
		for _, f := range p.Fields {
			layoutBox(w, f)
		}
		w.WriteString("</div></div>\n")
	}
}

func layoutBox(w *bufio.Writer, f *LayoutField) {
	cls := "box"
	if len(f.Fields) > 0 {
		cls += " c"
	}
	name := f.Name
	if f.Nullable {
		name += "?"
	}
	typ := f.Type.String()
	if f.Tag != nil {
		typ = fmt.Sprintf("tag %d, %s", *f.Tag, typ)
	}
	fmt.Fprintf(w, `<div class="%s" title="%s"><div class="l"><span class="n">%s</span> <span class="t">%s</span><span class="z"> · %s</span></div>`,
		cls, html.EscapeString(f.About), html.EscapeString(name), html.EscapeString(typ), f.Size)
	if len(f.Fields) > 0 {
		w.WriteString(`<div class="kids">`)
		for _, c := range f.Fields {
			layoutBox(w, c)
		}
		w.WriteString("</div>")
	}
	w.WriteString("</div>")
}

func writeLayoutTable(w *bufio.Writer, l *Layout) {
	w.WriteString("<table class=\"layout\"><tr><th>field</th><th>type</th><th>size</th><th>nullable</th><th>tag</th><th>about</th></tr>\n")
	for _, p := range []Part{l.Header, l.Body} {
		fmt.Fprintf(w, "<tr><th colspan=\"6\">%s v%d</th></tr>\n", html.EscapeString(p.Name), p.Version)
		walkLayout(p.Fields, func(f *LayoutField, depth int) {
			null, tag := "", ""
			if f.Nullable {
				null = "yes"
			}
			if f.Tag != nil {
				tag = strconv.Itoa(*f.Tag)
			}
			fmt.Fprintf(w, "<tr><td>%s%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"a\">%s</td></tr>\n",
				strings.Repeat("&nbsp;&nbsp;", depth+1), html.EscapeString(f.Name), f.Type, f.Size, null, tag, html.EscapeString(f.About))
		})
	}
	w.WriteString("</table>\n")
}

// writeEncodingsTable says how each type of the layout is written at its version.
func writeEncodingsTable(w *bufio.Writer, l *Layout) {
	if len(l.Encodings) == 0 {
		return
	}
	fmt.Fprintf(w, "<table class=\"layout enc\"><tr><th>type</th><th>how it is written at v%d</th></tr>\n", l.Version)
	for _, e := range l.Encodings {
		fmt.Fprintf(w, "<tr><td>%s</td><td class=\"a\">%s</td></tr>\n", e.Type, html.EscapeString(e.Encoding))
	}
	w.WriteString("</table>\n")
}

// WriteSite writes a static reference of every API in c's definitions (those of --schema-dir
// included) into dir: index.html, errors.html, and a page per API and direction
// ("Fetch-request.html") with all its versions, the latest open, and its example from x (nil:
// none). It returns the number of files written.
func WriteSite(dir string, c *codec.Codec, x *Examples) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	written := 0
	write := func(name string, fn func(w io.Writer) error) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = fn(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		written++
		return nil
	}
	apis := c.Schemas.APIs()
	for _, a := range apis {
		for _, m := range []*schema.Message{a.Request, a.Response} {
			if m == nil {
				continue
			}
			ls, err := Layouts(c, a, m)
			if err != nil {
				return written, fmt.Errorf("%s: %w", a.Name, err)
			}
			other, otherName := pageName(a.Name, "response"), a.Name+" Response"
			if m.Type == "response" {
				other, otherName = pageName(a.Name, "request"), a.Name+" Request"
			}
			links := siteLinks{index: "index.html", errors: "errors.html", other: other, otherName: otherName}
			if err := write(pageName(a.Name, m.Type), func(w io.Writer) error {
				return writeLayoutPage(w, ls, ls[len(ls)-1].Version, x, links)
			}); err != nil {
				return written, err
			}
		}
	}
	if err := write("errors.html", writeErrorsPage); err != nil {
		return written, err
	}
	return written, write("index.html", func(w io.Writer) error { return writeIndex(w, apis) })
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// pageName is the file of an API's page in a direction.
func pageName(api, direction string) string {
	return unsafeName.ReplaceAllString(api, "_") + "-" + direction + ".html"
}

func writeIndex(w io.Writer, apis []*schema.API) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(pageHeadCSP("Kafka protocol — kdissect schema", "", staticCSP()))
	bw.WriteString("<div class=\"doc\">\n<h1>The Kafka wire protocol, API by API</h1>\n")
	fmt.Fprintf(bw, "<p>%d APIs, each laid out at every version as kdissect decodes it, from the message definitions it carries (and any given with <code>--schema-dir</code>). See also the <a href=\"errors.html\">error codes</a>.</p>\n", len(apis))
	bw.WriteString("<table class=\"index\"><tr><th>key</th><th>API</th><th>versions</th><th>flexible from</th><th></th><th></th><th>what it is for</th></tr>\n")
	for _, a := range apis {
		fmt.Fprintf(bw, "<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td>", a.Key, html.EscapeString(a.Name), a.Versions(), flexibleFrom(a))
		for _, m := range []*schema.Message{a.Request, a.Response} {
			if m == nil {
				bw.WriteString("<td></td>")
				continue
			}
			fmt.Fprintf(bw, `<td><a href="%s">%s</a></td>`, pageName(a.Name, m.Type), m.Type)
		}
		fmt.Fprintf(bw, "<td class=\"a\">%s</td></tr>\n", html.EscapeString(codec.APIAbout(a.Name)))
	}
	bw.WriteString("</table>\n</div>\n</body>\n</html>\n")
	return bw.Flush()
}

func writeErrorsPage(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(pageHeadCSP("Kafka error codes — kdissect", "", staticCSP()))
	bw.WriteString("<div class=\"doc\">\n<p class=\"nav\"><a href=\"index.html\">all APIs</a></p>\n<h1>Kafka error codes</h1>\n")
	bw.WriteString("<table class=\"layout\"><tr><th>code</th><th>name</th><th>retriable</th><th>meaning</th></tr>\n")
	for _, e := range codec.ErrorCodes() {
		r := "no"
		if e.Retriable {
			r = "yes"
		}
		fmt.Fprintf(bw, "<tr id=\"%s\"><td>%d</td><td>%s</td><td>%s</td><td class=\"a\">%s</td></tr>\n", e.Name, e.Code, e.Name, r, html.EscapeString(e.About))
	}
	bw.WriteString("</table>\n</div>\n</body>\n</html>\n")
	return bw.Flush()
}
