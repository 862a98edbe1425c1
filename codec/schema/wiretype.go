package schema

import (
	"slices"

	"github.com/kdissect/kdissect/codec/wire"
)

// Wire is the wire type of a value of kind k in the encoding given: compact (flexible versions)
// or classic, nullable or not. Structs and arrays have types of their own (wire.Struct,
// wire.CompactArray, ...); for them Wire returns wire.None.
func (k Kind) Wire(nullable, compact bool) wire.Type {
	switch k {
	case Bool:
		return wire.Bool
	case Int8:
		return wire.Int8
	case Int16:
		return wire.Int16
	case Uint16:
		return wire.Uint16
	case Int32:
		return wire.Int32
	case Uint32:
		return wire.Uint32
	case Int64:
		return wire.Int64
	case Float64:
		return wire.Float64
	case UUID:
		return wire.UUID
	case String, Bytes:
		return wire.Variable(k == Bytes, nullable, compact)
	case Records:
		// Records are nullable on the wire without saying so in their type.
		if compact {
			return wire.CompactRecords
		}
		return wire.Records
	}
	return wire.None
}

// WireType is the wire type of field f at version v of a message that is flexible at v or not
// (flex): the type its node has when the interpreter decodes it.
func (f *Field) WireType(v int16, flex bool) wire.Type {
	compact := f.Compact(v, flex)
	switch f.Kind {
	case Array:
		if compact {
			return wire.CompactArray
		}
		return wire.Array
	case Struct:
		if f.NullableVersions.Contains(v) {
			return wire.NullableStruct
		}
		return wire.Struct
	}
	return f.Kind.Wire(f.NullableVersions.Contains(v), compact)
}

// Compact reports whether f uses the compact encodings at version v of a message that is
// flexible at v or not (flex): a few header fields keep the classic encoding in flexible headers.
func (f *Field) Compact(v int16, flex bool) bool {
	if f.FlexibleVersions != nil {
		return f.FlexibleVersions.Contains(v)
	}
	return flex
}

// InBody reports whether version v carries f outside the tagged section: where the struct's
// definition places it. The interpreter reads such fields in definition order, and layouts list
// them so.
func (f *Field) InBody(v int16) bool { return f.Versions.Contains(v) && !f.Tagged(v) }

// TaggedAt returns the fields of s that version v sends as tagged fields, in tag order: the
// order of a layout's tagged section (on the wire, the sender picks the order).
func (s *StructDef) TaggedAt(v int16) []*Field {
	var out []*Field
	for _, f := range s.Fields {
		if f.Versions.Contains(v) && f.Tagged(v) {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b *Field) int { return a.Tag - b.Tag })
	return out
}
