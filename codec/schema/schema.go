// Package schema owns kdissect's protocol knowledge: the Kafka message definitions, written in
// Kafka's own JSON message-definition format and embedded in the binary, and their loader.
//
// A definition says which fields a message has, their types, and the versions in which each
// field is present, nullable or tagged. Nothing here reads bytes; the interpreter in package
// codec walks bytes by these definitions.
package schema

import (
	"fmt"
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
	// Source names where the definition came from (embedded file or path on disk).
	Source string
}

// Flexible reports whether version v of the message uses the flexible (compact, tagged) encoding.
func (m *Message) Flexible(v int16) bool { return m.FlexibleVersions.Contains(v) }
