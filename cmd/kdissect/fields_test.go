package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/pcaps"

	"github.com/parquet-go/parquet-go"
)

// jsonTrees are the field trees of a capture's JSON lines, each node decoded as a map.
func jsonTrees(t *testing.T, file string) []any {
	t.Helper()
	out, errOut, code := kdissect(t, "--format", "json", "-p", pcaps.Ports, pcap(file))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var trees []any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var line struct{ Fields any }
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		trees = append(trees, line.Fields)
	}
	return trees
}

// parquetTrees are the fields column of a capture's Parquet file, each decoded.
func parquetTrees(t *testing.T, file string) []any {
	t.Helper()
	name := filepath.Join(t.TempDir(), "out.parquet")
	if _, errOut, code := kdissect(t, "--format", "parquet", "-o", name, "-p", pcaps.Ports, pcap(file)); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Fields []byte `parquet:"fields,optional,string"`
	}
	rows, err := parquet.Read[row](strings.NewReader(string(data)), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var trees []any
	for _, r := range rows {
		var tree any
		if err := json.Unmarshal(r.Fields, &tree); err != nil {
			t.Fatalf("fields %s: %v", r.Fields, err)
		}
		trees = append(trees, tree)
	}
	return trees
}

// each calls f on every JSON object under v.
func each(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(v)
		for _, c := range v {
			each(c, f)
		}
	case []any:
		for _, c := range v {
			each(c, f)
		}
	}
}

// shownRequests counts the request lines -Y shows of a capture.
func shownRequests(t *testing.T, file, expr string) int {
	t.Helper()
	out, errOut, code := kdissect(t, "--format", "json", "-p", pcaps.Ports, "-Y", expr, pcap(file))
	if code != 0 {
		t.Fatalf("-Y %s: exit %d: %s", expr, code, errOut)
	}
	return strings.Count(out, `"kind":"request"`)
}

// TestRecordsCount: a batch's record count is recordsCount, a field of its own, whether the
// records are compressed or not: in the JSON lines' tree, in the Parquet fields column and to
// -Y. (The count of records not compressed was the value of their array, and Parquet lost it.)
func TestRecordsCount(t *testing.T) {
	const file = "kgo-codecs.pcap" // a batch of each codec, none included
	byType := map[string]int{}
	for _, tree := range jsonTrees(t, file) {
		each(tree, func(n map[string]any) {
			if n["type"] != "record_batch" {
				return
			}
			var count, records map[string]any
			for _, c := range n["fields"].([]any) {
				switch c := c.(map[string]any); c["name"] {
				case "recordsCount":
					count = c
				case "records":
					records = c
				}
			}
			if count == nil || records == nil {
				t.Errorf("JSON: a batch without recordsCount or records: %v", n)
				return
			}
			kids, _ := records["fields"].([]any)
			if count["type"] != "int32" || count["value"] != float64(len(kids)) {
				t.Errorf("JSON: recordsCount %v %v, for %d records", count["type"], count["value"], len(kids))
			}
			byType[records["type"].(string)]++
		})
	}
	if byType["record_data"] == 0 || byType["compressed_records"] == 0 {
		t.Fatalf("JSON: batches by type of records %v: want both kinds", byType)
	}
	byCodec := map[bool]int{}
	for _, tree := range parquetTrees(t, file) {
		each(tree, func(b map[string]any) {
			if _, isBatch := b["baseOffset"]; !isBatch {
				return
			}
			records, _ := b["records"].([]any)
			if b["recordsCount"] != float64(len(records)) || len(records) == 0 {
				t.Errorf("Parquet: recordsCount %v, for %d records", b["recordsCount"], len(records))
			}
			byCodec[int(b["attributes"].(float64))&7 != 0]++
		})
	}
	if byCodec[false] != byType["record_data"] || byCodec[true] != byType["compressed_records"] {
		t.Errorf("Parquet: batches compressed or not %v; JSON %v", byCodec, byType)
	}
	batches := func(cond string) string {
		return `any(req.TopicData, any(.PartitionData, any(.Records, ` + cond + `)))`
	}
	all := shownRequests(t, file, batches("true"))
	counted := shownRequests(t, file, batches(".recordsCount > 0 && .recordsCount == len(.records)"))
	plain := shownRequests(t, file, batches(".recordsCount == len(.records) && .attributes % 8 == 0"))
	compressed := shownRequests(t, file, batches(".recordsCount == len(.records) && .attributes % 8 != 0"))
	if all == 0 || counted != all || plain == 0 || compressed == 0 {
		t.Errorf("-Y: %d Produce requests with a batch, %d whose batch's recordsCount counts its records (%d not compressed, %d compressed)",
			all, counted, plain, compressed)
	}
}

// TestTopicNamesInFields: in Produce v13 and Fetch v18, which name topics by id only, each
// TopicId of the field tree has the topic's name beside it, as "topic": in the JSON lines'
// node, in the Parquet fields column's object and to -Y.
func TestTopicNamesInFields(t *testing.T) {
	const file = "kgo-produce-fetch.pcap"
	const topic = "kdissect-events"
	ids := 0
	for _, tree := range jsonTrees(t, file) {
		each(tree, func(n map[string]any) {
			if n["name"] == "TopicId" && n["value"] != "AAAAAAAAAAAAAAAAAAAAAA" {
				ids++
				if n["topic"] != topic {
					t.Errorf("JSON: topic id %v has topic %v, want %s", n["value"], n["topic"], topic)
				}
			}
		})
	}
	if ids == 0 {
		t.Fatal("JSON: no topic id in the capture")
	}
	named := 0
	for _, tree := range parquetTrees(t, file) {
		each(tree, func(n map[string]any) {
			if id, ok := n["TopicId"]; ok && id != "AAAAAAAAAAAAAAAAAAAAAA" {
				named++
				if n["topic"] != topic {
					t.Errorf("Parquet: topic id %v has topic %v, want %s", id, n["topic"], topic)
				}
			}
		})
	}
	if named != ids {
		t.Errorf("Parquet: %d topic ids, JSON %d", named, ids)
	}
	byID := shownRequests(t, file, `api in ["Produce", "Fetch"] && version >= 13 && len(resp.Responses) > 0`)
	byName := shownRequests(t, file, `any(resp.Responses, .topic == "`+topic+`")`)
	if byID == 0 || byName != byID {
		t.Errorf("-Y: %d Produce and Fetch pairs v13 and later with topics, %d by the topic name beside their ids", byID, byName)
	}
}
