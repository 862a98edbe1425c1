package duckdb_test

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

var update = flag.Bool("update", false, "rewrite the outputs of the example queries in docs/parquet.md")

// root is the repository's root, where kdissect is built and pcaps/ lies.
const root = "../.."

// kdissect is the binary built from the tree for the tests (TestMain).
var kdissect string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "kdissect-duckdb")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kdissect = filepath.Join(dir, "kdissect")
	build := exec.Command("go", "build", "-o", kdissect, "./cmd/kdissect")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building kdissect:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// captures are the capture files of pcaps/.
func captures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"*.pcap", "*.pcapng"} {
		m, err := filepath.Glob(filepath.Join(root, "pcaps", pattern))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	slices.Sort(out)
	if len(out) < 10 {
		t.Fatalf("only %d captures in pcaps/", len(out))
	}
	return out
}

// run runs kdissect and returns its stdout; it fails the test on a non-zero exit.
func run(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(kdissect, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kdissect %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// jsonLines splits kdissect's JSON lines into messages and notices, and statistics rows by
// table.
func jsonLines(t *testing.T, out []byte) (lines []map[string]any, stats map[string][]map[string]any) {
	t.Helper()
	stats = map[string][]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		if m["kind"] == "stats" {
			stats[m["table"].(string)] = append(stats[m["table"].(string)], m)
			continue
		}
		lines = append(lines, m)
	}
	return lines, stats
}

func open(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// query runs q and returns its rows, each value as the JSON lines would have it: integers as
// json.Number, strings, booleans, nil.
func query(t *testing.T, db *sql.DB, q string) [][]any {
	t.Helper()
	out, _ := queryTable(t, db, q)
	for _, vals := range out {
		for i, v := range vals {
			vals[i] = normal(v)
		}
	}
	return out
}

// normal makes a value from DuckDB comparable with one decoded from JSON.
func normal(v any) any {
	switch v := v.(type) {
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64, int:
		return json.Number(fmt.Sprint(v))
	case *big.Int:
		return json.Number(v.String())
	case []any:
		for i := range v {
			v[i] = normal(v[i])
		}
		return v
	}
	return v
}

// quote quotes a path for SQL.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// columns are the columns compared, row by row, with the JSON line of each message or notice.
var columns = []string{"kind", "frame", "first_frame", "stream", "src", "dst", "api_key", "api_name", "api_version",
	"correlation_id", "client_id", "size", "request_frame", "latency_us", "text"}

// TestEachCapture: for every capture in pcaps/, the Parquet file has a row for every JSON line
// (messages and notices), in order, with the same values; its time_ns is the JSON time to the
// nanosecond, and its time (a timestamp) the JSON time cut down to the microsecond; and the counts per API, version and kind, the bytes and the latency percentiles
// are those of --stats.
func TestEachCapture(t *testing.T) {
	db := open(t)
	dir := t.TempDir()
	for _, capture := range captures(t) {
		name := filepath.Base(capture)
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, name+".parquet")
			run(t, "--format", "parquet", "-o", file, capture)
			lines, stats := jsonLines(t, run(t, "--format", "json", "--stats", capture))
			rows := query(t, db, "SELECT file, "+strings.Join(columns, ", ")+", time_ns, epoch_us(time) FROM read_parquet("+quote(file)+")")
			if len(rows) != len(lines) {
				t.Fatalf("%d rows, %d JSON lines", len(rows), len(lines))
			}
			for i, line := range lines {
				if rows[i][0] != capture {
					t.Errorf("row %d: file %v, want %s", i, rows[i][0], capture)
				}
				for j, col := range columns {
					want, got := line[col], rows[i][j+1]
					if col == "kind" && want == nil {
						want = "notice"
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("row %d (frame %v): %s = %v (%T), JSON has %v (%T)", i, line["frame"], col, got, got, want, want)
					}
				}
				at, err := time.Parse(time.RFC3339Nano, line["time"].(string))
				if err != nil {
					t.Fatal(err)
				}
				if got := rows[i][len(columns)+1]; got != json.Number(fmt.Sprint(at.UnixNano())) {
					t.Errorf("row %d: time_ns %v, JSON has %v", i, got, line["time"])
				}
				if got := rows[i][len(columns)+2]; got != json.Number(fmt.Sprint(at.Truncate(time.Microsecond).UnixMicro())) {
					t.Errorf("row %d: time %v µs, JSON has %v", i, got, line["time"])
				}
			}
			compareAPIs(t, db, "read_parquet("+quote(file)+")", stats["apis"])
		})
	}
}

// apisQuery computes the statistics' table of APIs from rows of the Parquet files: counts per
// API, version and kind, bytes, and the latency percentiles as kdissect takes them (the
// smallest latency at or above the fraction).
const apisQuery = `
SELECT api_key, api_name, api_version,
  count(*) FILTER (kind = 'request') AS requests,
  count(*) FILTER (kind = 'response') AS responses,
  greatest(0, count(*) FILTER (kind = 'request') - count(*) FILTER (no_response) - count(request_frame)) AS unanswered,
  count(*) FILTER (no_response) AS no_response,
  sum(size) AS bytes,
  list_sort(list(latency_us) FILTER (latency_us IS NOT NULL)) AS l
FROM %s WHERE api_key IS NOT NULL
GROUP BY ALL ORDER BY api_key, api_version`

// compareAPIs compares the table of APIs computed from the files with --stats's.
func compareAPIs(t *testing.T, db *sql.DB, from string, want []map[string]any) {
	t.Helper()
	rows := query(t, db, fmt.Sprintf(apisQuery, from))
	if len(rows) != len(want) {
		t.Errorf("%d APIs and versions, --stats has %d", len(rows), len(want))
	}
	for i := range min(len(rows), len(want)) {
		r, w := rows[i], want[i]
		got := map[string]any{"kind": "stats", "table": "apis", "api_key": r[0], "api_name": r[1], "api_version": r[2],
			"requests": r[3], "responses": r[4], "unanswered": r[5], "no_response": r[6], "bytes": r[7]}
		if l, _ := r[8].([]any); len(l) > 0 {
			pct := func(p float64) any {
				i := int(float64(len(l))*p+0.999999) - 1
				return l[max(0, min(i, len(l)-1))]
			}
			got["latency_p50_us"], got["latency_p90_us"], got["latency_p99_us"], got["latency_max_us"] = pct(0.5), pct(0.9), pct(0.99), l[len(l)-1]
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("API row %d:\n got %v\nwant %v", i, got, w)
		}
	}
}

// TestTimeArithmetic: a response's time minus its request's, as an engine subtracts two
// timestamps, is its latency_us, give or take the microsecond each time was cut down to;
// time_ns gives it to the nanosecond.
func TestTimeArithmetic(t *testing.T) {
	db := open(t)
	dir := filepath.Join(t.TempDir(), "parquet") + "/"
	run(t, append([]string{"--format", "parquet", "-o", dir}, captures(t)...)...)
	from := "read_parquet(" + quote(dir+"*.parquet") + ")"
	rows := query(t, db, `SELECT count(*),
		count(*) FILTER (abs(date_diff('microsecond', req.time, resp.time) - resp.latency_us) > 1),
		count(*) FILTER (abs((resp.time_ns - req.time_ns) - resp.latency_us * 1000) >= 1000)
	FROM `+from+` resp JOIN `+from+` req
	  ON req.file = resp.file AND req.stream = resp.stream AND req.frame = resp.request_frame
	 AND req.correlation_id = resp.correlation_id AND req.kind = 'request'
	WHERE resp.kind = 'response'`)
	pairs, _ := strconv.Atoi(fmt.Sprint(rows[0][0]))
	if pairs < 100 {
		t.Fatalf("only %d responses paired with their requests", pairs)
	}
	if rows[0][1] != json.Number("0") || rows[0][2] != json.Number("0") {
		t.Errorf("of %d pairs, %v differ from latency_us by more than 1 µs (time), %v by a microsecond or more (time_ns)", pairs, rows[0][1], rows[0][2])
	}
}

// TestDirectory: the captures written into one directory, in parallel, make one table that a
// glob reads, and its totals are those of --stats over all the captures: per API and version,
// per error code, per connection and per topic.
func TestDirectory(t *testing.T) {
	db := open(t)
	dir := filepath.Join(t.TempDir(), "parquet") + "/"
	files := captures(t)
	run(t, append([]string{"--format", "parquet", "-o", dir}, files...)...)
	names, err := filepath.Glob(dir + "*.parquet")
	if err != nil || len(names) != len(files) {
		t.Fatalf("%d files in %s for %d captures (%v)", len(names), dir, len(files), err)
	}
	_, stats := jsonLines(t, run(t, append([]string{"--format", "json", "--stats"}, files...)...))
	from := "read_parquet(" + quote(dir+"*.parquet") + ", file_row_number = true)"
	compareAPIs(t, db, from, stats["apis"])

	errs := query(t, db, `SELECT code, count(*) FROM (SELECT unnest(error_codes) AS code FROM `+from+`) GROUP BY code ORDER BY code`)
	if len(errs) != len(stats["errors"]) {
		t.Errorf("%d error codes, --stats has %d", len(errs), len(stats["errors"]))
	}
	for i := range min(len(errs), len(stats["errors"])) {
		w := stats["errors"][i]
		if errs[i][0] != w["error_code"] || errs[i][1] != w["count"] {
			t.Errorf("error row %d: %v, --stats has %v", i, errs[i], w)
		}
	}

	// Connections: the same client, broker, client id, software, message count and bytes.
	// Stream numbers are each file's own here, and go on from file to file in --stats, so the
	// rows are compared as sets.
	conns := query(t, db, `SELECT
		arg_min(CASE WHEN kind = 'request' THEN src ELSE dst END, file_row_number),
		arg_min(CASE WHEN kind = 'request' THEN dst ELSE src END, file_row_number),
		coalesce(arg_min(client_id, file_row_number) FILTER (client_id <> ''), ''),
		coalesce(arg_max(client_software, file_row_number), ''),
		count(*), sum(size)
		FROM `+from+` WHERE kind <> 'notice' GROUP BY file, stream`)
	key := func(v ...any) string { return fmt.Sprint(v...) }
	var got, want []string
	for _, c := range conns {
		got = append(got, key(c...))
	}
	for _, c := range stats["connections"] {
		want = append(want, key(c["client"], c["broker"], c["client_id"], c["software"], c["messages"], c["bytes"]))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("connections:\n got %v\nwant %v", got, want)
	}

	// Topics: records and bytes produced (Produce requests) and fetched (Fetch and ShareFetch
	// responses), control records included, as --stats counts them.
	topics := query(t, db, `SELECT s.topic,
		coalesce(sum(s.records + s.control_records) FILTER (kind = 'request' AND api_name = 'Produce'), 0),
		coalesce(sum(s.bytes) FILTER (kind = 'request' AND api_name = 'Produce'), 0),
		coalesce(sum(s.records + s.control_records) FILTER (kind = 'response' AND api_name IN ('Fetch', 'ShareFetch')), 0),
		coalesce(sum(s.bytes) FILTER (kind = 'response' AND api_name IN ('Fetch', 'ShareFetch')), 0)
		FROM (SELECT kind, api_name, unnest(record_sets) AS s FROM `+from+`) GROUP BY s.topic ORDER BY s.topic`)
	got, want = nil, nil
	for _, r := range topics {
		got = append(got, key(r...))
	}
	for _, r := range stats["topics"] {
		want = append(want, key(r["topic"], r["produced_records"], r["produced_bytes"], r["fetched_records"], r["fetched_bytes"]))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("topics:\n got %v\nwant %v", got, want)
	}
}

// TestFieldsTree reads the fields column's JSON with DuckDB: each record batch's recordsCount,
// compressed or not, adds up to the record counts of the typed record_sets column; and the
// topic name beside each TopicId (Produce v13, Fetch v18) is the one the typed topics column
// resolves.
func TestFieldsTree(t *testing.T) {
	db := open(t)
	dir := t.TempDir()
	codecs := filepath.Join(dir, "codecs.parquet")
	run(t, "--format", "parquet", "-o", codecs, filepath.Join(root, "pcaps", "kgo-codecs.pcap"))
	batches := `(SELECT record_sets, unnest(json_extract(fields, '$.TopicData[*].PartitionData[*].Records[*]')) AS b
		FROM read_parquet(` + quote(codecs) + `) WHERE api_name = 'Produce' AND kind = 'request')`
	got := query(t, db, `SELECT count(*) FILTER ((b->>'$.attributes')::INTEGER & 7 = 0),
		count(*) FILTER ((b->>'$.attributes')::INTEGER & 7 <> 0),
		sum((b->>'$.recordsCount')::INTEGER), sum(json_array_length(b->'$.records')) FROM `+batches)
	sets := query(t, db, `SELECT sum(s.records) FROM (SELECT unnest(record_sets) AS s FROM read_parquet(`+quote(codecs)+`)
		WHERE api_name = 'Produce' AND kind = 'request')`)
	if len(got) != 1 || len(sets) != 1 || got[0][0] == json.Number("0") || got[0][1] == json.Number("0") ||
		fmt.Sprint(got[0][2]) != fmt.Sprint(sets[0][0]) || fmt.Sprint(got[0][3]) != fmt.Sprint(sets[0][0]) {
		t.Errorf("batches not compressed, compressed, sum of recordsCount, records: %v; record_sets count %v", got, sets)
	}

	fetch := filepath.Join(dir, "fetch.parquet")
	run(t, "--format", "parquet", "-o", fetch, filepath.Join(root, "pcaps", "kgo-produce-fetch.pcap"))
	names := query(t, db, `SELECT api_name, kind,
		list_sort(list_distinct(coalesce(json_extract_string(fields, '$.TopicData[*].topic'), [])
			|| coalesce(json_extract_string(fields, '$.Topics[*].topic'), [])
			|| coalesce(json_extract_string(fields, '$.Responses[*].topic'), []))) AS named, list_sort(topics)
		FROM read_parquet(`+quote(fetch)+`) WHERE api_name IN ('Produce', 'Fetch') AND api_version >= 13`)
	some := 0
	for _, r := range names {
		if fmt.Sprint(r[2]) != fmt.Sprint(r[3]) {
			t.Errorf("%v %v: topics beside the ids %v, topics column %v", r[0], r[1], r[2], r[3])
		}
		if fmt.Sprint(r[2]) == "[kdissect-events]" {
			some++
		}
	}
	if some == 0 {
		t.Errorf("no message names kdissect-events beside its ids: %v", names)
	}
}

// compressions are kdissect's codecs of Parquet pages (--parquet-compression).
var compressions = []string{"snappy", "zstd", "none"}

// TestCompressions: DuckDB reads the same rows from the files of every codec: the golden files
// of render (render/testdata/trees-CODEC.parquet, whose big field trees are compressed as they
// are written, a chunk at a time, into pages of their own) and the files of every capture in
// pcaps/.
func TestCompressions(t *testing.T) {
	db := open(t)
	var trees []string
	for _, c := range compressions {
		trees = append(trees, "read_parquet("+quote(filepath.Join(root, "render", "testdata", "trees-"+c+".parquet"))+")")
	}
	sameRows(t, db, trees)
	big := query(t, db, `SELECT frame, length(fields), json_valid(fields) FROM `+trees[0]+` WHERE frame IN (10, 11) ORDER BY frame`)
	if len(big) != 2 || fmt.Sprint(big[0][2], big[1][2]) != "true true" {
		t.Fatalf("the big trees: %v", big)
	}
	for _, r := range big {
		if n, _ := r[1].(json.Number).Int64(); n < 100_000 {
			t.Errorf("frame %v: a tree of %d bytes, want a big one", r[0], n)
		}
	}

	files := captures(t)
	var dirs []string
	for _, c := range compressions {
		dir := filepath.Join(t.TempDir(), c) + "/"
		run(t, append([]string{"--format", "parquet", "--parquet-compression", c, "-o", dir}, files...)...)
		dirs = append(dirs, "read_parquet("+quote(dir+"*.parquet")+")")
	}
	sameRows(t, db, dirs)
}

// sameRows checks that the tables hold the same rows, as many of each, and some.
func sameRows(t *testing.T, db *sql.DB, tables []string) {
	t.Helper()
	n := query(t, db, "SELECT count(*) FROM "+tables[0])
	if len(n) != 1 || n[0][0] == json.Number("0") {
		t.Fatalf("%s: %v rows", tables[0], n)
	}
	for _, other := range tables[1:] {
		m := query(t, db, "SELECT count(*) FROM "+other)
		diff := query(t, db, `SELECT count(*) FROM ((SELECT * FROM `+tables[0]+` EXCEPT ALL SELECT * FROM `+other+`)
			UNION ALL (SELECT * FROM `+other+` EXCEPT ALL SELECT * FROM `+tables[0]+`))`)
		if fmt.Sprint(m) != fmt.Sprint(n) || fmt.Sprint(diff) != "[[0]]" {
			t.Errorf("%s: %v rows, %v differ from those of %s (%v rows)", other, m, diff, tables[0], n)
		}
	}
}
