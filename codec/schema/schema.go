// Package schema owns kdissect's protocol knowledge: the Kafka message definitions, written in
// Kafka's own JSON message-definition format and embedded in the binary, and their loader.
//
// A definition says which fields a message has, their types, and the versions in which each
// field is present, nullable or tagged. Nothing here reads bytes; the interpreter in package
// codec walks bytes by these definitions.
package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/codec/wire"
)

// Versions is an inclusive range of message versions. The zero value is the empty range.
type Versions struct {
	Lo, Hi int16
	set    bool
}

// MaxVersion stands for the open end of a range written "N+".
const MaxVersion = int16(32767)

// ParseVersions reads a version range as Kafka writes it: "N+", "N-M", "N" or "none".
func ParseVersions(s string) (Versions, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == "none":
		return Versions{}, nil
	case strings.HasSuffix(s, "+"):
		lo, err := strconv.ParseInt(s[:len(s)-1], 10, 16)
		if err != nil {
			return Versions{}, fmt.Errorf("version range %q: %v", s, err)
		}
		return Versions{Lo: int16(lo), Hi: MaxVersion, set: true}, nil
	case strings.Contains(s, "-"):
		a, b, _ := strings.Cut(s, "-")
		lo, err1 := strconv.ParseInt(a, 10, 16)
		hi, err2 := strconv.ParseInt(b, 10, 16)
		if err1 != nil || err2 != nil || hi < lo {
			return Versions{}, fmt.Errorf("version range %q is not N-M", s)
		}
		return Versions{Lo: int16(lo), Hi: int16(hi), set: true}, nil
	default:
		v, err := strconv.ParseInt(s, 10, 16)
		if err != nil {
			return Versions{}, fmt.Errorf("version range %q: %v", s, err)
		}
		return Versions{Lo: int16(v), Hi: int16(v), set: true}, nil
	}
}

// Contains reports whether v is in the range.
func (r Versions) Contains(v int16) bool { return r.set && v >= r.Lo && v <= r.Hi }

// Empty reports whether the range holds no version ("none").
func (r Versions) Empty() bool { return !r.set }

// Latest is the highest version of the range; for an open range ("3+", a draft) its first.
func (r Versions) Latest() int16 {
	if r.Hi == MaxVersion {
		return r.Lo
	}
	return r.Hi
}

// Minus returns the versions of r that are not in o: none, one range or two.
func (r Versions) Minus(o Versions) []Versions {
	if !r.set {
		return nil
	}
	if !o.set || o.Hi < r.Lo || o.Lo > r.Hi {
		return []Versions{r}
	}
	var out []Versions
	if r.Lo < o.Lo {
		out = append(out, Versions{Lo: r.Lo, Hi: o.Lo - 1, set: true})
	}
	if r.Hi > o.Hi {
		out = append(out, Versions{Lo: o.Hi + 1, Hi: r.Hi, set: true})
	}
	return out
}

// Intersect returns the versions in both r and o.
func (r Versions) Intersect(o Versions) Versions {
	if !r.set || !o.set || o.Hi < r.Lo || o.Lo > r.Hi {
		return Versions{}
	}
	return Versions{Lo: max(r.Lo, o.Lo), Hi: min(r.Hi, o.Hi), set: true}
}

// String writes the range back in Kafka's notation.
func (r Versions) String() string {
	switch {
	case !r.set:
		return "none"
	case r.Hi == MaxVersion:
		return fmt.Sprintf("%d+", r.Lo)
	case r.Lo == r.Hi:
		return fmt.Sprint(r.Lo)
	default:
		return fmt.Sprintf("%d-%d", r.Lo, r.Hi)
	}
}

// Kind is the wire kind of a field's type.
type Kind uint8

// The kinds of Kafka's type system.
const (
	Bool Kind = iota + 1
	Int8
	Int16
	Uint16
	Int32
	Uint32
	Int64
	Float64
	UUID
	String
	Bytes
	Records
	Struct
	Array
)

var kindNames = map[string]Kind{
	"bool": Bool, "int8": Int8, "int16": Int16, "uint16": Uint16, "int32": Int32,
	"uint32": Uint32, "int64": Int64, "float64": Float64, "uuid": UUID, "string": String,
	"bytes": Bytes, "records": Records,
}

// FixedSize is the number of bytes a fixed-size kind takes, or 0 for variable-size kinds.
func (k Kind) FixedSize() int {
	switch k {
	case Bool, Int8:
		return 1
	case Int16, Uint16:
		return 2
	case Int32, Uint32:
		return 4
	case Int64, Float64:
		return 8
	case UUID:
		return 16
	}
	return 0
}

// Field is one field of a struct.
type Field struct {
	Name string
	// Type is the type as written in the definition: "int32", "[]string", "[]Topic", "Assignment".
	Type string
	// Kind is the resolved kind; for arrays Elem is the element kind.
	Kind, Elem Kind
	// Struct holds the fields of a struct or of an array's struct elements.
	Struct *StructDef

	Versions         Versions
	NullableVersions Versions
	TaggedVersions   Versions
	// Tag is the field's tag number, or -1 for a field that is never tagged.
	Tag int
	// FlexibleVersions overrides the message's flexible versions for this field (a few header
	// fields keep their classic encoding in flexible headers).
	FlexibleVersions *Versions

	About   string
	Default string
	// EntityType says what the field names: "topicName", "groupId", "brokerId",
	// "transactionalId", "producerId" (Kafka's own annotation).
	EntityType string
	// BitField names the bits of an integer field whose bits mean things of their own
	// ("bitField": "aclOperations", kdissect's addition to the format).
	BitField wire.BitField
}

// Tagged reports whether the field is sent as a tagged field at version v.
func (f *Field) Tagged(v int16) bool { return f.Tag >= 0 && f.TaggedVersions.Contains(v) }

// StructDef is a named list of fields: a message body, an inline struct or a common struct.
type StructDef struct {
	Name   string
	Fields []*Field
}

// Message is one message definition: a request, a response or a header.
type Message struct {
	// APIKey is the API key; HasAPIKey is false when the file says something like "TBD".
	APIKey    int16
	HasAPIKey bool
	// Type is "request", "response" or "header".
	Type             string
	Name             string
	ValidVersions    Versions
	FlexibleVersions Versions
	// Body holds the top-level fields.
	Body *StructDef
	// Source names where the definition came from (embedded file or path on disk); Embedded
	// says it is one of kdissect's built-in definitions.
	Source   string
	Embedded bool

	// parts is set for a message merged from several definitions (Set.WithDir: a file's
	// versions over the built-in ones): which definition describes which versions, in version
	// order. The merged message's ValidVersions span them all; its Body, FlexibleVersions and
	// Source are those of the definition of its newest versions. Ask At for a version's.
	parts []part
}

// part is one definition of a merged message and the versions it describes there.
type part struct {
	versions Versions
	def      *Message
}

// At returns the definition that describes version v of m: m itself, or, for a message merged
// from several definitions, the one that holds v; nil when v is not a version of m.
func (m *Message) At(v int16) *Message {
	if m.parts == nil {
		if m.ValidVersions.Contains(v) {
			return m
		}
		return nil
	}
	for _, p := range m.parts {
		if p.versions.Contains(v) {
			return p.def
		}
	}
	return nil
}

// Has reports whether v is a version of m.
func (m *Message) Has(v int16) bool { return m.At(v) != nil }

// Definitions returns the definitions m is made of, oldest versions first: m alone, unless it
// was merged from several.
func (m *Message) Definitions() []*Message {
	if m.parts == nil {
		return []*Message{m}
	}
	var out []*Message
	for _, p := range m.parts {
		if !slices.Contains(out, p.def) {
			out = append(out, p.def)
		}
	}
	return out
}

// Origin says where the definition of version v comes from: "built-in", or the file's path.
func (m *Message) Origin(v int16) string {
	d := m.At(v)
	if d == nil {
		d = m
	}
	return originName(d)
}

// Flexible reports whether version v of the message uses the flexible (compact, tagged)
// encoding. For a version no definition holds (newer than known), the newest one's rule
// answers.
func (m *Message) Flexible(v int16) bool {
	if d := m.At(v); d != nil && d != m {
		return d.Flexible(v)
	}
	return m.FlexibleVersions.Contains(v)
}
