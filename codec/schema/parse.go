package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/codec/wire"
)

// Kafka's generator reads definitions with Jackson, which takes a number where a string is
// expected and a numeric string where a number is ("tag": "0", "versions": 3), a single object
// where a list is, comments of both kinds, and keys it does not use. The raw types below accept
// the same.

// text is a JSON string, or a number or boolean taken as its text; null is "".
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case plainString(b):
		*t = text(b[1 : len(b)-1])
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = text(s)
	case string(b) == "null":
		*t = ""
	case string(b) == "true" || string(b) == "false" || isJSONNumber(b):
		*t = text(b)
	default:
		return fmt.Errorf("%s is not a string or a number", clip(b))
	}
	return nil
}

// plainString reports whether b is a JSON string of printable ASCII without escapes, which is
// its own value between the quotes: nearly every string of the definitions, which every run
// parses (json.Unmarshal for each took some 40% of parsing them).
func plainString(b []byte) bool {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return false
	}
	for _, c := range b[1 : len(b)-1] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// integer is a JSON number, or a string holding one, as Jackson reads an Integer or a Short.
type integer struct {
	n   int64
	set bool
}

func (n *integer) UnmarshalJSON(b []byte) error {
	var t text
	if err := t.UnmarshalJSON(b); err != nil {
		return err
	}
	return n.fromText(t)
}

// fromText sets n from a value read as text: "" leaves it unset.
func (n *integer) fromText(t text) error {
	if t == "" {
		*n = integer{}
		return nil
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(t)), 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not an integer", string(t))
	}
	*n = integer{v, true}
	return nil
}

// list is a JSON array, or a single value taken as an array of one.
type list[T any] []T

func (l *list[T]) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*l = nil
		return nil
	}
	if len(b) > 0 && b[0] != '[' {
		var one T
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*l = list[T]{one}
		return nil
	}
	var all []T
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	*l = all
	return nil
}

// isJSONNumber reports whether b is a number as JSON writes it.
func isJSONNumber(b []byte) bool {
	r := reader{s: string(b)}
	_, ok := r.number()
	return ok && r.i == len(b)
}

// clip shortens a raw JSON value for an error message.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

type rawField struct {
	Name             text           `json:"name"`
	Type             text           `json:"type"`
	Versions         text           `json:"versions"`
	NullableVersions text           `json:"nullableVersions"`
	TaggedVersions   text           `json:"taggedVersions"`
	FlexibleVersions *text          `json:"flexibleVersions"`
	Tag              integer        `json:"tag"`
	About            text           `json:"about"`
	Default          any            `json:"default"`
	EntityType       text           `json:"entityType"`
	BitField         text           `json:"bitField"`
	Fields           list[rawField] `json:"fields"`
}

type rawMessage struct {
	APIKey           json.RawMessage `json:"apiKey"`
	Type             text            `json:"type"`
	Name             text            `json:"name"`
	ValidVersions    text            `json:"validVersions"`
	FlexibleVersions text            `json:"flexibleVersions"`
	Fields           list[rawField]  `json:"fields"`
	CommonStructs    list[rawField]  `json:"commonStructs"`
}

// bareAPIKey matches an apiKey that is a bare word, as in a KIP draft ("apiKey": TBD).
var bareAPIKey = regexp.MustCompile(`("apiKey"\s*:\s*)([A-Za-z_][A-Za-z_0-9]*)`)

// clean turns a definition as Kafka, a KIP page or a hand writes it into plain JSON: comments
// removed, a bare apiKey word quoted, a title before the JSON dropped.
func clean(data []byte) []byte {
	c := bareAPIKey.ReplaceAll(stripComments(data), []byte(`$1"$2"`))
	// A definition saved from a KIP's web page may carry the page's title before the JSON.
	if i := bytes.IndexByte(c, '{'); i > 0 && len(bytes.TrimSpace(c[:i])) > 0 {
		c = c[i:]
	}
	return c
}

// Kind of definition, by its "type": the ones kdissect decodes.
const (
	TypeRequest  = "request"
	TypeResponse = "response"
	TypeHeader   = "header"
	// TypeData is a structure carried inside another message's bytes field (the consumer
	// protocol's subscription and assignment): decoded where that field is, never framed.
	TypeData = "data"
)

// PeekType returns a definition's "type" ("request", "response", "header", "data", ...)
// without reading the rest, so that definitions of other kinds can be skipped unread.
func PeekType(data []byte) (string, error) {
	var raw struct {
		Type text `json:"type"`
	}
	if err := json.Unmarshal(clean(data), &raw); err != nil {
		return "", err
	}
	return string(raw.Type), nil
}

// Parse reads one definition in Kafka's JSON message format, as leniently as Kafka's generator
// does (see text, integer and list): // and /* */ comments, numbers or strings where either
// will do, unknown keys. source names the file in errors.
func Parse(data []byte, source string) (*Message, error) { return parse(data, source, nil) }

// parse is Parse with room for the fields being read (see readFast), which a caller parsing
// many definitions keeps from one to the next.
func parse(data []byte, source string, scratch *[]rawField) (*Message, error) {
	raw, ok := readFast(data, scratch)
	if !ok {
		var err error
		if raw, err = decodeJSON(data); err != nil {
			return nil, fmt.Errorf("%s: %v", source, err)
		}
	}
	return fromRaw(&raw, source)
}

// decodeJSON reads a definition with encoding/json: what readFast declines, and the errors.
func decodeJSON(data []byte) (rawMessage, error) {
	var raw rawMessage
	err := json.NewDecoder(bytes.NewReader(clean(data))).Decode(&raw)
	return raw, err
}

// fromRaw checks a definition read and resolves its types.
func fromRaw(raw *rawMessage, source string) (*Message, error) {
	m := &Message{Type: string(raw.Type), Name: string(raw.Name), Source: source}
	if m.Name == "" {
		return nil, fmt.Errorf("%s: definition has no name", source)
	}
	var key integer
	if len(raw.APIKey) > 0 && key.UnmarshalJSON(raw.APIKey) == nil && key.set {
		// Anything else ("TBD", a bare word) leaves the key to --api-key.
		if key.n < 0 || key.n > 32767 {
			return nil, fmt.Errorf("%s: %s: apiKey %d out of range", source, m.Name, key.n)
		}
		m.APIKey, m.HasAPIKey = int16(key.n), true
	} else if len(raw.APIKey) == 0 && (m.Type == TypeRequest || m.Type == TypeResponse) {
		return nil, fmt.Errorf("%s: %s: no apiKey", source, m.Name)
	}
	var err error
	if m.ValidVersions, err = ParseVersions(string(raw.ValidVersions)); err != nil {
		return nil, fmt.Errorf("%s: %s: validVersions: %v", source, m.Name, err)
	}
	if m.FlexibleVersions, err = ParseVersions(string(raw.FlexibleVersions)); err != nil {
		return nil, fmt.Errorf("%s: %s: flexibleVersions: %v", source, m.Name, err)
	}
	r := resolver{common: map[string]*rawField{}, done: map[string]*StructDef{}, source: source + ": " + m.Name}
	for i := range raw.CommonStructs {
		c := &raw.CommonStructs[i]
		r.common[string(c.Name)] = c
	}
	if m.Body, err = r.structDef(m.Name, raw.Fields); err != nil {
		return nil, err
	}
	if path := cycle(m.Body, nil, map[*StructDef]bool{}); path != nil {
		// The interpreter and the layouts walk structs into their fields: a struct that holds
		// itself would never end. No Kafka message does it.
		return nil, fmt.Errorf("%s: %s: struct %s holds itself (%s)", source, m.Name, path[len(path)-1], strings.Join(path, " > "))
	}
	return m, nil
}

// cycle returns the names of a chain of structs from s that comes back to one of its own, or
// nil. on holds the structs being walked; done, those known to hold no cycle (common structs
// are shared: each is walked once).
func cycle(s *StructDef, on []*StructDef, done map[*StructDef]bool) []string {
	if i := slices.Index(on, s); i >= 0 {
		var names []string
		for _, o := range on[i:] {
			names = append(names, o.Name)
		}
		return append(names, s.Name)
	}
	if done[s] {
		return nil
	}
	on = append(on, s)
	for _, f := range s.Fields {
		if f.Struct != nil {
			if path := cycle(f.Struct, on, done); path != nil {
				return path
			}
		}
	}
	done[s] = true
	return nil
}

type resolver struct {
	common map[string]*rawField
	done   map[string]*StructDef
	source string
}

func (r *resolver) structDef(name string, raws list[rawField]) (*StructDef, error) {
	s := &StructDef{Name: name}
	if len(raws) == 0 {
		return s, nil
	}
	// A struct's fields are allocated together: every run resolves some two thousand.
	fs := make([]Field, len(raws))
	s.Fields = make([]*Field, len(raws))
	for i := range raws {
		if err := r.field(&fs[i], &raws[i]); err != nil {
			return nil, err
		}
		s.Fields[i] = &fs[i]
	}
	return s, nil
}

// fieldError is an error about field rf, saying where it is.
func (r *resolver) fieldError(rf *rawField, format string, args ...any) error {
	return fmt.Errorf("%s: field %s: %s", r.source, string(rf.Name), fmt.Sprintf(format, args...))
}

// field resolves rf into f.
func (r *resolver) field(f *Field, rf *rawField) error {
	*f = Field{Name: string(rf.Name), Type: string(rf.Type), About: string(rf.About), Tag: -1, EntityType: string(rf.EntityType)}
	var err error
	if f.Versions, err = ParseVersions(string(rf.Versions)); err != nil {
		return r.fieldError(rf, "versions: %v", err)
	}
	if f.NullableVersions, err = ParseVersions(string(rf.NullableVersions)); err != nil {
		return r.fieldError(rf, "nullableVersions: %v", err)
	}
	if f.TaggedVersions, err = ParseVersions(string(rf.TaggedVersions)); err != nil {
		return r.fieldError(rf, "taggedVersions: %v", err)
	}
	if rf.FlexibleVersions != nil {
		fv, err := ParseVersions(string(*rf.FlexibleVersions))
		if err != nil {
			return r.fieldError(rf, "flexibleVersions: %v", err)
		}
		f.FlexibleVersions = &fv
	}
	if rf.BitField != "" {
		if f.BitField = wire.LookupBitField(string(rf.BitField)); f.BitField == wire.NoBits {
			return r.fieldError(rf, "unknown bitField %q", string(rf.BitField))
		}
	}
	if rf.Tag.set {
		if rf.Tag.n < 0 || rf.Tag.n > 0x7fffffff {
			return r.fieldError(rf, "tag %d out of range", rf.Tag.n)
		}
		f.Tag = int(rf.Tag.n)
		if f.TaggedVersions.Empty() {
			f.TaggedVersions = f.Versions
		}
	}
	if rf.Default != nil {
		f.Default = fmt.Sprint(rf.Default)
	}
	typ := string(rf.Type)
	if elem, ok := strings.CutPrefix(typ, "[]"); ok {
		f.Kind = Array
		typ = elem
	}
	k, primitive := kindNames[typ]
	if !primitive {
		k = Struct
		if f.Struct, err = r.structType(typ, rf); err != nil {
			return r.fieldError(rf, "%v", err)
		}
	}
	if f.Kind == Array {
		f.Elem = k
		if k == Records {
			return r.fieldError(rf, "an array of records is not a Kafka type")
		}
	} else {
		f.Kind = k
	}
	return nil
}

// structType resolves a struct type: inline fields, or a common struct of the same name.
func (r *resolver) structType(name string, rf *rawField) (*StructDef, error) {
	if len(rf.Fields) > 0 {
		return r.structDef(name, rf.Fields)
	}
	if s, ok := r.done[name]; ok {
		return s, nil
	}
	c, ok := r.common[name]
	if !ok {
		return nil, fmt.Errorf("type %q is neither a Kafka type nor a struct with fields or a common struct", name)
	}
	// Register before resolving so that a self-referencing struct cannot recurse forever.
	s := &StructDef{Name: name}
	r.done[name] = s
	body, err := r.structDef(name, c.Fields)
	if err != nil {
		return nil, err
	}
	s.Fields = body.Fields
	return s, nil
}

// stripComments removes // and /* */ comments that are outside JSON strings, and turns no-break
// spaces outside strings into plain ones.
func stripComments(data []byte) []byte {
	out := make([]byte, 0, len(data))
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '/' && i+1 < len(data) && data[i+1] == '/' {
			for i < len(data) && data[i] != '\n' {
				i++
			}
			if i < len(data) {
				out = append(out, '\n')
			}
			continue
		}
		if c == '/' && i+1 < len(data) && data[i+1] == '*' {
			// A block comment: kept as the line breaks it spans, so that JSON errors still
			// point at the right line.
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				end = len(data) - i - 2 // unterminated: the JSON ends early, and the decoder says so
			}
			out = append(out, ' ')
			for _, b := range data[i+2 : i+2+end] {
				if b == '\n' {
					out = append(out, '\n')
				}
			}
			i += 2 + end + 1
			continue
		}
		if c == 0xc2 && i+1 < len(data) && data[i+1] == 0xa0 {
			// A no-break space, as pages copied from a browser carry: white space to a reader.
			out = append(out, ' ')
			i++
			continue
		}
		if c == '"' {
			inString = true
		}
		out = append(out, c)
	}
	return out
}

// apiKeyText is used in error messages for a definition without a numeric key.
func apiKeyText(m *Message) string {
	if m.HasAPIKey {
		return strconv.Itoa(int(m.APIKey))
	}
	return "TBD"
}
