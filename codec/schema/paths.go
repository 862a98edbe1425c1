package schema

import (
	"fmt"
	"strings"

	"github.com/kdissect/kdissect/codec/wire"
)

// FieldPath is one field of a message at one version, flattened: its path from the top
// ("Topics.Partitions.CurrentLeaderEpoch"; the elements of an array of scalars are "[i]",
// tagged fields are named as if they were not in a tagged section) and its encoding on the
// wire ("compact_string", "compact_array?" when nullable, "int32 tag 0").
type FieldPath struct {
	Path, Encoding string
}

// Paths flattens version v of m (the definition At(v)) to its fields in wire order, as the
// interpreter walks them and a layout lists them: the fields the version carries, then, in
// flexible versions, each struct's tagged section with the fields tagged at v in tag order.
// prefix, when not empty, starts every path ("header").
func (m *Message) Paths(v int16, prefix string) []FieldPath {
	d := m.At(v)
	if d == nil {
		return nil
	}
	var out []FieldPath
	structPaths(d.Body, v, d.Flexible(v), prefix, &out)
	return out
}

func structPaths(s *StructDef, v int16, flex bool, prefix string, out *[]FieldPath) {
	for _, f := range s.Fields {
		if f.InBody(v) {
			fieldPaths(f, v, flex, prefix, false, out)
		}
	}
	if !flex {
		return
	}
	*out = append(*out, FieldPath{JoinPath(prefix, "_tagged_fields"), wire.TaggedFields.String()})
	for _, f := range s.TaggedAt(v) {
		fieldPaths(f, v, true, prefix, true, out) // tagged values use the compact encodings
	}
}

func fieldPaths(f *Field, v int16, flex bool, prefix string, tagged bool, out *[]FieldPath) {
	p := JoinPath(prefix, f.Name)
	t := f.WireType(v, flex)
	nullable := f.NullableVersions.Contains(v)
	*out = append(*out, FieldPath{p, Encoding(t, nullable, tagged, f.Tag)})
	switch f.Kind {
	case Array:
		if f.Elem == Struct {
			structPaths(f.Struct, v, flex, p, out)
		} else {
			*out = append(*out, FieldPath{p + "[i]", f.Elem.Wire(false, f.Compact(v, flex)).String()})
		}
	case Struct:
		if nullable {
			*out = append(*out, FieldPath{p + ".present", wire.Int8.String()})
		}
		structPaths(f.Struct, v, flex, p, out)
	}
}

// Encoding describes how a field is encoded, as paths and diffs show it: its wire type, "?"
// when it may be null and its type does not say so, and its tag when it is sent tagged.
func Encoding(t wire.Type, nullable, tagged bool, tag int) string {
	s := t.String()
	if nullable && !t.Nullable() {
		s += "?"
	}
	if tagged {
		s += fmt.Sprintf(" tag %d", tag)
	}
	return s
}

// JoinPath appends a field's name to a path: "Topics" + "Name" is "Topics.Name"; an element
// ("[i]", "[0]") follows without a dot.
func JoinPath(prefix, name string) string {
	switch {
	case prefix == "":
		return name
	case strings.HasPrefix(name, "["):
		return prefix + name
	}
	return prefix + "." + name
}

// Change is one difference between two flattened layouts: a field added or removed, or a
// field whose encoding changed.
type Change struct {
	Kind string `json:"change"` // "added", "removed" or "changed"
	Path string `json:"field"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// String is "added Topics.Name compact_string", "removed X int32", "changed Y int32 -> int64".
func (c Change) String() string {
	switch c.Kind {
	case "added":
		return "added " + c.Path + " " + c.To
	case "removed":
		return "removed " + c.Path + " " + c.From
	}
	return "changed " + c.Path + " " + c.From + " -> " + c.To
}

// Changes lists what changes from a to b: removed fields, added fields, then fields whose
// encoding changed, each in wire order.
func Changes(a, b []FieldPath) []Change {
	ia, ib := pathIndex(a), pathIndex(b)
	var removed, added, changed []Change
	for _, x := range a {
		if _, ok := ib[x.Path]; !ok {
			removed = append(removed, Change{Kind: "removed", Path: x.Path, From: x.Encoding})
		}
	}
	for _, x := range b {
		from, ok := ia[x.Path]
		switch {
		case !ok:
			added = append(added, Change{Kind: "added", Path: x.Path, To: x.Encoding})
		case from != x.Encoding:
			changed = append(changed, Change{Kind: "changed", Path: x.Path, From: from, To: x.Encoding})
		}
	}
	return append(append(removed, added...), changed...)
}

// pathIndex maps each path to its encoding; of two fields with one path, the first counts.
func pathIndex(ps []FieldPath) map[string]string {
	m := make(map[string]string, len(ps))
	for _, p := range ps {
		if _, ok := m[p.Path]; !ok {
			m[p.Path] = p.Encoding
		}
	}
	return m
}
