package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseVersions(t *testing.T) {
	tests := []struct {
		in     string
		lo, hi int16
		empty  bool
		str    string
	}{
		{"0+", 0, MaxVersion, false, "0+"},
		{"3-7", 3, 7, false, "3-7"},
		{"5", 5, 5, false, "5"},
		{"none", 0, 0, true, "none"},
		{"", 0, 0, true, "none"},
	}
	for _, tt := range tests {
		v, err := ParseVersions(tt.in)
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		if v.Empty() != tt.empty || (!tt.empty && (v.Lo != tt.lo || v.Hi != tt.hi)) || v.String() != tt.str {
			t.Errorf("%q = %+v (%s)", tt.in, v, v)
		}
	}
	for _, bad := range []string{"x", "3-", "7-3", "1+2", "-1-"} {
		if _, err := ParseVersions(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	v, _ := ParseVersions("2-4")
	for ver, want := range map[int16]bool{1: false, 2: true, 4: true, 5: false} {
		if v.Contains(ver) != want {
			t.Errorf("2-4 contains %d: %v", ver, !want)
		}
	}
}

func TestParse(t *testing.T) {
	src := `// A comment before the definition
{
  "apiKey": 99, // trailing comment with "quotes"
  "type": "request",
  "name": "ExampleRequest",
  "validVersions": "0-2",
  "flexibleVersions": "2+",
  "fields": [
    { "name": "Url", "type": "string", "versions": "0+", "about": "a // not a comment" },
    { "name": "Items", "type": "[]Item", "versions": "1+", "nullableVersions": "2+" },
    { "name": "Extra", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 3 }
  ],
  "commonStructs": [
    { "name": "Item", "versions": "0+", "fields": [ { "name": "Id", "type": "uuid", "versions": "0+" } ] }
  ]
}`
	m, err := Parse([]byte(src), "example.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.APIKey != 99 || !m.HasAPIKey || m.Name != "ExampleRequest" || !m.Flexible(2) || m.Flexible(1) {
		t.Fatalf("message = %+v", m)
	}
	f := m.Body.Fields
	if f[0].About != "a // not a comment" || f[0].Kind != String {
		t.Errorf("Url = %+v", f[0])
	}
	if f[1].Kind != Array || f[1].Elem != Struct || f[1].Struct.Fields[0].Kind != UUID || !f[1].NullableVersions.Contains(2) {
		t.Errorf("Items = %+v", f[1])
	}
	if !f[2].Tagged(2) || f[2].Tag != 3 {
		t.Errorf("Extra = %+v", f[2])
	}
	for name, bad := range map[string]string{
		"unknown type":  `{"apiKey": 1, "type": "request", "name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "Nope", "versions": "0+"}]}`,
		"bad versions":  `{"apiKey": 1, "type": "request", "name": "X", "validVersions": "zero", "fields": []}`,
		"no name":       `{"apiKey": 1, "type": "request", "validVersions": "0", "fields": []}`,
		"not json":      `hello`,
		"records array": `{"apiKey": 1, "type": "request", "name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "[]records", "versions": "0+"}]}`,
	} {
		if _, err := Parse([]byte(bad), "bad.json"); err == nil || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("%s: err = %v, want an error naming the file", name, err)
		}
	}
}

func TestEmbeddedCoversEveryKey(t *testing.T) {
	s, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for k := int16(0); k <= 94; k++ {
		a := s.API(k)
		if a == nil || a.Request == nil || a.Response == nil {
			t.Errorf("API key %d lacks a request or response definition", k)
			continue
		}
		if a.Request.ValidVersions != a.Response.ValidVersions || a.Request.FlexibleVersions != a.Response.FlexibleVersions {
			t.Errorf("%s: request and response disagree on versions", a.Name)
		}
	}
	if a, err := s.Lookup("describegroups"); err != nil || a.Key != 15 {
		t.Errorf("Lookup(describegroups) = %v, %v", a, err)
	}
	if a, err := s.Lookup("3"); err != nil || a.Name != "Metadata" {
		t.Errorf("Lookup(3) = %v, %v", a, err)
	}
	if _, err := s.Lookup("NoSuchApi"); err == nil {
		t.Error("Lookup of an unknown name gave no error")
	}
}

func TestWithDirOverrides(t *testing.T) {
	dir := t.TempDir()
	def := `{"apiKey": 3, "type": "request", "name": "MetadataRequest", "validVersions": "0-99", "flexibleVersions": "9+", "fields": []}`
	if err := os.WriteFile(filepath.Join(dir, "MetadataRequest.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	// Kafka's directory holds other kinds of definitions too: they are skipped.
	if err := os.WriteFile(filepath.Join(dir, "LeaderChangeMessage.json"), []byte(`{"type": "data", "name": "LeaderChangeMessage", "validVersions": "0", "fields": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	base, _ := Embedded()
	s, err := base.WithDir(dir, -1)
	if err != nil {
		t.Fatal(err)
	}
	if !s.API(3).Request.ValidVersions.Contains(99) || s.API(3).Response != base.API(3).Response {
		t.Error("the override did not replace only the request")
	}
	if base.API(3).Request.ValidVersions.Contains(99) {
		t.Error("WithDir changed the embedded set")
	}
	if _, err := base.WithDir(t.TempDir(), -1); err == nil {
		t.Error("an empty directory gave no error")
	}
}
