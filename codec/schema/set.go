package schema

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	apis           map[int16]*API
	RequestHeader  *Message
	ResponseHeader *Message
}

var embeddedSet = sync.OnceValues(func() (*Set, error) {
	s := &Set{apis: map[int16]*API{}}
	err := fs.WalkDir(embedded, "defs", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := embedded.ReadFile(path)
		if err != nil {
			return err
		}
		m, err := Parse(data, path)
		if err != nil {
			return err
		}
		return s.add(m)
	})
	if err != nil {
		return nil, fmt.Errorf("embedded definitions: %w", err)
	}
	if s.RequestHeader == nil || s.ResponseHeader == nil {
		return nil, fmt.Errorf("embedded definitions: request or response header missing")
	}
	return s, nil
})

// Embedded returns the definitions built into kdissect. The set is parsed once and never changes.
func Embedded() (*Set, error) { return embeddedSet() }

func (s *Set) add(m *Message) error {
	if m.Type == "header" {
		switch m.Name {
		case "RequestHeader":
			s.RequestHeader = m
		case "ResponseHeader":
			s.ResponseHeader = m
		default:
			return fmt.Errorf("%s: unknown header %q", m.Source, m.Name)
		}
		return nil
	}
	if m.Type != "request" && m.Type != "response" {
		return fmt.Errorf("%s: %s: type %q is not request, response or header", m.Source, m.Name, m.Type)
	}
	if !m.HasAPIKey {
		return fmt.Errorf("%s: %s has no numeric apiKey; give it one with --api-key", m.Source, m.Name)
	}
	a := s.apis[m.APIKey]
	if a == nil {
		a = &API{Key: m.APIKey}
		s.apis[m.APIKey] = a
	}
	base := strings.TrimSuffix(strings.TrimSuffix(m.Name, "Request"), "Response")
	if a.Name == "" {
		a.Name = base
	} else if a.Name != base {
		// A new definition for the key replaces the name too (a renamed API in a newer release).
		a.Name = base
	}
	if m.Type == "request" {
		a.Request = m
	} else {
		a.Response = m
	}
	return nil
}

// API returns the definitions of an API key, or nil.
func (s *Set) API(key int16) *API { return s.apis[key] }

// APIs returns every API in key order.
func (s *Set) APIs() []*API {
	out := make([]*API, 0, len(s.apis))
	for _, a := range s.apis {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Lookup finds an API by number or by name, ignoring case ("Metadata", "metadata", "3").
func (s *Set) Lookup(nameOrKey string) (*API, error) {
	if n, err := strconv.Atoi(nameOrKey); err == nil {
		if a := s.apis[int16(n)]; a != nil && n >= 0 && n <= 32767 {
			return a, nil
		}
		return nil, fmt.Errorf("no API with key %s", nameOrKey)
	}
	for _, a := range s.apis {
		if strings.EqualFold(a.Name, nameOrKey) {
			return a, nil
		}
	}
	return nil, fmt.Errorf("no API named %q", nameOrKey)
}

// WithDir returns a new set: s, with the definitions in dir (*.json, and *.json.txt as KIP pages
// are often saved) taking precedence. apiKey, when >= 0, is given to every definition in dir
// whose apiKey is not a number; such a definition without it is an error.
func (s *Set) WithDir(dir string, apiKey int) (*Set, error) {
	out := &Set{apis: map[int16]*API{}, RequestHeader: s.RequestHeader, ResponseHeader: s.ResponseHeader}
	for k, a := range s.apis {
		c := *a
		out.apis[k] = &c
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("schema dir: %w", err)
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".json.txt")) {
			continue
		}
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		m, err := Parse(data, path)
		if err != nil {
			return nil, err
		}
		if m.Type != "request" && m.Type != "response" && m.Type != "header" {
			continue // Kafka's directory also holds record and metadata definitions
		}
		if !m.HasAPIKey && m.Type != "header" {
			if apiKey < 0 {
				return nil, fmt.Errorf("%s: %s has apiKey %s; pass --api-key N to give it one", path, m.Name, apiKeyText(m))
			}
			if apiKey > 32767 {
				return nil, fmt.Errorf("--api-key %d out of range", apiKey)
			}
			m.APIKey, m.HasAPIKey = int16(apiKey), true
		}
		if err := out.add(m); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("schema dir %s: no request or response definitions (*.json)", dir)
	}
	return out, nil
}
