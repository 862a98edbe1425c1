package schema

import "testing"

func TestKindWire(t *testing.T) {
	tests := []struct {
		k                 Kind
		nullable, compact bool
		want              string
	}{
		{Bool, false, false, "bool"},
		{Int8, false, true, "int8"},
		{Int16, false, false, "int16"},
		{Uint16, false, false, "uint16"},
		{Int32, true, true, "int32"},
		{Uint32, false, false, "uint32"},
		{Int64, false, false, "int64"},
		{Float64, false, false, "float64"},
		{UUID, false, false, "uuid"},
		{String, false, false, "string"},
		{String, true, false, "nullable_string"},
		{String, false, true, "compact_string"},
		{String, true, true, "compact_nullable_string"},
		{Bytes, false, false, "bytes"},
		{Bytes, true, false, "nullable_bytes"},
		{Bytes, false, true, "compact_bytes"},
		{Bytes, true, true, "compact_nullable_bytes"},
		{Records, true, false, "records"},
		{Records, true, true, "compact_records"},
		{Struct, false, false, ""},
		{Array, false, true, ""},
	}
	for _, tt := range tests {
		if got := tt.k.Wire(tt.nullable, tt.compact).String(); got != tt.want {
			t.Errorf("%v.Wire(%v, %v) = %q, want %q", tt.k, tt.nullable, tt.compact, got, tt.want)
		}
	}
}

func TestFieldWireType(t *testing.T) {
	all, _ := ParseVersions("0+")
	from2, _ := ParseVersions("2+")
	header, _ := ParseVersions("none")
	tests := []struct {
		f    Field
		v    int16
		flex bool
		want string
	}{
		{Field{Kind: Array, Elem: Int32}, 0, false, "array"},
		{Field{Kind: Array, Elem: Int32}, 0, true, "compact_array"},
		{Field{Kind: Struct}, 0, true, "struct"},
		{Field{Kind: Struct, NullableVersions: from2}, 1, true, "struct"},
		{Field{Kind: Struct, NullableVersions: from2}, 2, true, "nullable_struct"},
		{Field{Kind: String, NullableVersions: all}, 3, true, "compact_nullable_string"},
		// A header field that keeps the classic encoding in flexible headers (ClientId).
		{Field{Kind: String, NullableVersions: all, FlexibleVersions: &header}, 3, true, "nullable_string"},
	}
	for i, tt := range tests {
		if got := tt.f.WireType(tt.v, tt.flex).String(); got != tt.want {
			t.Errorf("%d: WireType(%d, %v) = %q, want %q", i, tt.v, tt.flex, got, tt.want)
		}
	}
}

func TestInBodyAndTaggedAt(t *testing.T) {
	parse := func(s string) Versions {
		v, err := ParseVersions(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a := &Field{Name: "A", Versions: parse("0+"), Tag: -1}
	b := &Field{Name: "B", Versions: parse("1+"), Tag: 5, TaggedVersions: parse("3+")}
	c := &Field{Name: "C", Versions: parse("0+"), Tag: 1, TaggedVersions: parse("2+")}
	s := &StructDef{Name: "S", Fields: []*Field{a, b, c}}
	tests := []struct {
		v            int16
		body, tagged string
	}{
		{0, "A C", ""},
		{1, "A B C", ""},
		{2, "A B", "C"},
		{3, "A", "C B"},
	}
	names := func(fs []*Field) string {
		var out []byte
		for i, f := range fs {
			if i > 0 {
				out = append(out, ' ')
			}
			out = append(out, f.Name...)
		}
		return string(out)
	}
	for _, tt := range tests {
		var body []*Field
		for _, f := range s.Fields {
			if f.InBody(tt.v) {
				body = append(body, f)
			}
		}
		if got := names(body); got != tt.body {
			t.Errorf("v%d: body %q, want %q", tt.v, got, tt.body)
		}
		if got := names(s.TaggedAt(tt.v)); got != tt.tagged {
			t.Errorf("v%d: tagged %q, want %q", tt.v, got, tt.tagged)
		}
	}
}
