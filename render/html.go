package render

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/model"
)

// DefaultMaxMessages is how many messages a workshop page holds unless the user says: enough
// for any capture a workshop looks at, few enough that Chromium opens the page in seconds.
const DefaultMaxMessages = 5000

// HTML writes the workshop page: one self-contained file (style, script and data inline, no
// request leaving it) with the message list, and for the selected message its wire diagram,
// field tree and hex dumps, linked both ways; given the doctor's findings (FindingsPage), a
// panel of them whose evidence selects its messages. Messages are embedded compactly as they come
// (see PageMessage) and drawn by the page's script when selected, so a page of thousands of
// messages opens quickly; past MaxMessages, messages are counted and left out, and the page
// and Warn say so.
type HTML struct {
	w     *bufio.Writer
	opt   Options
	pm    PageMessages
	n     int // messages written
	left  int // messages left out
	begun bool
	// notices are written after the messages, with the page's closing data.
	notices []*model.Notice
	file    string
	err     error
	// tables are those of --stats, written in a panel at the end of the page.
	tables []model.Table
	// findings are the doctor's (FindingsData), for the findings panel; nil: no panel.
	findings []byte
}

// NewHTML writes a page to w.
func NewHTML(w io.Writer, o Options) *HTML {
	return &HTML{w: bufio.NewWriterSize(w, 64<<10), opt: o, pm: PageMessages{MaxBytes: o.MaxBytes}}
}

func newHTML(w io.Writer, o Options) Renderer { return NewHTML(w, o) }

func (h *HTML) begin() {
	if h.begun {
		return
	}
	h.begun = true
	h.w.WriteString(pageHead("kdissect", pageFile))
	h.w.WriteString(`<script type="application/json" id="kd-msgs">[`)
}

// Message embeds one message, or counts it as left out past the limit.
func (h *HTML) Message(e *model.Entry) error {
	h.begin()
	if h.opt.MaxMessages > 0 && h.n >= h.opt.MaxMessages {
		h.left++
		return h.err
	}
	if h.n > 0 {
		h.w.WriteByte(',')
	}
	h.n++
	_, err := h.w.Write(h.pm.Append(nil, e, h.file))
	return err
}

// Notice is kept for the end of the page, where the list of notices is written.
func (h *HTML) Notice(n *model.Notice) error {
	c := *n
	h.notices = append(h.notices, &c)
	return nil
}

// File says that the messages that follow come from the named capture file.
func (h *HTML) File(name string) error {
	h.file = name
	return nil
}

// Tables has the page show tables (those of --stats) in a panel below the messages.
func (h *HTML) Tables(ts []model.Table) { h.tables = ts }

// Findings has the page show the doctor's findings in its findings panel.
func (h *HTML) Findings(fs []doctor.Finding) { h.findings = FindingsData(fs) }

// Flush writes out what is buffered (the page is complete only after Close).
func (h *HTML) Flush() error { return h.w.Flush() }

// Close ends the data, writes the notices and the count of messages left out, and the script.
func (h *HTML) Close() error {
	h.begin()
	h.w.WriteString("]</script>\n")
	writeMeta(h.w, PageMeta{Limit: h.opt.MaxMessages, LeftOut: h.left, Notices: h.notices})
	writeFindingsData(h.w, h.findings)
	writeTablesPanel(h.w, h.tables)
	h.w.WriteString(pageFoot())
	if h.left > 0 && h.opt.Warn != nil {
		h.opt.Warn(LeftOut(h.left, h.opt.MaxMessages))
	}
	return h.w.Flush()
}

// PageMeta is what a page says beside its messages: its limit and how many it left out, the
// notices, tables, and for a served page where to listen for more (Live, an event stream's URL, from
// message number After on), how many to keep and how many were dropped already, where to upload captures and their limit,
// where to ask which messages a display filter keeps (Filter), the token to pass on, and the
// doctor's findings.
type PageMeta struct {
	Limit     int             `json:"limit"`
	LeftOut   int             `json:"left_out"`
	Notices   []*model.Notice `json:"-"`
	Live      string          `json:"live,omitempty"`
	After     int             `json:"after,omitempty"`
	Keep      int             `json:"keep,omitempty"`
	Dropped   int             `json:"dropped,omitempty"`
	Upload    string          `json:"upload,omitempty"`
	MaxUpload int64           `json:"max_upload,omitempty"`
	Filter    string          `json:"filter,omitempty"`
	Token     string          `json:"token,omitempty"`
	// Tables are shown in a panel below the messages (those of --stats).
	Tables []model.Table `json:"-"`
	// Findings are the doctor's, encoded by FindingsData, for the findings panel (nil: none).
	Findings []byte `json:"-"`
}

type noticeJSON struct {
	Frame  int    `json:"frame"`
	Time   string `json:"time"`
	Stream int    `json:"stream"`
	Src    string `json:"src"`
	Dst    string `json:"dst"`
	Text   string `json:"text"`
}

// writeMeta writes the page's #kd-meta element.
func writeMeta(w io.Writer, m PageMeta) error {
	ns := make([]noticeJSON, 0, len(m.Notices))
	for _, n := range m.Notices {
		ns = append(ns, noticeJSON{Frame: n.Frame, Time: n.Time.UTC().Format(time.RFC3339Nano), Stream: n.Stream, Src: n.Src, Dst: n.Dst, Text: n.Text})
	}
	b, err := json.Marshal(struct {
		PageMeta
		Notices []noticeJSON `json:"notices"`
	}{m, ns})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "<script type=\"application/json\" id=\"kd-meta\">%s</script>\n", escapeForScript(b, 0))
	return err
}

// WritePage writes a whole page of messages encoded by PageMessages, for a server; connect is
// the policy's connect-src ("'self'" for a page that listens to its server).
func WritePage(w io.Writer, title string, msgs [][]byte, meta PageMeta, connect string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(pageHeadCSP(title, pageFile, PageCSP(connect)))
	bw.WriteString(`<script type="application/json" id="kd-msgs">[`)
	for i, m := range msgs {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.Write(m)
	}
	bw.WriteString("]</script>\n")
	if err := writeMeta(bw, meta); err != nil {
		return err
	}
	writeFindingsData(bw, meta.Findings)
	writeTablesPanel(bw, meta.Tables)
	bw.WriteString(pageFoot())
	return bw.Flush()
}

// LeftOut says how many messages a page left out past its limit, and how to see them.
func LeftOut(left, limit int) string {
	were := "were"
	if left == 1 {
		were = "was"
	}
	return fmt.Sprintf("the page holds the first %s; %d more %s left out: narrow the capture with filters (--api, --stream, --topic, --client-id, --errors, ...) or raise --max-messages", plural.Count(limit, "message"), left, were)
}

// PageMessages encodes messages for the workshop page's script: one JSON object per message
// with the JSON lines' keys for its facts, plus its title, its field tree in compact form and
// its bytes (redacted) in base64, with the decompressed bytes of each compressed batch. The
// live page (package serve) sends the same objects.
//
// A node is an array [name, type, offset, size, value, flags, about, pane, children...]: the
// strings are indexes into the message's table "s" (0 is the empty string); flags are the
// Flag* bits; pane is 0 for the frame's bytes and k for the k-th decompressed payload ("z").
// "x" lists the steps of the fields' encodings as the diagram's --explain shows them, each an
// array [node, offset, size, label, meaning, rule] where node is the field's index in depth-first
// order and the offset counts in the field's pane; "header_why" says why the header has its
// version. They are always there: the page is for teaching, and they cost a page 11-25% more.
type PageMessages struct {
	// MaxBytes cuts byte and string values longer than this in the shown values (0: never);
	// the bytes themselves are always whole in the hex dump.
	MaxBytes int
	strs     map[string]int
	list     []string
	json     *JSON
	// Of the message being appended: its bytes, the depth-first index of the next node, and
	// the steps found so far.
	frame []byte
	next  int
	steps []byte
}

// The bits of a page node's flags.
const (
	FlagNullable     = 1 << iota // the definition allows null at this version ("?")
	FlagError                    // a non-zero error code
	FlagSecret                   // a redacted value
	FlagDecompressed             // inside decompressed data: the offset counts in pane k
	FlagHeader                   // a field of the size prefix or the header
)

// FlagPrefixShift places the size of a node's length or count prefix (codec.Node.PrefixSize,
// the JSON's prefix.size) in its flags: flags >> FlagPrefixShift. The page lights those bytes
// in a shade of their own.
const FlagPrefixShift = 8

// Append appends the JSON object of e to b. file names the capture it came from ("" for one).
func (p *PageMessages) Append(b []byte, e *model.Entry, file string) []byte {
	m := e.Msg
	if p.strs == nil {
		p.strs = map[string]int{}
		p.json = NewJSON(io.Discard)
	}
	clear(p.strs)
	p.list = append(p.list[:0], "")
	p.strs[""] = 0

	// The facts are the JSON lines' own, made safe inside a script element.
	p.json.file = file
	from := len(b)
	b = p.json.facts(b, e)
	b = escapeForScript(b, from)
	if hasError(m.Fields) {
		b = append(b, `,"error":true`...)
	}
	b = append(b, `,"title":`...)
	b = appendJSString(b, title(e))
	b = append(b, `,"header_version":`...)
	b = strconv.AppendInt(b, int64(m.HeaderVersion), 10)
	b = append(b, `,"warnings":[`...)
	for i, w := range m.Warnings {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSString(b, w.String())
	}
	b = append(b, ']')

	inflated := m.Inflated()
	panes := map[*codec.Node]int{}
	for i, in := range inflated {
		panes[in.Node] = i + 1
	}
	d := &Diagram{opt: DiagramOptions{MaxBytes: p.MaxBytes}}
	p.frame, p.next, p.steps = e.Redacted(), 0, p.steps[:0]
	b = append(b, `,"f":`...)
	b = p.nodes(b, d, m, m.Fields, nil, 0, panes, true)
	b = append(b, `,"header_why":`...)
	b = appendJSString(b, m.HeaderReason())
	b = append(b, `,"x":[`...)
	b = append(b, p.steps...)
	b = append(b, ']')

	b = append(b, `,"b":"`...)
	b = base64.StdEncoding.AppendEncode(b, p.frame)
	b = append(b, `","z":[`...)
	for i, in := range inflated {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"at":`...)
		b = strconv.AppendInt(b, int64(in.Node.Offset), 10)
		b = append(b, `,"codec":`...)
		b = appendJSString(b, fmt.Sprint(in.Node.Value))
		b = append(b, `,"b":"`...)
		b = base64.StdEncoding.AppendEncode(b, redactInflated(in))
		b = append(b, `"}`...)
	}
	b = append(b, `],"s":[`...)
	for i, s := range p.list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSString(b, s)
	}
	return append(b, "]}"...)
}

// redactInflated masks the bytes of secret nodes inside decompressed data, as Message.Redact
// does in the frame: records hold none today, and a page must not show one if they ever do.
func redactInflated(in codec.Inflated) []byte {
	out := in.Data
	codec.Walk(in.Node.Children, func(n *codec.Node, _ int) bool {
		if n.Secret && n.Offset >= 0 && n.Offset+n.Size <= len(in.Data) {
			if &out[0] == &in.Data[0] {
				out = append([]byte(nil), in.Data...)
			}
			for i := n.Offset; i < n.Offset+n.Size; i++ {
				out[i] = '*'
			}
		}
		return true
	})
	return out
}

func hasError(ns []*codec.Node) bool {
	found := false
	codec.Walk(ns, func(n *codec.Node, _ int) bool {
		if codec.IsErrorCode(n) {
			if v, ok := n.Value.(int64); ok && v != 0 {
				found = true
			}
		}
		return !found
	})
	return found
}

func (p *PageMessages) str(s string) int {
	if i, ok := p.strs[s]; ok {
		return i
	}
	i := len(p.list)
	p.strs[s] = i
	p.list = append(p.list, s)
	return i
}

func (p *PageMessages) nodes(b []byte, d *Diagram, m *codec.Message, ns []*codec.Node, parent *codec.Node, pane int, panes map[*codec.Node]int, top bool) []byte {
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		value, _ := d.value(n, parent)
		flags := 0
		if n.Def != nil && n.Def.NullableVersions.Contains(m.Version) && !(parent != nil && parent.Def == n.Def) {
			flags |= FlagNullable
		}
		if codec.IsErrorCode(n) {
			if v, ok := n.Value.(int64); ok && v != 0 {
				flags |= FlagError
			}
		}
		if n.Secret {
			flags |= FlagSecret
		}
		if n.Decompressed {
			flags |= FlagDecompressed
		}
		if top && i < m.HeaderFields {
			flags |= FlagHeader
		}
		flags |= int(n.PrefixSize) << FlagPrefixShift
		about := ""
		if n.Def != nil && !(parent != nil && parent.Def == n.Def) {
			about = n.Def.About
		}
		p.explain(n, parent)
		p.next++
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(p.str(n.Name)), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(p.str(n.Type.String())), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(n.Offset), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(n.Size), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(p.str(value)), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(flags), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(p.str(about)), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(pane), 10)
		if len(n.Children) > 0 {
			inner := pane
			if k, ok := panes[n]; ok && n.Type == wire.CompressedRecords {
				inner = k
			}
			b = append(b, ',')
			b = p.nodes(b, d, m, n.Children, n, inner, panes, false)
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// explain adds the steps of n's encoding to p.steps.
func (p *PageMessages) explain(n, parent *codec.Node) {
	for _, s := range steps(p.frame, n, parent) {
		if len(p.steps) > 0 {
			p.steps = append(p.steps, ',')
		}
		p.steps = append(p.steps, '[')
		for i, v := range [...]int{p.next, s.Offset, s.Size, p.str(s.Label), p.str(s.Meaning), p.str(s.Rule)} {
			if i > 0 {
				p.steps = append(p.steps, ',')
			}
			p.steps = strconv.AppendInt(p.steps, int64(v), 10)
		}
		p.steps = append(p.steps, ']')
	}
}

// escapeForScript escapes <, > and & in the JSON text b[from:] (they occur only inside its
// strings), so that no value can close the script element that holds it.
func escapeForScript(b []byte, from int) []byte {
	n := 0
	for _, c := range b[from:] {
		if c == '<' || c == '>' || c == '&' {
			n++
		}
	}
	if n == 0 {
		return b
	}
	const hexd = "0123456789abcdef"
	out := make([]byte, 0, len(b)+5*n)
	out = append(out, b[:from]...)
	for _, c := range b[from:] {
		if c == '<' || c == '>' || c == '&' {
			out = append(out, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&0xf])
			continue
		}
		out = append(out, c)
	}
	return out
}

// appendJSString appends s as a JSON string that is also safe inside an HTML script element:
// <, > and & are escaped, as are U+2028 and U+2029 and invalid UTF-8 (as U+FFFD).
func appendJSString(b []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, `\u202`...)
			b = append(b, hexd[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
