package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/internal/cli"
)

// schemaGolden compares output with testdata/schema/name (golden writes under testdata/golden).
func schemaGolden(t *testing.T, name, out string) {
	t.Helper()
	golden(t, filepath.Join("..", "schema", name), []byte(out))
}

// TestSchemaGoldens pins the layout of every API's request and response at its latest version,
// the API table, the error table and a few diffs.
func TestSchemaGoldens(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	check := func(name string, args ...string) {
		t.Helper()
		want[name] = true
		t.Run(name, func(t *testing.T) {
			out, errOut, code := kdissect(t, args...)
			if code != 0 {
				t.Fatalf("kdissect %s: exit %d: %s", strings.Join(args, " "), code, errOut)
			}
			schemaGolden(t, name, out)
		})
	}
	for _, a := range set.APIs() {
		for _, m := range []*schema.Message{a.Request, a.Response} {
			if m == nil {
				continue
			}
			v := m.ValidVersions.Latest()
			check(fmt.Sprintf("%s-v%d-%s.txt", a.Name, v, m.Type), "schema", a.Name, "--"+m.Type)
		}
	}
	check("apis.txt", "schema")
	check("errors.txt", "errors")
	check("DescribeGroups-v6-response.json", "schema", "describegroups", "--version", "6", "--response", "--format", "json")
	check("Fetch-diff-v11..v13-request.txt", "schema", "Fetch", "--diff", "11..13")
	check("Metadata-diff-v8..v9-response.txt", "schema", "3", "--diff", "8..9", "--response")
	check("Metadata-diff-v8..v9-response.json", "schema", "3", "--diff", "8..9", "--response", "--format", "json")

	// No golden file may outlive its API (draft- and compare- files are TestSchemaDraft's and
	// TestSchemaCompare's).
	files, err := filepath.Glob(filepath.Join("testdata", "schema", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if base := filepath.Base(f); !want[base] && !strings.HasPrefix(base, "draft-") && !strings.HasPrefix(base, "compare-") {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("%s is no longer produced by any test", f)
		}
	}
}

// TestSchemaDescribeGroupsV6 checks the layout against the reference wire diagram
// (the DescribeGroups v6 response wire diagram the project started from): every field it draws, in the
// real wire order and nesting, the response header v1 first.
func TestSchemaDescribeGroupsV6(t *testing.T) {
	out, errOut, code := kdissect(t, "schema", "DescribeGroups", "--version", "6", "--response")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := []string{
		"Response Header v1",
		"  message_size int32 4B",
		"  correlation_id int32 4B",
		"  _tagged_fields tagged_fields var",
		"DescribeGroupsResponse v6",
		"  ThrottleTimeMs int32 4B",
		"  Groups compact_array var",
		"    ErrorCode int16 2B",
		"    ErrorMessage? compact_nullable_string var",
		"    GroupId compact_string var",
		"    GroupState compact_string var",
		"    ProtocolType compact_string var",
		"    ProtocolData compact_string var",
		"    Members compact_array var",
		"      MemberId compact_string var",
		"      GroupInstanceId? compact_nullable_string var",
		"      ClientId compact_string var",
		"      ClientHost compact_string var",
		"      MemberMetadata compact_bytes var",
		"      MemberAssignment compact_bytes var",
		"      _tagged_fields tagged_fields var",
		"    AuthorizedOperations int32 4B",
		"    _tagged_fields tagged_fields var",
		"  _tagged_fields tagged_fields var",
	}
	// The table, then how each of its types is written.
	table, encodings, _ := strings.Cut(out, "\n\n")
	for _, e := range []string{"How each type is written at v6 (header v1):",
		"compact_nullable_string: uvarint length+1, 0 = null, then UTF-8 bytes",
		"tagged_fields: uvarint count, then per field: uvarint tag, uvarint size, the value's bytes"} {
		if !strings.Contains(strings.Join(strings.Fields(encodings), " "), e) {
			t.Errorf("no %q in the encodings:\n%s", e, encodings)
		}
	}
	lines := strings.Split(table, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "DescribeGroups Response v6") {
		t.Fatalf("no title:\n%s", out)
	}
	var got []string
	for _, l := range lines[2:] { // title, column names
		// name, type and size, with the name's indentation; the about text goes.
		ind := len(l) - len(strings.TrimLeft(l, " "))
		f := strings.Fields(l)
		got = append(got, strings.Repeat(" ", ind)+strings.Join(f[:min(3, len(f))], " "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("layout:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSchemaHeaders checks which header each kind of version gets.
func TestSchemaHeaders(t *testing.T) {
	tests := []struct {
		args   []string
		header string
	}{
		{[]string{"schema", "Metadata", "--version", "8"}, "Request Header v1"},
		{[]string{"schema", "Metadata", "--version", "9"}, "Request Header v2"},
		{[]string{"schema", "Metadata", "--version", "8", "--response"}, "Response Header v0"},
		{[]string{"schema", "Metadata", "--version", "9", "--response"}, "Response Header v1"},
		{[]string{"schema", "ApiVersions", "--version", "3", "--response"}, "Response Header v0"},
		{[]string{"schema", "ApiVersions", "--version", "3"}, "Request Header v2"},
		{[]string{"schema", "ControlledShutdown", "--version", "0"}, "Request Header v0"},
		{[]string{"schema", "ControlledShutdown", "--version", "1"}, "Request Header v1"},
	}
	for _, tt := range tests {
		out, errOut, code := kdissect(t, tt.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errOut)
		}
		if !strings.Contains(out, "\n"+tt.header+"\n") {
			t.Errorf("%v: no %q:\n%s", tt.args, tt.header, out)
		}
		if strings.HasSuffix(tt.header, "v0") && strings.Contains(out, "client_id") {
			t.Errorf("%v: a v0 header has a client id:\n%s", tt.args, out)
		}
	}
}

func TestSchemaDiff(t *testing.T) {
	tests := []struct {
		args []string
		want []string // rows: change, field, from, to
	}{
		{[]string{"schema", "Metadata", "--diff", "8..9"}, []string{
			"added|header._tagged_fields||tagged_fields",
			"changed|Topics|array?|compact_array?",
			"changed|Topics.Name|string|compact_string",
		}},
		{[]string{"schema", "DescribeGroups", "--diff", "5..6", "--response"}, []string{
			"added|Groups.ErrorMessage||compact_nullable_string",
		}},
		{[]string{"schema", "Fetch", "--diff", "12..13"}, []string{
			"removed|Topics.Topic|compact_string|",
			"added|Topics.TopicId||uuid",
		}},
		{[]string{"schema", "Fetch", "--diff", "11..12"}, []string{
			"added|ClusterId||compact_nullable_string tag 0",
			"changed|RackId|string|compact_string",
		}},
		{[]string{"schema", "Fetch", "--diff", "13..13"}, nil},
	}
	for _, tt := range tests {
		out, errOut, code := kdissect(t, tt.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errOut)
		}
		rows := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			if !strings.HasPrefix(l, "│") {
				continue
			}
			var cells []string
			for _, c := range strings.Split(strings.Trim(l, "│"), "│") {
				cells = append(cells, strings.TrimSpace(c))
			}
			rows[strings.Join(cells, "|")] = true
		}
		for _, w := range tt.want {
			if !rows[w] {
				t.Errorf("%v: no row %s:\n%s", tt.args, w, out)
			}
		}
		if tt.want == nil && !strings.Contains(out, ": 0 changes") {
			t.Errorf("%v: changes between a version and itself:\n%s", tt.args, out)
		}
	}
}

func TestSchemaErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown API", []string{"schema", "NoSuchApi"}, 2, "no API named"},
		{"unknown key", []string{"schema", "999"}, 2, "no API with key"},
		{"version too new", []string{"schema", "DescribeGroups", "--version", "99"}, 2, "valid versions are 0-6"},
		{"both directions", []string{"schema", "Metadata", "--request", "--response"}, 2, "not both"},
		{"two APIs", []string{"schema", "Metadata", "Fetch"}, 2, "one API"},
		{"bad diff", []string{"schema", "Metadata", "--diff", "8-9"}, 2, "A..B"},
		{"diff out of range", []string{"schema", "Metadata", "--diff", "8..99"}, 2, "valid versions"},
		{"diff and version", []string{"schema", "Metadata", "--diff", "8..9", "--version", "3"}, 2, "--diff"},
		{"version without API", []string{"schema", "--version", "3"}, 2, "need an API"},
		{"bad format", []string{"schema", "Metadata", "--format", "summary"}, 2, "diagram, json or html"},
		{"api key without dir", []string{"schema", "--api-key", "68"}, 2, "--schema-dir"},
		{"html without API", []string{"schema", "--format", "html"}, 2, "--site DIR"},
		{"html diff", []string{"schema", "Metadata", "--format", "html", "--diff", "8..9"}, 2, "use diagram or json"},
		{"site with API", []string{"schema", "Metadata", "--site", "x"}, 2, "--site writes every API"},
		{"schema dir missing", []string{"schema", "--schema-dir", "testdata/no-such-dir"}, 1, "schema dir"},
		{"negative version", []string{"schema", "Fetch", "--version", "-3"}, 2, "--version -3: cannot be negative"},
		{"unknown error", []string{"errors", "x"}, 2, `no Kafka error has the code or name "x"`},
		{"unknown error code", []string{"errors", "9999"}, 2, `"9999"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := kdissect(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %s; stderr %s", code, tt.code, out, errOut)
			}
			if !strings.Contains(errOut, tt.msg) {
				t.Errorf("stderr %q lacks %q", errOut, tt.msg)
			}
			if tt.code == cli.ExitUsage && !strings.Contains(errOut, "Run 'kdissect "+tt.args[0]+" --help' for usage.") {
				t.Errorf("stderr %q does not point to --help", errOut)
			}
		})
	}
}

// TestSchemaTables checks the API and error tables' contents, beside their golden files.
func TestSchemaTables(t *testing.T) {
	tests := []struct {
		args []string
		rows []string
	}{
		{[]string{"schema"}, []string{
			"│   0 │ Produce ", "│ 0-13           │ v9+ ",
			"│  15 │ DescribeGroups ", "│ 0-6            │ v5+ ",
		}},
		{[]string{"errors"}, []string{"│   -1 │ UNKNOWN_SERVER_ERROR ", "│   16 │ NOT_COORDINATOR ", "│ yes "}},
	}
	for _, tt := range tests {
		out, _, code := kdissect(t, tt.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d", tt.args, code)
		}
		for _, r := range tt.rows {
			if !strings.Contains(out, r) {
				t.Errorf("%v: no %q in:\n%s", tt.args, r, out)
			}
		}
	}
	// Every API appears once, in key order.
	set, _ := schema.Embedded()
	out, _, _ := kdissect(t, "schema")
	var keys []int
	for _, l := range strings.Split(out, "\n") {
		var k int
		if _, err := fmt.Sscanf(strings.TrimLeft(l, "│ "), "%d", &k); err == nil {
			keys = append(keys, k)
		}
	}
	if len(keys) != len(set.APIs()) || !sort.IntsAreSorted(keys) {
		t.Errorf("table has keys %v, want the %d APIs in order", keys, len(set.APIs()))
	}
}

// TestSchemaDraft draws the project's KIP-draft fixture (codec/testdata/draft), loaded with
// --schema-dir and an API key.
func TestSchemaDraft(t *testing.T) {
	dir := filepath.Join("..", "..", "codec", "testdata", "draft") // the draft alone
	_, errOut, code := kdissect(t, "schema", "--schema-dir", dir, "GroupLagDescribe", "--response")
	if code != 1 || !strings.Contains(errOut, "GroupLagDescribeResponse has apiKey TBD; pass --api-key N to give it one\n") {
		t.Errorf("a TBD apiKey without --api-key: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = kdissect(t, "schema", "--schema-dir", dir, "--api-key", "40000", "GroupLagDescribe", "--response")
	if code != 1 || errOut != "kdissect: --api-key 40000 out of range\n" {
		t.Errorf("--api-key 40000: exit %d, stderr %q", code, errOut)
	}
	// Flags before the subcommand's name, as well as after it.
	out, errOut, code := kdissect(t, "--schema-dir", dir, "--api-key", "95", "schema", "GroupLagDescribe", "--response")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, w := range []string{
		"GroupLagDescribe Response v1  (API key 95, flexible, from ../../codec/testdata/draft/GroupLagDescribeResponse-draft.json.txt)",
		"Response Header v1  (built-in)",
		"  Summary?",
		"    present",
		"    MaxLagTopic ",
		"      TopicId ",
		"      Partitions ",
		"        [i] ",
		"  Cursor?",
		"  SampledAtMs",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in:\n%s", w, out)
		}
	}
	schemaGolden(t, "draft-GroupLagDescribe-v1-response.txt", out)
}
