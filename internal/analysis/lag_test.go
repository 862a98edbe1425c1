package analysis_test

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/model"
)

// realCaptures are the captures of pcaps/ the lag and e2e analyses are checked on.
var realCaptures = []string{
	"kgo-fetch-session.pcap", // incremental fetch sessions
	"kgo-lag.pcap",           // a consumer that falls behind, then catches up
	"kgo-produce-fetch.pcap",
	"sarama-produce-consume.pcap",
	"kafkago-produce-consume.pcap",
	"kgo-group-3brokers.pcap",
}

// jsonLine is a message as kdissect's JSON lines write it, with what the tests read of it.
type jsonLine struct {
	Kind          string    `json:"kind"`
	Frame         int       `json:"frame"`
	Time          time.Time `json:"time"`
	Stream        int       `json:"stream"`
	APIKey        int16     `json:"api_key"`
	CorrelationID int32     `json:"correlation_id"`
	ClientID      *string   `json:"client_id"`
	FetchSession  *struct {
		SessionID  int32  `json:"session_id"`
		Action     string `json:"action"`
		Partitions []struct {
			Topic     string `json:"topic"`
			TopicID   string `json:"topic_id"`
			Partition int32  `json:"partition"`
		} `json:"partitions"`
	} `json:"fetch_session"`
	Fields []*jsonNode `json:"fields"`
}

type jsonNode struct {
	Name   string           `json:"name"`
	Type   string           `json:"type"`
	Value  json.RawMessage  `json:"value"`
	Topic  string           `json:"topic"`
	Bits   map[string]int64 `json:"bits"`
	Fields []*jsonNode      `json:"fields"`
}

// jsonLines dissects a capture into JSON lines, as `kdissect --format json` writes them, and
// reads back its messages.
func jsonLines(t *testing.T, capture string) []jsonLine {
	t.Helper()
	var lines []jsonLine
	sc := bufio.NewScanner(jsonOutput(t, capture, ""))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l jsonLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", capture, err)
		}
		if l.Kind == "request" || l.Kind == "response" {
			lines = append(lines, l)
		}
	}
	return lines
}

// child is the node named name among ns, or nil.
func child(ns []*jsonNode, name string) *jsonNode {
	for _, n := range ns {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// num is the integer value of the node named name among ns.
func num(ns []*jsonNode, name string) (int64, bool) {
	n := child(ns, name)
	if n == nil {
		return 0, false
	}
	v, err := strconv.ParseInt(string(n.Value), 10, 64)
	return v, err == nil
}

// jsonPart is a topic (by name, else id) and a partition, as the JSON names them.
type jsonPart struct {
	Topic     string
	Partition int32
}

// partitions calls fn with each partition struct of the topics array named array.
func partitions(fields []*jsonNode, array string, fn func(jsonPart, []*jsonNode)) {
	arr := child(fields, array)
	if arr == nil {
		return
	}
	for _, ts := range arr.Fields {
		var topic string
		for _, c := range ts.Fields {
			switch c.Name {
			case "Topic", "Name":
				_ = json.Unmarshal(c.Value, &topic)
			case "TopicId":
				if err := json.Unmarshal(c.Value, &topic); err == nil && c.Topic != "" {
					topic = c.Topic
				}
			}
		}
		for _, c := range ts.Fields {
			if c.Name != "Partitions" && c.Name != "PartitionData" && c.Name != "PartitionResponses" {
				continue
			}
			for _, ps := range c.Fields {
				for _, name := range []string{"Partition", "PartitionIndex", "Index"} {
					if p, ok := num(ps.Fields, name); ok {
						fn(jsonPart{topic, int32(p)}, ps.Fields)
					}
				}
			}
		}
	}
}

// lagRow is a row of the lag table, as the test computes it.
type lagRow struct {
	fetches           int64
	offset            any
	hw, lag, max, lso any
	// What Lag.Partitions says beyond the table: the first fetch offset and whether it moved,
	// the first lag and the frames of the first and last, and the responses' frames.
	firstOffset           any
	moved                 bool
	firstLag              any
	firstFrame, lastFrame int
	frames                []int
}

type lagKey struct {
	client string
	part   jsonPart
}

// lagRef computes the lag table from JSON lines: the positions of each fetch session are
// carried from response to request, for the partitions the lines' fetch_session says the
// session holds.
type lagRef struct {
	rows     map[lagKey]*lagRow
	pending  map[[2]int64]*lagRequest
	sessions map[[2]int64]map[jsonPart]lagPos
	// carried counts the lag samples whose offset or high watermark a session carried.
	carried int
}

type lagPos struct {
	offset, hw           int64
	offsetKnown, hwKnown bool
}

type lagRequest struct {
	client  string
	action  string
	session int32
	listed  map[jsonPart]bool
	fetched map[jsonPart]lagPos
}

func lagFromJSON(lines []jsonLine) *lagRef {
	r := &lagRef{rows: map[lagKey]*lagRow{}, pending: map[[2]int64]*lagRequest{}, sessions: map[[2]int64]map[jsonPart]lagPos{}}
	for _, l := range lines {
		if l.APIKey != 1 {
			continue
		}
		k := [2]int64{int64(l.Stream), int64(l.CorrelationID)}
		if l.Kind == "request" {
			r.pending[k] = r.request(l)
			continue
		}
		if q := r.pending[k]; q != nil {
			delete(r.pending, k)
			r.response(l, q)
		}
	}
	return r
}

func (r *lagRef) request(l jsonLine) *lagRequest {
	q := &lagRequest{client: *l.ClientID, listed: map[jsonPart]bool{}, fetched: map[jsonPart]lagPos{}}
	if s := l.FetchSession; s != nil {
		q.action, q.session = s.Action, s.SessionID
		if s.Action == "incremental" {
			old := r.sessions[[2]int64{int64(l.Stream), int64(s.SessionID)}]
			for _, sp := range s.Partitions {
				p := jsonPart{sp.Topic, sp.Partition}
				if p.Topic == "" {
					p.Topic = sp.TopicID
				}
				q.fetched[p] = old[p]
			}
		}
	}
	partitions(l.Fields, "Topics", func(p jsonPart, f []*jsonNode) {
		x := q.fetched[p]
		x.offset, x.offsetKnown = must(num(f, "FetchOffset")), true
		q.fetched[p], q.listed[p] = x, true
	})
	return q
}

func must(v int64, ok bool) int64 {
	if !ok {
		panic("missing field")
	}
	return v
}

func (r *lagRef) response(l jsonLine, q *lagRequest) {
	if code, _ := num(l.Fields, "ErrorCode"); code != 0 {
		if code == 70 {
			delete(r.sessions, [2]int64{int64(l.Stream), int64(q.session)})
		}
		return
	}
	lso := map[jsonPart]int64{}
	answered := map[jsonPart]bool{}
	partitions(l.Fields, "Responses", func(p jsonPart, f []*jsonNode) {
		hw, ok := num(f, "HighWatermark")
		if code, _ := num(f, "ErrorCode"); code != 0 || !ok || hw < 0 {
			return
		}
		x := q.fetched[p]
		x.hw, x.hwKnown = hw, true
		q.fetched[p], answered[p] = x, true
		if v, ok := num(f, "LastStableOffset"); ok && v >= 0 {
			lso[p] = v
		}
	})
	for p, x := range q.fetched {
		row := r.rows[lagKey{q.client, p}]
		if row == nil {
			row = &lagRow{}
			r.rows[lagKey{q.client, p}] = row
		}
		row.fetches++
		if len(row.frames) < analysis.MaxFrames {
			row.frames = append(row.frames, l.Frame)
		}
		if x.offsetKnown {
			row.offset = x.offset
			if row.firstOffset == nil {
				row.firstOffset = x.offset
			}
			row.moved = row.moved || row.firstOffset != x.offset
		}
		if v, ok := lso[p]; ok {
			row.lso = v
		}
		if !x.hwKnown || !x.offsetKnown {
			if x.hwKnown {
				row.hw = x.hw
			}
			continue
		}
		lag := x.hw - x.offset
		if row.lag == nil {
			row.firstLag, row.firstFrame = lag, l.Frame
		}
		row.hw, row.lag, row.lastFrame = x.hw, lag, l.Frame
		if m, ok := row.max.(int64); !ok || lag > m {
			row.max = lag
		}
		if !q.listed[p] || !answered[p] {
			r.carried++
		}
	}
	switch key := [2]int64{int64(l.Stream), int64(q.session)}; q.action {
	case "open":
		if l.FetchSession != nil && l.FetchSession.SessionID != 0 {
			r.sessions[[2]int64{int64(l.Stream), int64(l.FetchSession.SessionID)}] = q.fetched
		}
	case "incremental":
		r.sessions[key] = q.fetched
	case "close":
		delete(r.sessions, key)
	}
}

// table is the reference's rows in the lag table's order and columns.
func (r *lagRef) table() [][]any {
	var out [][]any
	for k, row := range r.rows {
		out = append(out, []any{k.client, k.part.Topic, int64(k.part.Partition), row.fetches, row.offset, row.hw, row.lag, row.max, row.lso})
	}
	sortRows(out)
	return out
}

// sortRows sorts rows by their first three columns, as the tables do.
func sortRows(rows [][]any) {
	slices.SortFunc(rows, func(a, b []any) int {
		for i := range 3 {
			if c := cmp.Compare(fmt.Sprint(a[i]), fmt.Sprint(b[i])); c != 0 {
				if x, ok := a[i].(int64); ok {
					return cmp.Compare(x, b[i].(int64))
				}
				return c
			}
		}
		return 0
	})
}

func TestLagMatchesJSON(t *testing.T) {
	for _, capture := range realCaptures {
		t.Run(capture, func(t *testing.T) {
			want := lagFromJSON(jsonLines(t, capture)).table()
			l := analysis.NewLag()
			analyse(t, capture, l)
			tables := l.Tables()
			if len(tables) != 1 || tables[0].Name != "lag" {
				t.Fatalf("tables %v", tables)
			}
			if len(want) == 0 {
				t.Fatal("the capture has no fetch answered")
			}
			compareRows(t, tables[0], want)
		})
	}
}

// TestLagPartitionsMatchJSON: what Lag.Partitions says of each client's partition (the
// doctor's consumer checks read it), as the JSON lines show it.
func TestLagPartitionsMatchJSON(t *testing.T) {
	for _, capture := range realCaptures {
		t.Run(capture, func(t *testing.T) {
			var want []string
			ref := lagFromJSON(jsonLines(t, capture))
			for _, w := range ref.table() {
				row := ref.rows[lagKey{w[0].(string), jsonPart{w[1].(string), int32(w[2].(int64))}}]
				readable := int64(-1)
				if end := cmp.Or(row.lso, row.hw); end != nil && row.offset != nil {
					readable = max(end.(int64)-row.offset.(int64), 0)
				}
				first, last, maxLag := row.firstLag, row.lag, row.max
				if first == nil {
					first, last, maxLag = int64(0), int64(0), int64(0)
				}
				offset := row.offset
				if offset == nil {
					offset = int64(-1)
				}
				want = append(want, fmt.Sprint(w[:3], row.fetches, row.lag != nil, first, last, maxLag, row.firstFrame, row.lastFrame,
					offset, row.moved, readable, row.frames))
			}
			l := analysis.NewLag()
			analyse(t, capture, l)
			var got []string
			for _, p := range l.Partitions() {
				var frames []int
				for _, f := range p.Frames {
					frames = append(frames, f.Frame)
				}
				got = append(got, fmt.Sprint([]any{p.ClientID, p.Topic, int64(p.Partition)}, p.Fetches, p.HasLag, p.FirstLag, p.LastLag,
					p.MaxLag, p.FirstLagAt.Frame, p.LastLagAt.Frame, p.Offset, p.Moved, p.Readable, frames))
			}
			if !slices.Equal(got, want) {
				t.Errorf("partitions\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// compareRows checks a table's rows against those the test computed, row by row.
func compareRows(t *testing.T, got model.Table, want [][]any) {
	t.Helper()
	for i := range max(len(got.Rows), len(want)) {
		var g, w []any
		if i < len(got.Rows) {
			g = got.Rows[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s row %d:\n got %v\nwant %v", got.Name, i, g, w)
		}
	}
	for _, row := range got.Rows {
		if len(row) != len(got.Columns) {
			t.Errorf("row %v: %d values for %d columns", row, len(row), len(got.Columns))
		}
	}
}

// TestLagCarriesSessionsForward checks that the captures of incremental fetch sessions have
// lag samples whose offset or high watermark the session carried (a partition the request
// does not name, or the response does not answer), so that TestLagMatchesJSON checks them.
func TestLagCarriesSessionsForward(t *testing.T) {
	for _, capture := range []string{"kgo-fetch-session.pcap", "kgo-lag.pcap"} {
		t.Run(capture, func(t *testing.T) {
			if r := lagFromJSON(jsonLines(t, capture)); r.carried == 0 {
				t.Errorf("no lag sample carried by a fetch session")
			}
		})
	}
}

// names collects the names of the nodes of every message, by API key and direction.
type names map[apiDirection]map[string]bool

type apiDirection struct {
	key      int16
	response bool
}

func (ns names) Add(e *model.Entry) {
	k := apiDirection{e.Msg.APIKey, !e.Request}
	if ns[k] == nil {
		ns[k] = map[string]bool{}
	}
	codec.Walk(e.Msg.Fields, func(n *codec.Node, _ int) bool {
		ns[k][n.Name] = true
		return true
	})
}

func (names) Tables() []model.Table { return nil }

// TestReads checks that the fields the analyses name are fields of the messages they read, as
// the real captures' trees (record batches decoded to their headers) name them.
func TestReads(t *testing.T) {
	seen := names{}
	for _, capture := range realCaptures {
		if err := analyseFile(capture, seen); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []analysis.FieldReader{analysis.NewLag(), analysis.NewE2E()} {
		for _, r := range a.Reads() {
			k := apiDirection{r.APIKey, r.Response}
			for _, f := range r.Fields {
				if !seen[k][f] {
					t.Errorf("%T: API %d (response %v): no field %s in the captures", a, r.APIKey, r.Response, f)
				}
			}
		}
	}
}

// TestTablesOverEveryCapture runs the analyses over every capture of pcaps/ (other protocols,
// TLS without its keys, a capture that starts mid-stream, ...) and checks that every value is
// of its column's kind.
func TestTablesOverEveryCapture(t *testing.T) {
	files, err := filepath.Glob(capturePath("*.pcap*"))
	if err != nil || len(files) == 0 {
		t.Fatal("no captures in pcaps/", err)
	}
	kinds := map[model.Kind]reflect.Type{model.String: reflect.TypeFor[string](), model.Int: reflect.TypeFor[int64](),
		model.Duration: reflect.TypeFor[time.Duration]()}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			as := []analysis.Analysis{analysis.NewLag(), analysis.NewE2E()}
			if err := analyseFile(filepath.Base(file), as...); err != nil {
				t.Fatal(err)
			}
			for _, a := range as {
				for _, tb := range a.Tables() {
					for _, row := range tb.Rows {
						if len(row) != len(tb.Columns) {
							t.Fatalf("%s: row %v: %d values for %d columns", tb.Name, row, len(row), len(tb.Columns))
						}
						for i, v := range row {
							if v != nil && reflect.TypeOf(v) != kinds[tb.Columns[i].Kind] {
								t.Errorf("%s: column %s holds %T", tb.Name, tb.Columns[i].Name, v)
							}
						}
					}
				}
			}
		})
	}
}
