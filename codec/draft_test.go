package codec

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
)

// draftFile is the project's own KIP-draft fixture: a response definition in Kafka's JSON
// format as a draft on a proposal's page carries it, with a title before the JSON, a bare
// "apiKey": TBD, // comments (and "//" inside a string), a tab and no-break spaces, a nullable
// struct, a common struct, a tagged field and nullable bytes.
const draftFile = "testdata/draft/GroupLagDescribeResponse-draft.json.txt"

// draftKey is the API key the tests give the draft: the first one no Kafka API uses.
const draftKey = 95

// draftDir holds the draft alone, copied to a temp dir so that nothing else is loaded with it.
func draftDir(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(draftFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(draftFile)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDraftNeedsAPIKey(t *testing.T) {
	set, _ := schema.Embedded()
	_, err := set.WithDir(draftDir(t), -1)
	var noKey *schema.NoAPIKeyError
	if !errors.As(err, &noKey) || noKey.APIKey != "TBD" || noKey.Message != "GroupLagDescribeRequest" && noKey.Message != "GroupLagDescribeResponse" {
		t.Fatalf("loading a TBD apiKey without an API key: err = %#v, want a *schema.NoAPIKeyError", err)
	}
}

// TestDraftDecodes loads the KIP draft with an API key and decodes responses encoded by hand:
// version 1 (flexible, with the tagged field and the nullable struct present) and version 0.
func TestDraftDecodes(t *testing.T) {
	base, _ := schema.Embedded()
	set, err := base.WithDir(draftDir(t), draftKey)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.API(draftKey).Response.Name; got != "GroupLagDescribeResponse" {
		t.Fatalf("key %d response is %s", draftKey, got)
	}
	var b []byte
	be32 := func(v uint32) { b = binary.BigEndian.AppendUint32(b, v) }
	be64 := func(v uint64) { b = binary.BigEndian.AppendUint64(b, v) }
	b = append(b, 0, 0, 0, 0)       // size, set below
	be32(42)                        // correlation_id
	b = append(b, 0)                // header tags
	be32(5)                         // ThrottleTimeMs
	b = append(b, 0, 0)             // ErrorCode
	b = append(b, 0)                // ErrorMessage: null
	b = append(b, 4, 'g', '-', '1') // GroupId "g-1"
	b = append(b, 1)                // Partial
	b = append(b, 0)                // LagUnit
	b = append(b, 1)                // Summary present
	be64(42)                        // TotalLag
	b = append(b, 2)                // MaxLagTopic: 1 element
	b = append(b, make([]byte, 15)...)
	b = append(b, 7) // TopicId ...07
	b = append(b, 3) // Partitions: 2
	be32(0)
	be32(1)
	b = append(b, 0)             // TopicLag tags
	b = append(b, 0)             // Summary tags
	b = append(b, 3, 0xca, 0xfe) // Cursor
	b = append(b, 1, 0, 8)       // top-level tags: one, tag 0, 8 bytes
	be64(1767225600000)          // SampledAtMs
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))

	m := New(set).DecodeResponse(b, draftKey, 1)
	if len(m.Warnings) > 0 {
		t.Fatalf("warnings: %v", m.Warnings)
	}
	if d := checkTiling(m.Fields, len(b)); d != "" {
		t.Fatal(d)
	}
	want := map[string]string{
		"GroupId": "s:g-1", "ThrottleTimeMs": "5", "Partial": "true", "TotalLag": "42",
		"Cursor": "b:cafe", "TopicId": "u:00000000000000000000000000000007",
	}
	for name, w := range want {
		n := Find(m.Fields, name)
		if n == nil {
			t.Errorf("%s not decoded", name)
			continue
		}
		if got := scalarTok(n); got != w {
			t.Errorf("%s = %s, want %s", name, got, w)
		}
	}
	if n := Find(m.Fields, "ErrorMessage"); n == nil || n.Value != nil || n.Type != wire.CompactNullableString {
		t.Errorf("ErrorMessage = %+v, want a null compact_nullable_string", n)
	}
	// The tagged field: a node for the tag with its tag number, size and value.
	if n := Find(m.Fields, "SampledAtMs"); n == nil || n.Type != wire.TaggedField || len(n.Children) != 3 ||
		scalarTok(n.Children[2]) != "1767225600000" {
		t.Errorf("SampledAtMs = %+v, want a tagged field holding 1767225600000", n)
	}

	// Version 0: not flexible, no Cursor, no tags, and the summary cannot be null.
	b = b[:0]
	b = append(b, 0, 0, 0, 0)
	be32(43)
	be32(0)
	b = append(b, 0, 0)       // ErrorCode
	b = append(b, 0xff, 0xff) // ErrorMessage: null (int16 -1)
	b = append(b, 0, 1, 'g')  // GroupId "g"
	b = append(b, 0, 1)       // Partial false, LagUnit 1
	be64(0)                   // TotalLag
	be32(0)                   // MaxLagTopic: empty
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	m = New(set).DecodeResponse(b, draftKey, 0)
	if len(m.Warnings) > 0 {
		t.Fatalf("v0 warnings: %v", m.Warnings)
	}
	if d := checkTiling(m.Fields, len(b)); d != "" {
		t.Fatal(d)
	}
	if n := Find(m.Fields, "Cursor"); n != nil {
		t.Errorf("v0 has a Cursor: %+v", n)
	}
}
