package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/inert"
)

// Layout is what a message looks like on the wire at one version, with no bytes: the header,
// then every field present at that version in wire order, as the interpreter walks them.
type Layout struct {
	API       string `json:"api"`
	APIKey    int16  `json:"api_key"`
	Direction string `json:"direction"` // schema.TypeRequest or schema.TypeResponse
	Version   int16  `json:"version"`
	Flexible  bool   `json:"flexible"`
	Header    Part   `json:"header"`
	Body      Part   `json:"body"`
	// Encodings says how each wire type of the layout is written, in the order the types
	// first appear (wire.Type.Encoding).
	Encodings []TypeEncoding `json:"encodings"`

	// paths are the layout's fields flattened, for Diff: the header's with "header." first.
	paths []schema.FieldPath
}

// Part is the header or the body of a layout.
type Part struct {
	Name    string `json:"name"` // "Response Header", "DescribeGroupsResponse"
	Version int16  `json:"version"`
	// Source is where the part's definition comes from: "built-in", or a file of --schema-dir.
	Source string `json:"source"`
	// Reason says why the header has its version (codec.Codec.HeaderReason); empty for a body.
	Reason string         `json:"reason,omitempty"`
	Fields []*LayoutField `json:"fields"`
}

// LayoutField is one field at one version: its type as on the wire (int32, compact_string,
// nullable_string, compact_array, ...), its size ("4B" or "var"), whether it may be null, its tag
// when it is sent in a tagged section, and its own fields (struct fields, an array's elements, a
// tagged section's fields).
type LayoutField struct {
	Name     string         `json:"name"`
	Type     wire.Type      `json:"type"`
	Size     string         `json:"size"`
	Nullable bool           `json:"nullable,omitempty"`
	Tag      *int           `json:"tag,omitempty"`
	About    string         `json:"about,omitempty"`
	Fields   []*LayoutField `json:"fields,omitempty"`
}

// TypeEncoding is one wire type and how it is written: "uvarint length+1, 0 = null, then UTF-8
// bytes".
type TypeEncoding struct {
	Type     wire.Type `json:"type"`
	Encoding string    `json:"encoding"`
}

// encodingsOf lists the wire types of the fields, each once, with their encodings.
func encodingsOf(parts ...[]*LayoutField) []TypeEncoding {
	var out []TypeEncoding
	seen := map[wire.Type]bool{}
	for _, fs := range parts {
		walkLayout(fs, func(f *LayoutField, _ int) {
			if e := f.Type.Encoding(); e != "" && !seen[f.Type] {
				seen[f.Type] = true
				out = append(out, TypeEncoding{f.Type, e})
			}
		})
	}
	return out
}

// LayoutAt lays out message m of API a at version v, after the header that version uses.
func LayoutAt(c *codec.Codec, a *schema.API, m *schema.Message, v int16) (*Layout, error) {
	if !m.Has(v) {
		return nil, fmt.Errorf("%s v%d does not exist: valid versions are %s", m.Name, v, m.ValidVersions)
	}
	header, hv := c.Schemas.RequestHeader, c.RequestHeaderVersion(a.Key, v)
	if m.Type == schema.TypeResponse {
		header, hv = c.Schemas.ResponseHeader, c.ResponseHeaderVersion(a.Key, v)
	}
	l := NewLayout(a.Name, m, v, header, hv)
	l.Header.Reason = c.HeaderReason(a.Key, v, m.Type == schema.TypeResponse)
	return l, nil
}

// NewLayout lays out version v of message m (of API api) after the given header definition at
// header version hv. Which header version an API version uses is the codec's business
// (codec.Codec.RequestHeaderVersion and ResponseHeaderVersion). A message merged from several
// definitions (--schema-dir) is laid out by the one of version v (schema.Message.At).
func NewLayout(api string, m *schema.Message, v int16, header *schema.Message, hv int) *Layout {
	hdrName := "Request Header"
	if m.Type == schema.TypeResponse {
		hdrName = "Response Header"
	}
	l := &Layout{API: api, APIKey: m.APIKey, Direction: m.Type, Version: v, Flexible: m.Flexible(v),
		Header: Part{Name: hdrName, Version: int16(hv), Source: header.Origin(int16(hv))},
		Body:   Part{Name: m.Name, Version: v, Source: m.Origin(v)},
	}
	if d := m.At(v); d != nil {
		m = d
	}
	if d := header.At(int16(hv)); d != nil {
		header = d
	}
	size := &LayoutField{Name: "message_size", Type: wire.Int32, Size: "4B", About: "The number of bytes that follow: header and body."}
	l.Header.Fields = append([]*LayoutField{size}, layoutStruct(header.Body, int16(hv), header.Flexible(int16(hv)))...)
	l.Body.Fields = layoutStruct(m.Body, v, m.Flexible(v))
	l.Encodings = encodingsOf(l.Header.Fields, l.Body.Fields)
	l.paths = append([]schema.FieldPath{{Path: schema.JoinPath("header", size.Name), Encoding: size.Type.String()}},
		header.Paths(int16(hv), "header")...)
	l.paths = append(l.paths, m.Paths(v, "")...)
	return l
}

// layoutStruct lays out the fields of s present at v, then, in flexible versions, the tagged
// section with the fields tagged at v in tag order.
func layoutStruct(s *schema.StructDef, v int16, flex bool) []*LayoutField {
	var out []*LayoutField
	for _, f := range s.Fields {
		if f.InBody(v) {
			out = append(out, layoutField(f, v, flex))
		}
	}
	if !flex {
		return out
	}
	section := &LayoutField{Name: "_tagged_fields", Type: wire.TaggedFields, Size: "var"}
	for _, f := range s.TaggedAt(v) {
		lf := layoutField(f, v, true) // tagged values use the compact encodings
		tag := f.Tag
		lf.Tag = &tag
		section.Fields = append(section.Fields, lf)
	}
	return append(out, section)
}

// layoutField lays out one field (any kind) at v; flex says whether the message is flexible at v.
// The field's wire type is the one the interpreter gives its node (schema.Field.WireType).
func layoutField(f *schema.Field, v int16, flex bool) *LayoutField {
	lf := &LayoutField{Name: f.Name, Type: f.WireType(v, flex), Nullable: f.NullableVersions.Contains(v), About: f.About, Size: "var"}
	switch f.Kind {
	case schema.Array:
		if f.Elem == schema.Struct {
			lf.Fields = layoutStruct(f.Struct, v, flex)
		} else {
			lf.Fields = []*LayoutField{{Name: "[i]", Type: f.Elem.Wire(false, f.Compact(v, flex)), Size: kindSize(f.Elem)}}
		}
	case schema.Struct:
		if lf.Nullable {
			lf.Fields = []*LayoutField{{Name: "present", Type: wire.Int8, Size: "1B", About: "-1 for null, 1 when the struct follows"}}
		}
		lf.Fields = append(lf.Fields, layoutStruct(f.Struct, v, flex)...)
	default:
		lf.Size = kindSize(f.Kind)
	}
	return lf
}

func kindSize(k schema.Kind) string {
	if n := k.FixedSize(); n > 0 {
		return strconv.Itoa(n) + "B"
	}
	return "var"
}

// WriteText draws the layout: a title, the header, then the body, one field per line with
// nested fields indented, "?" after nullable names and "tag N" for tagged fields.
func (l *Layout) WriteText(w io.Writer) error {
	flex := "not flexible"
	if l.Flexible {
		flex = "flexible"
	}
	title := fmt.Sprintf("%s %s v%d  (API key %d, %s, %s)", l.API, directionTitle(l.Direction), l.Version, l.APIKey, flex, fromSource(l.Body.Source))
	if _, err := io.WriteString(w, inert.String(title)+"\n"); err != nil {
		return err
	}
	tags := false
	walkLayout(l.Body.Fields, func(f *LayoutField, _ int) { tags = tags || f.Tag != nil })
	g := &grid{cols: []column{{}, {sep: "  "}, {sep: "  ", right: true}}}
	if tags {
		g.cols = append(g.cols, column{sep: "  "})
	}
	g.cols = append(g.cols, column{sep: "  "})
	head := []cell{{text: "field"}, {text: "type"}, {text: "size"}}
	if tags {
		head = append(head, cell{text: "tag"})
	}
	g.add(append(head, cell{text: "about"})...)
	add := func(f *LayoutField, depth int) {
		name := indent(depth+1) + f.Name
		if f.Nullable {
			name += "?"
		}
		cells := []cell{{text: name}, {text: f.Type.String()}, {text: f.Size}}
		if tags {
			tag := ""
			if f.Tag != nil {
				tag = fmt.Sprintf("tag %d", *f.Tag)
			}
			cells = append(cells, cell{text: tag})
		}
		g.add(append(cells, cell{text: f.About})...)
	}
	for _, p := range []Part{l.Header, l.Body} {
		title := fmt.Sprintf("%s v%d", p.Name, p.Version)
		if p.Source != l.Body.Source { // the title says where the body comes from
			title += "  (" + fromSource(p.Source) + ")"
		}
		g.note(0, title, "")
		walkLayout(p.Fields, add)
	}
	if err := g.write(w); err != nil {
		return err
	}
	return l.writeEncodings(w)
}

// writeEncodings lists how each type of the layout is written at its version.
func (l *Layout) writeEncodings(w io.Writer) error {
	if len(l.Encodings) == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\nHow each type is written at v%d (header v%d):\n", l.Version, l.Header.Version); err != nil {
		return err
	}
	g := &grid{cols: []column{{}, {sep: "  "}}}
	for _, e := range l.Encodings {
		g.add(cell{text: "  " + e.Type.String() + ":"}, cell{text: e.Encoding})
	}
	return g.write(w)
}

// fromSource is "built-in", or "from PATH" for a definition of --schema-dir.
func fromSource(source string) string {
	if source == "built-in" {
		return source
	}
	return "from " + source
}

func directionTitle(direction string) string {
	if direction == schema.TypeResponse {
		return "Response"
	}
	return "Request"
}

// walkLayout calls fn for every field in depth-first order with its depth.
func walkLayout(fs []*LayoutField, fn func(f *LayoutField, depth int)) {
	var walk func([]*LayoutField, int)
	walk = func(fs []*LayoutField, depth int) {
		for _, f := range fs {
			fn(f, depth)
			walk(f.Fields, depth+1)
		}
	}
	walk(fs, 0)
}

// WriteJSON writes the layout as an indented JSON tree.
func (l *Layout) WriteJSON(w io.Writer) error { return writeJSON(w, l) }

// writeJSON writes v as indented JSON, inert (see inertJSON).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(&inertJSON{w: w})
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Change is one difference between two layouts of a message: a field added or removed, or a
// field whose encoding changed. Paths name fields by their names from the top ("Topics.
// Partitions.CurrentLeaderEpoch"); header fields start with "header.", elements of arrays of
// scalars are "[i]", and tagged fields are named as if they were not in a tagged section.
type Change = schema.Change

// Diff lists what changes from layout a to layout b: removed fields, added fields, then fields
// whose type, nullability or tag changed, each in wire order.
func Diff(a, b *Layout) []Change { return schema.Changes(a.paths, b.paths) }
