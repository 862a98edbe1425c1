package schema

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Every run of kdissect parses the embedded definitions before it reads a packet, and
// encoding/json took nearly all of that: reflection, and a new scan of each value under the
// UnmarshalJSON methods of list, text and integer. readFast reads a definition into a
// rawMessage in one pass instead. It reads what Parse's encoding/json path reads, as that path
// reads it (comments and no-break spaces as white space, a bare apiKey word quoted, keys
// matched ignoring case, the last of a repeated key kept, the top-level object's trailing bytes
// ignored), and declines anything it does not read the same way for certain: a title before
// the JSON, escapes or non-ASCII bytes in keys, nested values where a scalar is, deep nesting.
// Parse then takes encoding/json's path, whose errors it reports; FuzzParse checks that what
// readFast accepts, that path reads the same.

// maxDepth bounds the nesting readFast follows (encoding/json's bound is 10000; definitions
// nest a few levels).
const maxDepth = 100

// reader is readFast's position in a definition.
type reader struct {
	s     string // the definition, comments and all; a plain string read is a part of it
	i     int    // the next byte of s
	depth int    // objects and arrays open
	// done holds the fields of the lists being read, read so far: a list is copied out whole
	// when it ends, rather than grown (a field is some 200 bytes).
	done []rawField
}

// readFast reads a definition as decodeJSON does, or reports false where it cannot tell that
// it would read it the same way. scratch, when not nil, is room for the fields being read,
// kept for the next call.
func readFast(data []byte, scratch *[]rawField) (rawMessage, bool) {
	r := reader{s: string(data)}
	if scratch != nil {
		r.done = (*scratch)[:0]
		defer func() { *scratch = r.done[:0] }()
	}
	var m rawMessage
	r.space()
	// Anything before the object (a KIP page's title) is clean's to drop. After the object,
	// json.Decoder reads nothing more, and neither does readFast.
	ok := r.peek() == '{' && r.message(&m)
	return m, ok
}

// message reads a definition's top-level object.
func (r *reader) message(m *rawMessage) bool {
	return r.object(func(key string) bool {
		var ok bool
		switch {
		case is(key, "apiKey"):
			m.APIKey, ok = r.apiKey(key)
		case is(key, "type"):
			m.Type, ok = r.text()
		case is(key, "name"):
			m.Name, ok = r.text()
		case is(key, "validVersions"):
			m.ValidVersions, ok = r.text()
		case is(key, "flexibleVersions"):
			m.FlexibleVersions, ok = r.text()
		case is(key, "fields"):
			m.Fields, ok = r.fields()
		case is(key, "commonStructs"):
			m.CommonStructs, ok = r.fields()
		default:
			ok = r.skip(key)
		}
		return ok
	})
}

// field reads one field's object.
func (r *reader) field(f *rawField) bool {
	return r.object(func(key string) bool {
		var ok bool
		switch {
		case is(key, "name"):
			f.Name, ok = r.text()
		case is(key, "type"):
			f.Type, ok = r.text()
		case is(key, "versions"):
			f.Versions, ok = r.text()
		case is(key, "nullableVersions"):
			f.NullableVersions, ok = r.text()
		case is(key, "taggedVersions"):
			f.TaggedVersions, ok = r.text()
		case is(key, "flexibleVersions"):
			f.FlexibleVersions, ok = r.optionalText()
		case is(key, "tag"):
			var t text
			if t, ok = r.text(); ok {
				ok = f.Tag.fromText(t) == nil
			}
		case is(key, "about"):
			f.About, ok = r.text()
		case is(key, "default"):
			f.Default, ok = r.scalar()
		case is(key, "entityType"):
			f.EntityType, ok = r.text()
		case is(key, "bitField"):
			f.BitField, ok = r.text()
		case is(key, "fields"):
			f.Fields, ok = r.fields()
		default:
			ok = r.skip(key)
		}
		return ok
	})
}

// is reports whether a key names a struct field tagged name, as encoding/json matches them:
// ignoring case. (readKey declines non-ASCII keys, for which its folding is Unicode's.)
func is(key, name string) bool {
	return len(key) == len(name) && (key == name || strings.EqualFold(key, name))
}

// object reads an object, calling value for each key with the reader at the key's value, which
// value reads.
func (r *reader) object(value func(key string) bool) bool {
	return r.open('{') && r.items('}', func() bool {
		key, ok := r.readKey()
		if !ok {
			return false
		}
		r.space()
		if !r.eat(':') {
			return false
		}
		r.space()
		return value(key)
	})
}

// items reads the items of an object or an array already open, and the byte that closes it:
// item reads one, from its first byte; commas come between them.
func (r *reader) items(end byte, item func() bool) bool {
	if r.close(end) {
		return true
	}
	for {
		if !item() {
			return false
		}
		r.space()
		if r.close(end) {
			return true
		}
		if !r.eat(',') {
			return false
		}
		r.space()
	}
}

// fields reads a list of fields: an array of objects, a single object, or null.
func (r *reader) fields() (list[rawField], bool) {
	switch r.peek() {
	case 'n':
		return nil, r.literal("null")
	case '{':
		fs := make(list[rawField], 1)
		return fs, r.field(&fs[0])
	}
	if !r.open('[') {
		return nil, false
	}
	if r.close(']') {
		return list[rawField]{}, true // encoding/json makes [] an empty list, not a nil one
	}
	base := len(r.done)
	defer func() { r.done = r.done[:base] }()
	ok := r.items(']', func() bool {
		// A field's own list is read (onto done) before the field joins done.
		var f rawField
		if r.peek() != '{' || !r.field(&f) {
			return false
		}
		r.done = append(r.done, f)
		return true
	})
	if !ok {
		return nil, false
	}
	return append(list[rawField](nil), r.done[base:]...), true
}

// text reads a value as text.UnmarshalJSON does: a string; a number or a boolean as written;
// null as "".
func (r *reader) text() (text, bool) {
	switch c := r.peek(); {
	case c == '"':
		s, ok := r.str()
		return text(s), ok
	case c == 'n':
		return "", r.literal("null")
	case c == 't' || c == 'f':
		start := r.i
		ok := r.literal("true") || r.literal("false")
		return text(r.s[start:r.i]), ok
	}
	n, ok := r.number()
	return text(n), ok
}

// optionalText reads a value for a *text field: null leaves it nil, as encoding/json does.
func (r *reader) optionalText() (*text, bool) {
	if r.peek() == 'n' {
		return nil, r.literal("null")
	}
	t, ok := r.text()
	return &t, ok
}

// scalar reads a value for an any field as encoding/json does, for the values definitions
// give (strings, numbers as float64, booleans, null); it declines objects and arrays.
func (r *reader) scalar() (any, bool) {
	switch r.peek() {
	case '"':
		s, ok := r.str()
		return s, ok
	case 'n':
		return nil, r.literal("null")
	case 't':
		return true, r.literal("true")
	case 'f':
		return false, r.literal("false")
	}
	n, ok := r.number()
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(n, 64)
	return f, err == nil
}

// apiKey reads the apiKey's value as the json.RawMessage encoding/json keeps: a scalar as
// written, or a bare word (a KIP draft's TBD) quoted, as clean quotes it where the key is
// exactly "apiKey".
func (r *reader) apiKey(key string) (json.RawMessage, bool) {
	if w := r.bare(key); w != "" {
		return json.RawMessage(`"` + w + `"`), true
	}
	start := r.i
	var ok bool
	switch r.peek() {
	case '"':
		_, ok = r.str()
	case 'n':
		ok = r.literal("null")
	case 't':
		ok = r.literal("true")
	case 'f':
		ok = r.literal("false")
	default:
		_, ok = r.number()
	}
	return json.RawMessage(r.s[start:r.i]), ok
}

// bare reads the word clean would quote as the value of key (see bareAPIKey), or returns "".
func (r *reader) bare(key string) string {
	if key != "apiKey" || !wordStart(r.peek()) {
		return ""
	}
	start := r.i
	for r.i++; r.i < len(r.s) && (wordStart(r.s[r.i]) || r.s[r.i] >= '0' && r.s[r.i] <= '9'); r.i++ {
	}
	return r.s[start:r.i]
}

func wordStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// skip reads a value no field takes, checking it as encoding/json's scanner would.
func (r *reader) skip(key string) bool {
	if r.bare(key) != "" {
		return true
	}
	switch r.peek() {
	case '{':
		return r.object(r.skip)
	case '[':
		return r.skipArray()
	case '"':
		_, ok := r.str()
		return ok
	case 'n':
		return r.literal("null")
	case 't':
		return r.literal("true")
	case 'f':
		return r.literal("false")
	}
	_, ok := r.number()
	return ok
}

func (r *reader) skipArray() bool {
	return r.open('[') && r.items(']', func() bool { return r.skip("") })
}

// readKey reads an object's key. Keys with escapes or bytes past ASCII are declined:
// encoding/json matches those after unescaping and with Unicode's folding.
func (r *reader) readKey() (string, bool) {
	if r.peek() != '"' {
		return "", false
	}
	end := plainEnd(r.s, r.i+1)
	if end == len(r.s) || r.s[end] != '"' {
		return "", false
	}
	key := r.s[r.i+1 : end]
	r.i = end + 1
	return key, true
}

// plainEnd returns the index of the first byte of s from i on that does not stand for itself
// inside a JSON string (see plainString), or len(s).
func plainEnd(s string, i int) int {
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

// str reads a string. One of printable ASCII without escapes, nearly every string, is its own
// text; another is unquoted by encoding/json, which also says whether it is a string at all.
func (r *reader) str() (string, bool) {
	start := r.i
	end := plainEnd(r.s, r.i+1)
	if end < len(r.s) && r.s[end] == '"' {
		r.i = end + 1
		return r.s[start+1 : end], true
	}
	// Find the closing quote past escapes; encoding/json checks the rest.
	for ; end < len(r.s) && r.s[end] != '"'; end++ {
		if r.s[end] == '\\' {
			end++
		}
	}
	if end >= len(r.s) {
		return "", false
	}
	r.i = end + 1
	var s string
	return s, json.Unmarshal([]byte(r.s[start:r.i]), &s) == nil
}

// number reads a number as JSON writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *reader) number() (string, bool) {
	start := r.i
	r.eat('-')
	switch {
	case r.eat('0'):
	case r.digits() == 0:
		return "", false
	}
	if r.eat('.') && r.digits() == 0 {
		return "", false
	}
	if r.eat('e') || r.eat('E') {
		if !r.eat('+') {
			r.eat('-')
		}
		if r.digits() == 0 {
			return "", false
		}
	}
	return r.s[start:r.i], true
}

// digits reads decimal digits and returns how many.
func (r *reader) digits() int {
	start := r.i
	for r.i < len(r.s) && r.s[r.i] >= '0' && r.s[r.i] <= '9' {
		r.i++
	}
	return r.i - start
}

// literal reads word (true, false or null) if it is next.
func (r *reader) literal(word string) bool {
	if !strings.HasPrefix(r.s[r.i:], word) {
		return false
	}
	r.i += len(word)
	return true
}

// space skips white space, and what clean turns into white space: comments and no-break
// spaces (see stripComments).
func (r *reader) space() {
	for {
		s, i := r.s, r.i
		for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
			i++
		}
		r.i = i
		if i == len(s) || s[i] != '/' && s[i] != 0xc2 || !r.comment() {
			return
		}
	}
}

// comment skips a comment or a no-break space, if one is next.
func (r *reader) comment() bool {
	rest := r.s[r.i:]
	switch {
	case strings.HasPrefix(rest, "\u00a0"):
		r.i += 2
	case strings.HasPrefix(rest, "//"):
		if n := strings.IndexByte(rest, '\n'); n >= 0 {
			r.i += n
		} else {
			r.i = len(r.s)
		}
	case strings.HasPrefix(rest, "/*"):
		if n := strings.Index(rest[2:], "*/"); n >= 0 {
			r.i += 2 + n + 2
		} else {
			r.i = len(r.s) // unterminated: the JSON ends early, and readFast declines it
		}
	default:
		return false
	}
	return true
}

func (r *reader) peek() byte {
	if r.i < len(r.s) {
		return r.s[r.i]
	}
	return 0
}

// eat reads c if it is next.
func (r *reader) eat(c byte) bool {
	if r.peek() != c {
		return false
	}
	r.i++
	return true
}

// open reads c, which opens an object or an array, and the white space after it.
func (r *reader) open(c byte) bool {
	if r.depth == maxDepth || !r.eat(c) {
		return false
	}
	r.depth++
	r.space()
	return true
}

// close reads c, which closes an object or an array, if it is next.
func (r *reader) close(c byte) bool {
	if !r.eat(c) {
		return false
	}
	r.depth--
	return true
}
