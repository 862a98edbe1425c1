package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testutil"
	"github.com/kdissect/kdissect/pcaps"
)

// schemaFixtures is where the schema package keeps its fixture directories.
var schemaFixtures = filepath.Join("..", "..", "codec", "schema", "testdata")

// kafkaShapedDefs makes a directory shaped like an Apache Kafka release's message folder that
// holds the built-in definitions: every file of codec/schema/defs, with the headers and a few
// messages replaced by codec/schema/testdata/kafka's (Kafka's header field names, license
// headers, a string tag, ...), and that fixture's README and definitions of other kinds.
func kafkaShapedDefs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, src := range []string{filepath.Join("..", "..", "codec", "schema", "defs"), filepath.Join(schemaFixtures, "kafka")} {
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// withoutSkipNotice drops the notice of the files a schema directory skipped, the one line
// loading a Kafka-shaped directory of the built-in definitions may add.
func withoutSkipNotice(t *testing.T, stderr string) string {
	t.Helper()
	var keep []string
	n := 0
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if strings.HasPrefix(l, "kdissect: schema dir ") && strings.Contains(l, ": skipped 3 files that are not") {
			n++
			continue
		}
		keep = append(keep, l)
	}
	if n != 1 {
		t.Errorf("%d notices of skipped files in:\n%s", n, stderr)
	}
	return strings.Join(keep, "")
}

// TestSchemaDirKafkaShaped loads the built-in definitions as a Kafka-shaped directory
// (kafkaShapedDefs) with --schema-dir: the summary and JSON output of every capture in pcaps/
// is its golden file, byte for byte, pairing and client ids included.
func TestSchemaDirKafkaShaped(t *testing.T) {
	dir := kafkaShapedDefs(t)
	for _, file := range captures(t) {
		for _, format := range []string{"summary", "json"} {
			name := filepath.Base(file) + "." + format
			t.Run(name, func(t *testing.T) {
				want, err := os.ReadFile(filepath.Join("testdata", "golden", name))
				if err != nil {
					t.Fatal(err)
				}
				out, errOut, code := kdissect(t, "--schema-dir", dir, "--format", format, "-p", pcaps.Ports, file)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				if got := out + stderrSection(withoutSkipNotice(t, errOut)); got != string(want) {
					line, g, w := testutil.FirstDiff(got, string(want))
					g, w = testutil.Clip(g, w)
					t.Errorf("output with --schema-dir differs from %s at line %d:\n got: %s\nwant: %s", name, line, g, w)
				}
			})
		}
	}
}

// TestSchemaDirOlder loads a directory of an older release that lacks ApiVersions v4 and v5:
// franz-go's connections, which open with ApiVersions v4 or v5, are still detected without -p,
// and every message decodes as without the directory.
func TestSchemaDirOlder(t *testing.T) {
	file := filepath.Join("..", "..", "pcaps", "kgo-produce-fetch.pcap")
	for _, format := range []string{"summary", "json"} {
		want, wantErr, code := kdissect(t, "--format", format, file)
		if code != 0 || !strings.Contains(want, "ApiVersions") {
			t.Fatalf("without --schema-dir: exit %d, %s", code, wantErr)
		}
		got, gotErr, code := kdissect(t, "--schema-dir", filepath.Join(schemaFixtures, "older"), "--format", format, file)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, gotErr)
		}
		if got != want {
			line, g, w := testutil.FirstDiff(got, want)
			g, w = testutil.Clip(g, w)
			t.Errorf("%s with the older directory, line %d:\n got: %s\nwant: %s", format, line, g, w)
		}
		if !strings.Contains(gotErr, "skipped 1 file that is not a request, response or header definition: README.md") {
			t.Errorf("stderr: %s", gotErr)
		}
	}
}

// TestSchemaCompare pins kdissect schema --compare on the fixtures: a newer (invented) release
// with a new API, a new version and a version that differs, and an older one.
func TestSchemaCompare(t *testing.T) {
	for _, tt := range []struct{ name, dir, format string }{
		{"compare-newer.txt", "newer", "diagram"},
		{"compare-newer.json", "newer", "json"},
		{"compare-older.txt", "older", "diagram"},
		{"compare-kafka.txt", "kafka", "diagram"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := kdissect(t, "schema", "--compare", filepath.Join(schemaFixtures, tt.dir), "--format", tt.format)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if strings.Contains(errOut, "differs") || !strings.Contains(errOut, ": skipped ") {
				t.Errorf("stderr: %s", errOut)
			}
			golden(t, filepath.Join("..", "schema", tt.name), []byte(out))
		})
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"schema", "Fetch", "--compare", schemaFixtures}, 2, "--compare"},
		{[]string{"schema", "--compare", filepath.Join(schemaFixtures, "nowhere")}, 1, "schema dir"},
	} {
		_, errOut, code := kdissect(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q", tt.args, code, errOut)
		}
	}
}

// TestSchemaSource: a layout says which definition each version comes from.
func TestSchemaSource(t *testing.T) {
	dir := filepath.Join(schemaFixtures, "newer")
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"schema", "ApiVersions", "--schema-dir", dir}, []string{
			"ApiVersions Request v6  (API key 18, flexible, from " + filepath.Join(dir, "ApiVersionsRequest.json") + ")",
			"Request Header v2  (built-in)", "ClientRack"}},
		{[]string{"schema", "ApiVersions", "--schema-dir", dir, "--response"}, []string{
			"ApiVersions Response v5  (API key 18, flexible, built-in)"}},
		{[]string{"schema", "ReadShareGroupStateSummary", "--schema-dir", dir, "--response", "--version", "1"}, []string{
			"(API key 87, flexible, built-in)", "LeaderEpoch"}},
		{[]string{"schema", "ReadShareGroupStateSummary", "--schema-dir", dir, "--response", "--version", "0", "--format", "json"}, []string{
			`"source": "` + filepath.Join(dir, "ReadShareGroupStateSummaryResponse.json") + `"`, `"source": "built-in"`}},
		{[]string{"schema", "Metadata", "--schema-dir", filepath.Join(schemaFixtures, "kafka")}, []string{
			"Request Header v2  (from " + filepath.Join(schemaFixtures, "kafka", "RequestHeader.json") + ")",
			"  request_api_key ", "  correlation_id ", "  client_id? "}},
	} {
		out, errOut, code := kdissect(t, tt.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: no %q in:\n%s", tt.args, w, out)
			}
		}
	}
	// v0 lacks LeaderEpoch in the file, which is used; stderr says so.
	out, errOut, _ := kdissect(t, "schema", "ReadShareGroupStateSummary", "--schema-dir", dir, "--response", "--version", "0")
	if strings.Contains(out, "LeaderEpoch") || !strings.Contains(errOut, "ReadShareGroupStateSummaryResponse v0: ") {
		t.Errorf("v0 from the file:\n%s\nstderr: %s", out, errOut)
	}
}
