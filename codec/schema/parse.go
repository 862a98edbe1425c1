package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/codec/wire"
)

type rawField struct {
	Name             string     `json:"name"`
	Type             string     `json:"type"`
	Versions         string     `json:"versions"`
	NullableVersions string     `json:"nullableVersions"`
	TaggedVersions   string     `json:"taggedVersions"`
	FlexibleVersions *string    `json:"flexibleVersions"`
	Tag              *int       `json:"tag"`
	About            string     `json:"about"`
	Default          any        `json:"default"`
	EntityType       string     `json:"entityType"`
	BitField         string     `json:"bitField"`
	Fields           []rawField `json:"fields"`
}

type rawMessage struct {
	APIKey           json.RawMessage `json:"apiKey"`
	Type             string          `json:"type"`
	Name             string          `json:"name"`
	ValidVersions    string          `json:"validVersions"`
	FlexibleVersions string          `json:"flexibleVersions"`
	Fields           []rawField      `json:"fields"`
	CommonStructs    []rawField      `json:"commonStructs"`
}

// bareAPIKey matches an apiKey that is a bare word, as in a KIP draft ("apiKey": TBD).
var bareAPIKey = regexp.MustCompile(`("apiKey"\s*:\s*)([A-Za-z_][A-Za-z_0-9]*)`)

// Parse reads one definition in Kafka's JSON message format. Kafka's files carry // comments,
// which plain JSON does not allow; they are removed first. source names the file in errors.
func Parse(data []byte, source string) (*Message, error) {
	clean := bareAPIKey.ReplaceAll(stripComments(data), []byte(`$1"$2"`))
	// A definition saved from a KIP's web page may carry the page's title before the JSON.
	if i := bytes.IndexByte(clean, '{'); i > 0 && len(bytes.TrimSpace(clean[:i])) > 0 {
		clean = clean[i:]
	}
	var raw rawMessage
	dec := json.NewDecoder(bytes.NewReader(clean))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %v", source, err)
	}
	m := &Message{Type: raw.Type, Name: raw.Name, Source: source}
	if m.Name == "" {
		return nil, fmt.Errorf("%s: definition has no name", source)
	}
	if len(raw.APIKey) > 0 {
		var n int
		if err := json.Unmarshal(raw.APIKey, &n); err == nil {
			if n < 0 || n > 32767 {
				return nil, fmt.Errorf("%s: %s: apiKey %d out of range", source, m.Name, n)
			}
			m.APIKey, m.HasAPIKey = int16(n), true
		}
	} else if m.Type == "request" || m.Type == "response" {
		return nil, fmt.Errorf("%s: %s: no apiKey", source, m.Name)
	}
	var err error
	if m.ValidVersions, err = ParseVersions(raw.ValidVersions); err != nil {
		return nil, fmt.Errorf("%s: %s: validVersions: %v", source, m.Name, err)
	}
	if m.FlexibleVersions, err = ParseVersions(raw.FlexibleVersions); err != nil {
		return nil, fmt.Errorf("%s: %s: flexibleVersions: %v", source, m.Name, err)
	}
	r := resolver{common: map[string]*rawField{}, done: map[string]*StructDef{}, source: source + ": " + m.Name}
	for i := range raw.CommonStructs {
		c := &raw.CommonStructs[i]
		r.common[c.Name] = c
	}
	if m.Body, err = r.structDef(m.Name, raw.Fields); err != nil {
		return nil, err
	}
	return m, nil
}

type resolver struct {
	common map[string]*rawField
	done   map[string]*StructDef
	source string
}

func (r *resolver) structDef(name string, raws []rawField) (*StructDef, error) {
	s := &StructDef{Name: name}
	for i := range raws {
		f, err := r.field(&raws[i])
		if err != nil {
			return nil, err
		}
		s.Fields = append(s.Fields, f)
	}
	return s, nil
}

func (r *resolver) field(rf *rawField) (*Field, error) {
	f := &Field{Name: rf.Name, Type: rf.Type, About: rf.About, Tag: -1, EntityType: rf.EntityType}
	where := fmt.Sprintf("%s: field %s", r.source, rf.Name)
	var err error
	if f.Versions, err = ParseVersions(rf.Versions); err != nil {
		return nil, fmt.Errorf("%s: versions: %v", where, err)
	}
	if f.NullableVersions, err = ParseVersions(rf.NullableVersions); err != nil {
		return nil, fmt.Errorf("%s: nullableVersions: %v", where, err)
	}
	if f.TaggedVersions, err = ParseVersions(rf.TaggedVersions); err != nil {
		return nil, fmt.Errorf("%s: taggedVersions: %v", where, err)
	}
	if rf.FlexibleVersions != nil {
		fv, err := ParseVersions(*rf.FlexibleVersions)
		if err != nil {
			return nil, fmt.Errorf("%s: flexibleVersions: %v", where, err)
		}
		f.FlexibleVersions = &fv
	}
	if rf.BitField != "" {
		if f.BitField = wire.LookupBitField(rf.BitField); f.BitField == wire.NoBits {
			return nil, fmt.Errorf("%s: unknown bitField %q", where, rf.BitField)
		}
	}
	if rf.Tag != nil {
		f.Tag = *rf.Tag
		if f.TaggedVersions.Empty() {
			f.TaggedVersions = f.Versions
		}
	}
	if rf.Default != nil {
		f.Default = fmt.Sprint(rf.Default)
	}
	typ := rf.Type
	if elem, ok := strings.CutPrefix(typ, "[]"); ok {
		f.Kind = Array
		typ = elem
	}
	k, primitive := kindNames[typ]
	if !primitive {
		k = Struct
		if f.Struct, err = r.structType(typ, rf); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
	}
	if f.Kind == Array {
		f.Elem = k
		if k == Records {
			return nil, fmt.Errorf("%s: an array of records is not a Kafka type", where)
		}
	} else {
		f.Kind = k
	}
	return f, nil
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

// stripComments removes // comments that are outside JSON strings, and turns no-break spaces
// outside strings into plain ones.
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
