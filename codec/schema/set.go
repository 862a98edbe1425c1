package schema

import (
	"embed"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kdissect/kdissect/internal/suggest"
)

//go:embed defs/*.json
var embedded embed.FS

// API is one API key with its request and response definitions.
type API struct {
	Key      int16
	Name     string
	Request  *Message
	Response *Message
}

// Versions is the range of versions both directions know.
func (a *API) Versions() Versions {
	switch {
	case a.Request != nil:
		return a.Request.ValidVersions
	case a.Response != nil:
		return a.Response.ValidVersions
	}
	return Versions{}
}

// Flexible reports whether version v of the API uses flexible encoding (and headers).
func (a *API) Flexible(v int16) bool {
	if a.Request != nil {
		return a.Request.Flexible(v)
	}
	return a.Response != nil && a.Response.Flexible(v)
}

// Set is a read-only collection of definitions indexed by API key, plus the two headers.
type Set struct {
	apis           []*API              // by key: nil where no API has the key
	data           map[string]*Message // data definitions by name (Data)
	RequestHeader  *Message
	ResponseHeader *Message
	// notices are what loading a directory found that the user should know.
	notices []Notice
}

// Notice is something loading a directory found that the user should know.
type Notice struct {
	Kind NoticeKind
	Text string
}

// NoticeKind says what a notice is about.
type NoticeKind uint8

const (
	// Skipped: files of the directory that are not request, response or header definitions
	// (a README, record and data definitions), named in one notice.
	Skipped NoticeKind = iota + 1
	// Differs: versions a file defines with another layout than the definition it replaces
	// there (the file's is used), one notice per message and run of versions.
	Differs
)

var embeddedSet = sync.OnceValues(func() (*Set, error) { return loadEmbedded(parse) })

// parseFunc reads one definition (parse, or encoding/json's path alone in a test).
type parseFunc func(data []byte, source string, scratch *[]rawField) (*Message, error)

// loadEmbedded makes the set of the embedded definitions, each read by parse.
func loadEmbedded(parse parseFunc) (*Set, error) {
	ms, err := parseEmbedded(parse)
	if err != nil {
		return nil, fmt.Errorf("embedded definitions: %w", err)
	}
	s := &Set{data: map[string]*Message{}}
	for _, m := range ms {
		if err := s.addEmbedded(m); err != nil {
			return nil, fmt.Errorf("embedded definitions: %w", err)
		}
	}
	if s.RequestHeader == nil || s.ResponseHeader == nil {
		return nil, fmt.Errorf("embedded definitions: request or response header missing")
	}
	return s, nil
}

// parseEmbedded parses the embedded definitions, in the order of their files, on every core:
// every run of kdissect waits for them (a few milliseconds on one core; 45 with encoding/json).
func parseEmbedded(parse parseFunc) ([]*Message, error) {
	// Every file of defs is a definition (see the go:embed line): read by name, not by a glob,
	// which took as long as reading them.
	files, err := embedded.ReadDir("defs")
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = "defs/" + f.Name()
	}
	ms := make([]*Message, len(paths))
	errs := make([]error, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 4) {
		wg.Go(func() {
			var scratch []rawField
			for i := int(next.Add(1)) - 1; i < len(paths); i = int(next.Add(1)) - 1 {
				data, err := embedded.ReadFile(paths[i])
				if err == nil {
					ms[i], err = parse(data, paths[i], &scratch)
				}
				errs[i] = err
			}
		})
	}
	wg.Wait()
	return ms, errors.Join(errs...)
}

// addEmbedded adds embedded definition m to s.
func (s *Set) addEmbedded(m *Message) error {
	m.Embedded = true
	if m.Type == TypeData {
		if s.data[m.Name] != nil {
			return fmt.Errorf("%s: %s is defined twice", m.Source, m.Name)
		}
		s.data[m.Name] = m
		return nil
	}
	slot, err := s.slot(m)
	if err != nil {
		return err
	}
	if *slot != nil {
		return fmt.Errorf("%s: %s is defined twice", m.Source, m.Name)
	}
	*slot = m
	return nil
}

// Embedded returns the definitions built into kdissect. The set is parsed once and never changes.
func Embedded() (*Set, error) { return embeddedSet() }

// slot returns where definition m goes in s: a header, or the request or response of its API
// key (the API is made, or renamed after m, as needed). Header fields are named by their roles.
func (s *Set) slot(m *Message) (**Message, error) {
	if m.Type == TypeHeader {
		if err := nameHeaderFields(m); err != nil {
			return nil, err
		}
		if m.Name == "RequestHeader" {
			return &s.RequestHeader, nil
		}
		return &s.ResponseHeader, nil
	}
	if m.Type != TypeRequest && m.Type != TypeResponse {
		return nil, fmt.Errorf("%s: %s: type %q is not request, response or header", m.Source, m.Name, m.Type)
	}
	if !m.HasAPIKey {
		return nil, &NoAPIKeyError{Path: m.Source, Message: m.Name, APIKey: apiKeyText(m)}
	}
	if m.APIKey < 0 { // Parse and WithDir refuse them
		return nil, fmt.Errorf("%s: %s: apiKey %d out of range", m.Source, m.Name, m.APIKey)
	}
	a := s.API(m.APIKey)
	if a == nil {
		a = &API{Key: m.APIKey}
		if int(m.APIKey) >= len(s.apis) {
			s.apis = append(s.apis, make([]*API, int(m.APIKey)+1-len(s.apis))...)
		}
		s.apis[m.APIKey] = a
	}
	// A new definition for the key names the API (a renamed API in a newer release).
	a.Name = strings.TrimSuffix(strings.TrimSuffix(m.Name, "Request"), "Response")
	if m.Type == TypeRequest {
		return &a.Request, nil
	}
	return &a.Response, nil
}

// Notices returns what loading the set's directories found that the user should know, in the
// order found.
func (s *Set) Notices() []Notice { return s.notices }

// Data returns the data definition named name (ConsumerProtocolSubscription, ...), or nil. Data
// definitions describe structures that travel inside a bytes field of another message.
func (s *Set) Data(name string) *Message { return s.data[name] }

// mergeData merges the data definition in data (read from path) over the set's definition of
// the same name, version by version, and reports whether it did: only the data definitions the
// set already has are decoded anywhere; the others are skipped, as other kinds are.
func (s *Set) mergeData(data []byte, path string) bool {
	m, err := Parse(data, path)
	if err != nil || s.data[m.Name] == nil {
		return false
	}
	merged, differs := mergeVersions(s.data[m.Name], m)
	s.data[m.Name] = merged
	for _, d := range differs {
		s.notices = append(s.notices, Notice{Kind: Differs, Text: d})
	}
	return true
}

// API returns the definitions of an API key, or nil. (A list indexed by key rather than a
// map: every message asks.)
func (s *Set) API(key int16) *API {
	if key < 0 || int(key) >= len(s.apis) {
		return nil
	}
	return s.apis[key]
}

// APIs returns every API in key order.
func (s *Set) APIs() []*API {
	out := make([]*API, 0, len(s.apis))
	for _, a := range s.apis {
		if a != nil {
			out = append(out, a)
		}
	}
	return out
}

// Lookup finds an API by number or by name, ignoring case ("Metadata", "metadata", "3").
func (s *Set) Lookup(nameOrKey string) (*API, error) {
	if n, err := strconv.Atoi(nameOrKey); err == nil {
		if a := s.API(int16(n)); a != nil && n >= 0 && n <= 32767 {
			return a, nil
		}
		return nil, fmt.Errorf("no API with key %s", nameOrKey)
	}
	names := make([]string, 0, len(s.apis))
	for _, a := range s.APIs() {
		if strings.EqualFold(a.Name, nameOrKey) {
			return a, nil
		}
		names = append(names, a.Name)
	}
	slices.Sort(names) // the first of equally near names, whatever the map's order
	if near := suggest.Nearest(nameOrKey, names); near != "" {
		return nil, fmt.Errorf("no API named %q: did you mean %s?", nameOrKey, near)
	}
	return nil, fmt.Errorf("no API named %q", nameOrKey)
}

// WithDir returns a new set: s, with the definitions in dir (*.json, and *.json.txt as KIP pages
// are often saved) merged over it version by version. A file takes over the versions it
// declares; the versions of s it does not declare stay (a directory of an older Kafka release
// keeps the newer versions kdissect knows). Where a file redefines a version with another
// layout, it wins, and a notice (Notices) names the message, versions and fields that differ.
// Data definitions of the structures kdissect decodes inside bytes fields (Data) are merged the
// same way. Other files (Kafka's directory holds a README, other data definitions and record
// definitions) are skipped and named in one notice. Header fields are
// named by their roles, whatever the file calls them (FieldCorrelationID, ...).
//
// apiKey, when >= 0, is given to every definition in dir whose apiKey is not a number; such a
// definition without it is a *NoAPIKeyError, and an apiKey past an int16 an *APIKeyRangeError.
func (s *Set) WithDir(dir string, apiKey int) (*Set, error) {
	out := &Set{apis: make([]*API, len(s.apis)), data: maps.Clone(s.data), RequestHeader: s.RequestHeader, ResponseHeader: s.ResponseHeader,
		notices: slices.Clone(s.notices)}
	for k, a := range s.apis {
		if a != nil {
			c := *a
			out.apis[k] = &c
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("schema dir: %w", err)
	}
	if apiKey > 32767 {
		return nil, &APIKeyRangeError{Key: apiKey}
	}
	n := 0
	var skipped []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		if !(strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".json.txt")) {
			skipped = append(skipped, name)
			continue
		}
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		// Definitions of other kinds are skipped unread: kdissect need not understand them.
		typ, err := PeekType(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if typ == TypeData && out.mergeData(data, path) {
			continue
		}
		if typ != TypeRequest && typ != TypeResponse && typ != TypeHeader {
			if typ == "" {
				typ = "no type"
			}
			skipped = append(skipped, fmt.Sprintf("%s (%s)", name, typ))
			continue
		}
		m, err := Parse(data, path)
		if err != nil {
			return nil, err
		}
		if !m.HasAPIKey && m.Type != TypeHeader {
			if apiKey < 0 {
				return nil, &NoAPIKeyError{Path: path, Message: m.Name, APIKey: apiKeyText(m)}
			}
			m.APIKey, m.HasAPIKey = int16(apiKey), true
		}
		if err := out.merge(m); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("schema dir %s: no request or response definitions (*.json)", dir)
	}
	if len(skipped) > 0 {
		what := "file that is not a request, response or header definition"
		if len(skipped) > 1 {
			what = "files that are not request, response or header definitions"
		}
		out.notices = append(out.notices, Notice{Kind: Skipped, Text: fmt.Sprintf(
			"schema dir %s: skipped %d %s: %s", dir, len(skipped), what, strings.Join(skipped, ", "))})
	}
	return out, nil
}

// NoAPIKeyError is a request or response definition whose apiKey is not a number (a KIP
// draft's "TBD") loaded without an API key to give it.
type NoAPIKeyError struct {
	Path    string // the definition's file
	Message string // its name
	APIKey  string // what it says its apiKey is
}

func (e *NoAPIKeyError) Error() string {
	return fmt.Sprintf("%s: %s has apiKey %s, and no API key was given for it", e.Path, e.Message, e.APIKey)
}

// APIKeyRangeError is an API key given for the definitions of a directory that no request can
// carry: the wire's api_key is an int16.
type APIKeyRangeError struct{ Key int }

func (e *APIKeyRangeError) Error() string {
	return fmt.Sprintf("API key %d out of range (0 to 32767)", e.Key)
}
