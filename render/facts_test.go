package render_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// factCases name, for each fact of model.Facts, a message of a capture in pcaps/ that has it:
// the capture and the message's frame.
var factCases = []struct {
	fact, capture string
	frame         int
}{
	{"topics", "kgo-produce-fetch.pcap", 37},
	{"topic_ids", "kgo-produce-fetch.pcap", 68},
	{"partitions", "kgo-group-3brokers.pcap", 26},
	{"records", "kgo-produce-fetch.pcap", 37},
	{"control_records", "kgo-transactions.pcap", 68},
	{"records_bytes", "kgo-codecs.pcap", 68},
	{"codecs", "kgo-codecs.pcap", 68},
	{"record_sets", "kgo-transactions.pcap", 68},
	{"groups", "kafkago-produce-consume.pcap", 34},
	{"members", "kafkago-produce-consume.pcap", 37},
	{"txn", "kgo-transactions.pcap", 33},
	{"coordinators", "kgo-transactions.pcap", 9},
	{"sasl_mechanism", "kgo-sasl-plain.pcap", 8},
	{"sasl_user", "kgo-sasl-plain.pcap", 10},
	{"error_codes", "kgo-group-3brokers.pcap", 63},
	{"errors", "kgo-group-3brokers.pcap", 63},
}

// TestFactsEverywhere: every fact of model.Facts has a case, and in its case's message the
// fact is set and says the same in every output: the summary line shows it (where the
// summary shows the fact in a part of its own), the JSON line of a response carries it (where
// JSON carries it), the Parquet row has it in its column, and a -Y expression that the pair's
// value holds chooses the message, when its negation does not.
func TestFactsEverywhere(t *testing.T) {
	facts := model.Facts()
	for _, f := range facts {
		if !hasFactCase(f.Name) {
			t.Errorf("the fact %s has no case in factCases", f.Name)
		}
	}
	for _, tc := range factCases {
		t.Run(tc.fact, func(t *testing.T) {
			i := factIndex(facts, tc.fact)
			if i < 0 {
				t.Fatalf("no fact %s in model.Facts", tc.fact)
			}
			fact := &facts[i]
			path := filepath.Join("..", "pcaps", tc.capture)
			entries := recordEntries(t, path)
			e, partner := entries.find(tc.frame)
			if e == nil || e.Facts == nil {
				t.Fatalf("no message with facts at frame %d", tc.frame)
			}
			var v model.Value
			fact.Add(&v, e.Facts)
			want := generic(fact.Kind, &v)
			if reflect.ValueOf(want).IsZero() || reflect.ValueOf(want).Kind() == reflect.Slice && reflect.ValueOf(want).Len() == 0 {
				t.Fatalf("frame %d does not have the fact: %v", tc.frame, want)
			}

			if fact.Show != nil {
				line := frameLine(t, outputOf(t, path, "summary", ""), tc.frame)
				shown := fact.Label + string(fact.Show(nil, e.Facts))
				if !strings.Contains(line, "  "+shown) || !strings.Contains(shown, firstAtom(fact.Kind, &v)) {
					t.Errorf("summary line %q does not show %q (%v)", line, shown, want)
				}
			}

			line := jsonLine(t, outputOf(t, path, "json", ""), tc.frame)
			got, ok := line[fact.Name]
			switch {
			case fact.JSON && line["kind"] == "response":
				if !ok || !sameJSON(got, want) {
					t.Errorf("JSON line: %s = %v, want %v", fact.Name, got, want)
				}
			case ok:
				t.Errorf("JSON line: %s = %v, carried where it should not be", fact.Name, got)
			}

			row := parquetRow(t, outputOf(t, path, "parquet", ""), tc.frame, line["kind"])
			if got := row[fact.ColumnName()]; !sameJSON(got, want) {
				t.Errorf("Parquet column %s = %v, want %v", fact.ColumnName(), got, want)
			}

			var pair model.Value
			add := fact.Add
			if fact.Pair != nil {
				add = fact.Pair
			}
			for _, m := range []*model.Entry{e, partner} {
				if m != nil && m.Facts != nil {
					add(&pair, m.Facts)
				}
			}
			expr := holds(fact.Name, generic(fact.Kind, &pair))
			if !chosen(t, path, expr, tc.frame) {
				t.Errorf("-Y %q does not choose frame %d", expr, tc.frame)
			}
			if chosen(t, path, "not ("+expr+")", tc.frame) {
				t.Errorf("-Y %q chooses frame %d", "not ("+expr+")", tc.frame)
			}
		})
	}
}

func hasFactCase(name string) bool {
	for _, c := range factCases {
		if c.fact == name {
			return true
		}
	}
	return false
}

func factIndex(facts []model.Fact, name string) int {
	for i, f := range facts {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// generic is a fact's value as JSON and Parquet's generic rows show it: lists as []any, the
// elements of struct lists as maps by their column names.
func generic(k model.FactKind, v *model.Value) any {
	var out []any
	switch k {
	case model.FactText:
		return v.Text
	case model.FactCount:
		return v.Count
	case model.FactList:
		for _, s := range v.List {
			out = append(out, s)
		}
	case model.FactCodes:
		for _, c := range v.Codes {
			out = append(out, int(c))
		}
	case model.FactPartitions:
		for _, p := range v.Partitions {
			out = append(out, map[string]any{"topic": p.Topic, "partition": int(p.Partition)})
		}
	case model.FactRecordSets:
		for _, r := range v.RecordSets {
			codecs := []any{}
			for _, c := range r.Codecs {
				codecs = append(codecs, c)
			}
			out = append(out, map[string]any{"topic": r.Topic, "partition": int(r.Partition), "records": int(r.Records),
				"control_records": int(r.Control), "bytes": int(r.Bytes), "codecs": codecs})
		}
	case model.FactCoordinators:
		for _, c := range v.Coordinators {
			out = append(out, map[string]any{"key": c.Key, "node_id": int(c.NodeID), "host": c.Host, "port": int(c.Port),
				"error_code": int(c.ErrorCode)})
		}
	}
	return out
}

// firstAtom is the part of a fact's value that its summary part must hold whatever else it
// leaves out (a summary line shows the first member of many, three topics at most).
func firstAtom(k model.FactKind, v *model.Value) string {
	switch k {
	case model.FactText:
		return v.Text
	case model.FactCount:
		return strconv.FormatInt(v.Count, 10)
	case model.FactList:
		return v.List[0]
	case model.FactCoordinators:
		return v.Coordinators[0].HostPort()
	}
	return ""
}

// holds is an expression that holds for the value: the value itself for texts and counts, the
// list's length and each element for lists (whose order the pair's does not promise).
func holds(name string, v any) string {
	list, ok := v.([]any)
	if !ok {
		return name + " == " + literal(v)
	}
	return fmt.Sprintf("len(%s) == %d && all(%s, # in %s)", name, len(list), literal(list), name)
}

// literal writes a value in the expression language.
func literal(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case []any:
		var parts []string
		for _, x := range v {
			parts = append(parts, literal(x))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		var parts []string
		for k, x := range v {
			parts = append(parts, strconv.Quote(k)+": "+literal(x))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// sameJSON compares values through their JSON: numbers of any type alike, maps by key.
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// entries are the messages of a capture, as the pipeline gives them to a renderer.
type entries []model.Entry

func (es entries) find(frame int) (e, partner *model.Entry) {
	for i := range es {
		if es[i].Frame == frame {
			e = &es[i]
		}
	}
	for i := range es {
		p := &es[i]
		switch {
		case e == nil:
		case e.Msg.Response && p.Frame == e.RequestFrame && !p.Msg.Response,
			!e.Msg.Response && p.Msg.Response && p.RequestFrame == e.Frame:
			partner = p
		}
	}
	return e, partner
}

// recorder keeps copies of the entries it is given.
type recorder struct {
	render.Discard
	entries entries
}

func (r *recorder) Message(e *model.Entry) error {
	c := *e
	if e.Facts != nil {
		f := *e.Facts
		c.Facts = &f
	}
	r.entries = append(r.entries, c)
	return nil
}

func recordEntries(t *testing.T, path string) entries {
	t.Helper()
	r := &recorder{}
	runPipeline(t, path, "summary", r, dissect.SelectAll())
	return r.entries
}

// outputOf returns a capture's output in a format, with a display filter unless expr is "".
func outputOf(t *testing.T, path, format, expr string) []byte {
	t.Helper()
	f, ok := render.LookupFormat(format)
	if !ok {
		t.Fatalf("no format %q", format)
	}
	var out bytes.Buffer
	sel := dissect.SelectAll()
	sel.Expr = expr
	runPipeline(t, path, format, f.New(&out, render.Options{File: path}), sel)
	return out.Bytes()
}

func runPipeline(t *testing.T, path, format string, out render.Renderer, sel dissect.Selection) {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, _ := render.LookupFormat(format)
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: sel})
	if err != nil {
		t.Fatal(err)
	}
	c := dissect.NewCodec(set, plan, dissect.CodecOptions{})
	p, err := dissect.New(dissect.Config{Codec: c, Out: out, Plan: plan, Select: sel, Detect: true, Workers: 1, Batch: f.Batch})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.File(path); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// frameLine is the summary line of the message at frame.
func frameLine(t *testing.T, out []byte, frame int) string {
	t.Helper()
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == strconv.Itoa(frame) {
			return l
		}
	}
	t.Fatalf("no summary line of frame %d", frame)
	return ""
}

// chosen reports whether -Y expr shows the message at frame.
func chosen(t *testing.T, path, expr string, frame int) bool {
	t.Helper()
	for _, l := range strings.Split(string(outputOf(t, path, "summary", expr)), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == strconv.Itoa(frame) {
			return true
		}
	}
	return false
}

func jsonLine(t *testing.T, out []byte, frame int) map[string]any {
	t.Helper()
	s := bufio.NewScanner(bytes.NewReader(out))
	s.Buffer(nil, 64<<20)
	for s.Scan() {
		var line map[string]any
		if err := json.Unmarshal(s.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if line["frame"] == float64(frame) && line["kind"] != "notice" {
			return line
		}
	}
	t.Fatalf("no JSON line of frame %d", frame)
	return nil
}

// parquetRow reads the row of the message at frame back with parquet-go, as a map by column.
func parquetRow(t *testing.T, data []byte, frame int, kind any) map[string]any {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]map[string]any, f.NumRows())
	for i := range rows {
		rows[i] = map[string]any{}
	}
	r := parquet.NewGenericReader[map[string]any](f, f.Schema())
	if n, err := r.Read(rows); n != len(rows) {
		t.Fatalf("%d rows of %d read: %v", n, len(rows), err)
	}
	for _, row := range rows {
		if row["frame"] == int64(frame) && row["kind"] == kind {
			return row
		}
	}
	t.Fatalf("no Parquet row of frame %d", frame)
	return nil
}
