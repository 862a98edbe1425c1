package schema

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestParseLenient reads what Kafka's generator reads: numbers or strings where either will
// do, comments of both kinds, a single object where a list is, keys kdissect does not use.
func TestParseLenient(t *testing.T) {
	const src = `/* a block
comment */ {
  "apiKey": "42", "type": "request", "name": "LenientRequest",
  "validVersions": 3, "flexibleVersions": "0+", "latestVersionUnstable": "true",
  "deprecatedVersions": "0-1", "listeners": "broker",
  "fields": [
    { "name": "A", "type": "int32", "versions": 3, "default": -1, "ignorable": "true" },
    { "name": "B", "type": "string", "versions": "0+", "nullableVersions": null, "tag": "7", "taggedVersions": "0+" },
    { "name": "C", "type": "[]S", "versions": "0+", "fields": { "name": "X", "type": "bool", "versions": "0+", "default": false } }
  ]
}`
	m, err := Parse([]byte(src), "lenient.json")
	if err != nil {
		t.Fatal(err)
	}
	if !m.HasAPIKey || m.APIKey != 42 || m.ValidVersions.String() != "3" {
		t.Fatalf("apiKey %d (%v), validVersions %s", m.APIKey, m.HasAPIKey, m.ValidVersions)
	}
	f := m.Body.Fields
	if f[0].Versions.String() != "3" || f[0].Default != "-1" {
		t.Errorf("A: versions %s, default %q", f[0].Versions, f[0].Default)
	}
	if f[1].Tag != 7 || !f[1].Tagged(3) || !f[1].NullableVersions.Empty() {
		t.Errorf("B: tag %d, tagged at 3 %v, nullable %s", f[1].Tag, f[1].Tagged(3), f[1].NullableVersions)
	}
	if len(f[2].Struct.Fields) != 1 || f[2].Struct.Fields[0].Name != "X" || f[2].Struct.Fields[0].Default != "false" {
		t.Errorf("C: a single object as its fields gave %+v", f[2].Struct)
	}
	for name, bad := range map[string]string{
		"tag not a number":     `{"apiKey": 1, "type": "request", "name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "int8", "versions": "0+", "tag": "one"}]}`,
		"negative tag":         `{"apiKey": 1, "type": "request", "name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "int8", "versions": "0+", "tag": -2}]}`,
		"versions an object":   `{"apiKey": 1, "type": "request", "name": "X", "validVersions": {}, "fields": []}`,
		"unterminated comment": `{"apiKey": 1, "type": "request", /* "name": "X", "validVersions": "0", "fields": []}`,
	} {
		if _, err := Parse([]byte(bad), "bad.json"); err == nil || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("%s: err = %v, want an error naming the file", name, err)
		}
	}
	// A word or a string that is no number leaves the key to --api-key, as a KIP draft's TBD.
	for _, key := range []string{`TBD`, `"TBD"`} {
		m, err := Parse([]byte(`{"apiKey": `+key+`, "type": "response", "name": "DraftResponse", "validVersions": "0", "fields": []}`), "draft.json")
		if err != nil || m.HasAPIKey {
			t.Errorf("apiKey %s: HasAPIKey %v, err %v", key, m != nil && m.HasAPIKey, err)
		}
	}
}

func TestPeekType(t *testing.T) {
	for src, want := range map[string]string{
		"// license\n{\"type\": \"data\", \"fields\": [{\"type\": \"Nowhere\"}]}": "data",
		`{"name": "X", "type": "header"}`:                                         "header",
		`{"name": "X"}`:                                                           "",
	} {
		if got, err := PeekType([]byte(src)); err != nil || got != want {
			t.Errorf("PeekType(%q) = %q, %v; want %q", src, got, err, want)
		}
	}
}

// TestKafkaShapedDir loads testdata/kafka, a directory shaped like Kafka's own (license
// headers, Kafka's header names, a string tag, a README and definitions of other kinds), whose
// layouts are the built-in ones: it loads, skips what is not a message in one notice, and
// changes no layout.
func TestKafkaShapedDir(t *testing.T) {
	base, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "kafka")
	s, err := base.WithDir(dir, -1)
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, n := range s.Notices() {
		switch n.Kind {
		case Skipped:
			skipped = append(skipped, n.Text)
		default:
			t.Errorf("notice: %s", n.Text)
		}
	}
	if len(skipped) != 1 {
		t.Fatalf("skip notices: %q, want one", skipped)
	}
	for _, w := range []string{"skipped 3 files that are not", "README.md", "ExampleAssignment.json (data)", "ExampleRecord.json (metadata)"} {
		if !strings.Contains(skipped[0], w) {
			t.Errorf("skip notice %q lacks %q", skipped[0], w)
		}
	}
	var names []string
	for _, f := range s.RequestHeader.Body.Fields {
		names = append(names, f.Name)
	}
	if want := []string{FieldAPIKey, FieldAPIVersion, FieldCorrelationID, FieldClientID}; !slices.Equal(names, want) {
		t.Errorf("request header fields %v, want %v", names, want)
	}
	if got := s.ResponseHeader.Body.Fields[0].Name; got != FieldCorrelationID {
		t.Errorf("response header field %s", got)
	}
	if s.RequestHeader.Embedded || !strings.HasSuffix(s.RequestHeader.Origin(2), "RequestHeader.json") {
		t.Errorf("request header v2 comes from %s", s.RequestHeader.Origin(2))
	}
	hb := s.API(63).Request
	if hb.Embedded || hb.Body.Fields[6].Tag != 1 || !hb.Body.Fields[6].Tagged(2) {
		t.Errorf("BrokerHeartbeatRequest from %s, CordonedLogDirs tag %d", hb.Origin(2), hb.Body.Fields[6].Tag)
	}
	// Every version of every loaded message has the built-in layout.
	for _, pair := range [][2]*Message{
		{base.RequestHeader, s.RequestHeader}, {base.ResponseHeader, s.ResponseHeader},
		{base.API(63).Request, hb}, {base.API(17).Request, s.API(17).Request}, {base.API(18).Response, s.API(18).Response},
	} {
		b, l := pair[0], pair[1]
		if l.Embedded {
			t.Errorf("%s was not loaded", l.Name)
		}
		for v := b.ValidVersions.Lo; v <= b.ValidVersions.Hi; v++ {
			if c := Changes(b.Paths(v, ""), l.Paths(v, "")); len(c) > 0 {
				t.Errorf("%s v%d: %v", l.Name, v, c)
			}
		}
	}
	if base.RequestHeader.Body.Fields[0].Name != FieldAPIKey || !base.API(63).Request.Embedded {
		t.Error("loading changed the built-in set")
	}
}

// TestOlderDirKeepsNewerVersions loads testdata/older, ApiVersions v0-3 only: those versions
// come from the files, v4 and v5 stay built-in.
func TestOlderDirKeepsNewerVersions(t *testing.T) {
	base, _ := Embedded()
	s, err := base.WithDir(filepath.Join("testdata", "older"), -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range s.Notices() {
		if n.Kind != Skipped {
			t.Errorf("notice: %s", n.Text)
		}
	}
	for _, m := range []*Message{s.API(18).Request, s.API(18).Response} {
		if m.ValidVersions.String() != "0-5" {
			t.Errorf("%s: valid versions %s", m.Name, m.ValidVersions)
		}
		for v := int16(0); v <= 5; v++ {
			d := m.At(v)
			if d == nil {
				t.Errorf("%s v%d: no definition", m.Name, v)
				continue
			}
			if d.Embedded != (v >= 4) {
				t.Errorf("%s v%d comes from %s", m.Name, v, m.Origin(v))
			}
		}
		if m.Has(6) || m.At(-1) != nil {
			t.Errorf("%s has v6 or v-1", m.Name)
		}
		if got := len(m.Definitions()); got != 2 {
			t.Errorf("%s is made of %d definitions", m.Name, got)
		}
	}
	if !s.API(18).Flexible(5) || s.API(18).Flexible(2) || !s.API(18).Flexible(9) {
		t.Error("flexible versions of the merged ApiVersions are wrong")
	}
}

// TestMergeNotices loads testdata/newer: a new version, a new API, and a version whose layout
// differs from the built-in one (the file's wins; a notice says what differs).
func TestMergeNotices(t *testing.T) {
	base, _ := Embedded()
	dir := filepath.Join("testdata", "newer")
	s, err := base.WithDir(dir, -1)
	if err != nil {
		t.Fatal(err)
	}
	var differs []string
	for _, n := range s.Notices() {
		if n.Kind == Differs {
			differs = append(differs, n.Text)
		}
	}
	want := "ReadShareGroupStateSummaryResponse v0: " + filepath.Join(dir, "ReadShareGroupStateSummaryResponse.json") +
		" differs from the built-in definition, and is used: removed Results.Partitions.LeaderEpoch int32"
	if len(differs) != 1 || differs[0] != want {
		t.Errorf("differs notices:\n%s\nwant:\n%s", strings.Join(differs, "\n"), want)
	}
	r := s.API(87).Response
	if r.At(0).Embedded || !r.At(1).Embedded {
		t.Errorf("ReadShareGroupStateSummaryResponse: v0 from %s, v1 from %s", r.Origin(0), r.Origin(1))
	}
	if a := s.API(18); !a.Request.Has(6) || a.Request.At(6).Embedded || a.Response.Has(6) {
		t.Error("ApiVersions v6: the request should be the file's, the response should not exist")
	}
	if a := s.API(96); a == nil || a.Name != "ExampleProbe" || a.Request.Embedded {
		t.Errorf("API 96: %+v", a)
	}
}

// TestMergeRanges merges files over a part of the built-in versions, and over none.
func TestMergeRanges(t *testing.T) {
	base, _ := Embedded()
	write := func(t *testing.T, versions string) *Set {
		dir := t.TempDir()
		def := `{"apiKey": 18, "type": "request", "name": "ApiVersionsRequest", "validVersions": "` + versions + `",
			"flexibleVersions": "3+", "fields": [
			{"name": "ClientSoftwareName", "type": "string", "versions": "3+"},
			{"name": "ClientSoftwareVersion", "type": "string", "versions": "3+"}]}`
		if err := os.WriteFile(filepath.Join(dir, "ApiVersionsRequest.json"), []byte(def), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := base.WithDir(dir, -1)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		versions string
		embedded []bool // v0..v5
		notices  int
	}{
		{"2-3", []bool{true, true, false, false, true, true}, 0},
		{"0-5", []bool{false, false, false, false, false, false}, 1}, // v5 lacks ClusterId and NodeId
		{"none", []bool{true, true, true, true, true, true}, 0},      // an API a release removed
		{"4-7", []bool{true, true, true, true, false, false}, 1},
	}
	for _, tt := range tests {
		s := write(t, tt.versions)
		m := s.API(18).Request
		for v, e := range tt.embedded {
			if d := m.At(int16(v)); d == nil || d.Embedded != e {
				t.Errorf("file of versions %s: v%d comes from %s", tt.versions, v, m.Origin(int16(v)))
			}
		}
		if len(s.Notices()) != tt.notices {
			t.Errorf("file of versions %s: notices %v", tt.versions, s.Notices())
		}
	}
}

func TestVersionsMinusIntersect(t *testing.T) {
	v := func(s string) Versions {
		r, err := ParseVersions(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		a, b, both string
		minus      []string
	}{
		{"0-13", "3-12", "3-12", []string{"0-2", "13"}},
		{"0-13", "0-13", "0-13", nil},
		{"0-5", "7-9", "none", []string{"0-5"}},
		{"4-9", "0-5", "4-5", []string{"6-9"}},
		{"0-3", "none", "none", []string{"0-3"}},
		{"none", "0-3", "none", nil},
		{"2+", "0-5", "2-5", []string{"6+"}},
	}
	for _, tt := range tests {
		var minus []string
		for _, r := range v(tt.a).Minus(v(tt.b)) {
			minus = append(minus, r.String())
		}
		if !slices.Equal(minus, tt.minus) {
			t.Errorf("%s minus %s = %v, want %v", tt.a, tt.b, minus, tt.minus)
		}
		if got := v(tt.a).Intersect(v(tt.b)).String(); got != tt.both {
			t.Errorf("%s and %s = %s, want %s", tt.a, tt.b, got, tt.both)
		}
	}
}

// TestHeaderRoles refuses a header whose fields are not where the protocol puts them.
func TestHeaderRoles(t *testing.T) {
	base, _ := Embedded()
	dir := t.TempDir()
	def := `{"type": "header", "name": "ResponseHeader", "validVersions": "0-1", "flexibleVersions": "1+",
		"fields": [{"name": "CorrelationId", "type": "int64", "versions": "0+"}]}`
	if err := os.WriteFile(filepath.Join(dir, "ResponseHeader.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := base.WithDir(dir, -1)
	if err == nil || !strings.Contains(err.Error(), "correlation id") || !strings.Contains(err.Error(), "ResponseHeader.json") {
		t.Errorf("an int64 correlation id: err = %v", err)
	}
}

// TestParseRefusesCycles refuses a struct that holds itself, which no walk would finish.
func TestParseRefusesCycles(t *testing.T) {
	src := `{"apiKey": 1, "type": "request", "name": "LoopRequest", "validVersions": "0", "fields": [
		{"name": "Outer", "type": "Node", "versions": "0+"}],
		"commonStructs": [
		{"name": "Node", "versions": "0+", "fields": [{"name": "Next", "type": "[]Inner", "versions": "0+", "fields": [
			{"name": "Back", "type": "Node", "versions": "0+"}]}]}]}`
	_, err := Parse([]byte(src), "loop.json")
	if err == nil || !strings.Contains(err.Error(), "Node > Inner > Node") || !strings.Contains(err.Error(), "loop.json") {
		t.Errorf("err = %v, want the cycle named", err)
	}
}

// FuzzParse: no definition, however malformed, makes the loader, the layout paths or the
// header roles panic or loop; and what readFast reads, encoding/json reads the same.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"defs", "testdata/kafka", "testdata/newer", "testdata/older"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`// c
	{"ApiKey": TBD, "apiKey" /* c */: x1, "Fields": {"name": "A", "tag": " 3", "default": -1e2, "x": [{"apiKey": w}]}} tail`))
	f.Add([]byte("{\"name\":\"\\u00e9\xc3\xa9\u00a0\", \"fields\": [], \"commonStructs\": null, \"flexibleversions\": 1.5}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if raw, ok := readFast(data, nil); ok {
			sameAsJSON(t, data, raw)
		}
		m, err := Parse(data, "fuzz.json")
		if err != nil {
			return
		}
		if m.Type == TypeHeader {
			_ = nameHeaderFields(m)
		}
		for v := m.ValidVersions.Lo; !m.ValidVersions.Empty() && v <= m.ValidVersions.Latest() && v < m.ValidVersions.Lo+8; v++ {
			_ = m.Paths(v, "")
		}
	})
}

// BenchmarkWithDir loads every built-in definition again from disk over the built-in set: the
// cost --schema-dir adds to a run when pointed at a whole release's folder (parsing, merging,
// and comparing every version both define).
func BenchmarkWithDir(b *testing.B) {
	base, err := Embedded()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := base.WithDir("defs", -1); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDirDataDefinitions: a directory's data definition of a structure kdissect decodes (an
// older release's ConsumerProtocolSubscription, v0-2) is merged over the built-in one version
// by version, and does not change the set it came from; other data definitions are skipped
// and named.
func TestDirDataDefinitions(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"ConsumerProtocolSubscription.json": `{"type": "data", "name": "ConsumerProtocolSubscription", "validVersions": "0-2",
			"flexibleVersions": "none", "fields": [
			{"name": "Topics", "type": "[]string", "versions": "0+"},
			{"name": "UserData", "type": "bytes", "versions": "0+", "nullableVersions": "0+"},
			{"name": "OwnedPartitions", "type": "[]TopicPartition", "versions": "1+", "fields": [
				{"name": "Topic", "type": "string", "versions": "1+"},
				{"name": "Partitions", "type": "[]int32", "versions": "1+"}]},
			{"name": "GenerationId", "type": "int32", "versions": "2+"}]}`,
		"OtherData.json":          `{"type": "data", "name": "OtherData", "validVersions": "0", "fields": []}`,
		"ApiVersionsRequest.json": `{"apiKey": 18, "type": "request", "name": "ApiVersionsRequest", "validVersions": "0", "flexibleVersions": "none", "fields": []}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base, _ := Embedded()
	s, err := base.WithDir(dir, -1)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Data("ConsumerProtocolSubscription")
	if m == nil || m.ValidVersions.String() != "0-3" || m.At(2).Embedded || !m.At(3).Embedded {
		t.Fatalf("merged subscription: %+v", m)
	}
	if base.Data("ConsumerProtocolSubscription").At(2) == m.At(2) {
		t.Error("the built-in set changed")
	}
	if s.Data("OtherData") != nil {
		t.Error("a data definition kdissect does not decode was taken")
	}
	var skipped []string
	for _, n := range s.Notices() {
		if n.Kind == Skipped {
			skipped = append(skipped, n.Text)
		}
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "OtherData.json (data)") || strings.Contains(skipped[0], "Consumer") {
		t.Errorf("skip notices %q", skipped)
	}
}
