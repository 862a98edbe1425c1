package schema

import (
	"encoding/json"
	"io/fs"
	"testing"
)

// TestTextPlain checks that a string read without json.Unmarshal (plainString) reads as
// json.Unmarshal reads it, and that the others still go through it.
func TestTextPlain(t *testing.T) {
	for _, in := range []string{`"Topics"`, `""`, `"0+"`, `"a b"`, `"tab\there"`, `"quote\"d"`, `"back\\slash"`,
		`"\u0041"`, "\"caf\xc3\xa9\"", "\"bad \xff\"", "\"del\x7f\"", ` "spaced" `} {
		var got text
		if err := got.UnmarshalJSON([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%s: json: %v", in, err)
		}
		if string(got) != want {
			t.Errorf("%s: read %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{`"a"`, `"Topics.Partitions"`} {
		if !plainString([]byte(in)) {
			t.Errorf("%s: not plain", in)
		}
	}
	for _, in := range []string{`"`, `"a\"b"`, `"a\\b"`, "\"\x01\"", "\"\xc3\xa9\"", `"a`, `a"`} {
		if plainString([]byte(in)) {
			t.Errorf("%s: plain", in)
		}
	}
}

// BenchmarkParseEmbedded parses every embedded definition, as each run of kdissect does.
func BenchmarkParseEmbedded(b *testing.B) {
	paths, err := fs.Glob(embedded, "defs/*.json")
	if err != nil {
		b.Fatal(err)
	}
	var files [][]byte
	for _, p := range paths {
		data, err := embedded.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
	}
	b.ReportAllocs()
	var scratch []rawField
	for b.Loop() {
		for i, data := range files {
			if _, err := parse(data, paths[i], &scratch); err != nil {
				b.Fatal(err)
			}
		}
	}
}
