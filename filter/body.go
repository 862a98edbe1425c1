package filter

import (
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

// bodyOf is the body of a message as an expression sees it: its fields by name (an empty map
// for a message that was not captured, so that any field of it is nil).
func bodyOf(e *model.Entry) map[string]any {
	if e == nil || e.Msg == nil {
		return map[string]any{}
	}
	m := e.Msg
	return Body(m.Fields[min(m.HeaderFields, len(m.Fields)):])
}

// Body turns fields into a map by field name: a struct's fields are a map, an array's elements
// and a records field's batches (or a batch's records) a list, and the fields of a tagged
// section are its struct's fields like any other. Values are int (every integer type),
// float64, bool, string (strings, and bytes as they are), a topic or member id as Kafka prints
// it, or nil (null). A topic id whose name is known has the name beside it, as "topic".
func Body(fields []*codec.Node) map[string]any {
	out := make(map[string]any, len(fields))
	addFields(out, fields)
	return out
}

func addFields(out map[string]any, fields []*codec.Node) {
	for _, n := range fields {
		if n.Type == wire.TaggedFields {
			for _, t := range n.Children {
				// A known tag's node holds its tag, its size, then its value, named as the
				// field; unknown tags have no name to be asked by.
				if len(t.Children) == 3 && t.Children[2].Name == t.Name {
					out[t.Name] = value(t.Children[2])
				}
			}
			continue
		}
		out[n.Name] = value(n)
		if name, ok := n.Topic(); ok {
			out["topic"] = name
		}
	}
}

func value(n *codec.Node) any {
	switch {
	case n.Null():
		return nil
	case n.Type.IsArray() || n.Type.IsRecords() || n.Type == wire.RecordData:
		list := make([]any, len(n.Children))
		for i, c := range n.Children {
			list[i] = value(c)
		}
		return list
	case len(n.Children) > 0:
		m := make(map[string]any, len(n.Children))
		addFields(m, n.Children)
		return m
	case n.Type == wire.Struct || n.Type == wire.NullableStruct:
		return map[string]any{}
	}
	switch v := n.Value.(type) {
	case int64:
		return int(v)
	case []byte:
		return string(v)
	case codec.UUID:
		return v.String()
	}
	return n.Value
}
