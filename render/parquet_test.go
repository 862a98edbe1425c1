package render

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

// parquetEntries are a Produce request with records, its response with an error, a notice's
// neighbour (an unknown message) and a request of a connection whose ApiVersions request
// named its client software.
func parquetEntries() []*model.Entry {
	at := time.Date(2026, 11, 29, 10, 0, 1, 234567891, time.UTC)
	cid := "producer-1"
	records := &codec.Node{Name: "Records", Type: wire.CompactRecords, Value: int64(70), Children: []*codec.Node{
		{Name: "batch", Type: wire.RecordBatch, Children: []*codec.Node{
			{Name: "baseOffset", Type: wire.Int64, Value: int64(0)},
			{Name: "attributes", Type: wire.Int16, Value: int64(4)},
			{Name: "recordsCount", Type: wire.Int32, Value: int64(2)},
			{Name: "records", Type: wire.RecordData, Children: []*codec.Node{
				{Name: "[0]", Type: wire.Record, Value: "offset 0", Children: []*codec.Node{
					{Name: "key", Type: wire.VarintBytes, Value: []byte("k-1")},
					{Name: "value", Type: wire.VarintBytes, Value: []byte{0, 0xff}},
					{Name: "headers", Type: wire.VarintArray, Value: int64(0)},
				}},
				{Name: "[1]", Type: wire.Record, Value: "offset 1", Children: []*codec.Node{
					{Name: "key", Type: wire.VarintBytes},
					{Name: "value", Type: wire.VarintBytes, Value: []byte(`{"a":"é"}`)},
					{Name: "headers", Type: wire.VarintArray, Value: int64(0)},
				}},
			}},
		}},
	}}
	produce := &codec.Message{APIKey: 0, APIName: "Produce", Version: 9, CorrelationID: 7, ClientID: &cid, Size: 120,
		HeaderFields: 1, Fields: []*codec.Node{
			{Name: "correlation_id", Type: wire.Int32, Value: int64(7)},
			{Name: "TransactionalId", Type: wire.CompactNullableString},
			{Name: "Acks", Type: wire.Int16, Value: int64(-1)},
			{Name: "TopicData", Type: wire.CompactArray, Value: int64(1), Children: []*codec.Node{
				{Name: "[0]", Type: wire.Struct, Children: []*codec.Node{
					{Name: "Name", Type: wire.CompactString, Value: "orders"},
					{Name: "TopicId", Type: wire.UUID, Value: codec.UUID{1}, Note: "topic orders"},
					{Name: "PartitionData", Type: wire.CompactArray, Value: int64(1), Children: []*codec.Node{
						{Name: "[0]", Type: wire.Struct, Children: []*codec.Node{
							{Name: "Index", Type: wire.Int32, Value: int64(3)},
							records,
						}},
					}},
				}},
			}},
			{Name: "Empty", Type: wire.CompactArray, Value: int64(0)},
			{Name: "Null", Type: wire.CompactArray},
			{Name: "NullStruct", Type: wire.NullableStruct, Children: []*codec.Node{{Name: "present", Type: wire.Int8, Value: int64(-1)}}},
			{Name: "_tagged_fields", Type: wire.TaggedFields, Value: int64(0)},
		}}
	produceFacts := &codec.Facts{Topics: []string{"orders"}, Partitions: []codec.TopicPartitions{{Topic: "orders", Partitions: []int32{3}}},
		RecordSets: []codec.RecordSet{{Topic: "orders", Partition: 3, Records: 2, Bytes: 70, Codecs: []string{"zstd"}}}}
	resp := &codec.Message{Response: true, APIKey: 0, APIName: "Produce", Version: 9, CorrelationID: 7, Size: 60,
		Warnings: []codec.Warning{{Offset: 9, Msg: "odd"}}}
	respFacts := &codec.Facts{Topics: []string{"orders"}, Partitions: []codec.TopicPartitions{{Topic: "orders", Partitions: []int32{3}}}, Errors: []int16{6}}
	versions := &codec.Message{APIKey: 18, APIName: "ApiVersions", Version: 3, CorrelationID: 1, ClientID: &cid, Size: 40}
	unknown := &codec.Message{Response: true, APIKey: -1, CorrelationID: 99, Size: 12}
	return []*model.Entry{
		{Frame: 2, FirstFrame: 1, Time: at, Stream: 4, Src: "10.0.0.1:5000", Dst: "10.0.0.2:9092", Request: true, Msg: versions,
			Facts: &codec.Facts{Software: "kgo v1.22.3"}},
		{Frame: 5, FirstFrame: 3, Time: at.Add(time.Millisecond), Stream: 4, Src: "10.0.0.1:5000", Dst: "10.0.0.2:9092", Request: true,
			Msg: produce, Facts: produceFacts},
		{Frame: 6, FirstFrame: 6, Time: at.Add(3 * time.Millisecond), Stream: 4, Src: "10.0.0.2:9092", Dst: "10.0.0.1:5000", Msg: resp,
			Facts: respFacts, RequestFrame: 5, Latency: 2*time.Millisecond + 500*time.Nanosecond},
		{Frame: 9, FirstFrame: 9, Time: at.Add(time.Second), Stream: 5, Src: "10.0.0.3:9092", Dst: "10.0.0.1:5001", Msg: unknown},
	}
}

// readParquet reads a file back with parquet-go (the DuckDB test in test/duckdb reads it with
// an independent reader).
func readParquet(t *testing.T, data []byte) []parquetRow {
	t.Helper()
	rows, err := parquet.Read[parquetRow](bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func writeParquet(t *testing.T, o Options, entries []*model.Entry, notices ...*model.Notice) []byte {
	t.Helper()
	var out bytes.Buffer
	p := newParquet(&out, o)
	for _, e := range entries {
		if err := p.Message(e); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range notices {
		if err := p.Notice(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestParquetColumns(t *testing.T) {
	entries := parquetEntries()
	notice := &model.Notice{Frame: 7, Time: entries[0].Time, Stream: 4, Src: "a", Dst: "b", Text: "12 bytes lost"}
	rows := readParquet(t, writeParquet(t, Options{File: "cap.pcap"}, entries, notice))
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	for _, r := range rows {
		if r.File != "cap.pcap" {
			t.Errorf("frame %d: file %q", r.Frame, r.File)
		}
	}
	req, resp, unknown, n := rows[1], rows[2], rows[3], rows[4]
	if req.Kind != "request" || *req.APIKey != 0 || *req.APIName != "Produce" || *req.APIVersion != 9 || *req.CorrelationID != 7 ||
		*req.ClientID != "producer-1" || *req.Size != 120 || req.RequestFrame != nil || req.LatencyUs != nil || *req.FirstFrame != 3 {
		t.Errorf("request row: %+v", req)
	}
	// time is cut down to the microsecond (234567891 ns: 234567 µs); time_ns keeps the rest.
	if got, want := time.UnixMicro(req.Time).UTC(), entries[1].Time.Truncate(time.Microsecond); !got.Equal(want) {
		t.Errorf("time %v, want %v", got, want)
	}
	if got := time.Unix(0, req.TimeNs).UTC(); !got.Equal(entries[1].Time) {
		t.Errorf("time_ns %v, want %v", got, entries[1].Time)
	}
	if !slices.Equal(req.Topics, []string{"orders"}) || !slices.Equal(req.Partitions, []partitionRow{{"orders", 3}}) ||
		req.Records != 2 || req.RecordsBytes != 70 || !slices.Equal(req.Codecs, []string{"zstd"}) || len(req.RecordSets) != 1 {
		t.Errorf("request facts: %+v", req)
	}
	if req.ClientSoftware == nil || *req.ClientSoftware != "kgo v1.22.3" || resp.ClientSoftware == nil {
		t.Errorf("client software not carried along the connection: %v %v", req.ClientSoftware, resp.ClientSoftware)
	}
	if unknown.ClientSoftware != nil || unknown.APIKey != nil || unknown.APIName != nil || *unknown.CorrelationID != 99 {
		t.Errorf("unknown response: %+v", unknown)
	}
	if resp.Kind != "response" || *resp.RequestFrame != 5 || *resp.LatencyUs != 2000 || !slices.Equal(resp.ErrorCodes, []int16{6}) ||
		!slices.Equal(resp.ErrorNames, []string{"NOT_LEADER_OR_FOLLOWER"}) || !slices.Equal(resp.Warnings, []string{"offset 0x0009: odd"}) {
		t.Errorf("response row: %+v", resp)
	}
	if n.Kind != "notice" || n.Text == nil || *n.Text != "12 bytes lost" || n.APIKey != nil || n.Fields != nil {
		t.Errorf("notice row: %+v", n)
	}
	// The field tree: the body's fields by name, arrays and records as arrays, no tagged
	// section without fields, bytes as text or hex, a topic id's name beside it, a null
	// struct null.
	var tree map[string]any
	if err := json.Unmarshal(req.Fields, &tree); err != nil {
		t.Fatalf("fields %s: %v", req.Fields, err)
	}
	want := `{"TransactionalId":null,"Acks":-1,"TopicData":[{"Name":"orders","TopicId":"AQAAAAAAAAAAAAAAAAAAAA","topic":"orders","PartitionData":[{"Index":3,"Records":[{"baseOffset":0,"attributes":4,"recordsCount":2,"records":[{"key":"k-1","value":"00ff","headers":[]},{"key":null,"value":"{\"a\":\"é\"}","headers":[]}]}]}]}],"Empty":[],"Null":null,"NullStruct":null}`
	if string(req.Fields) != want {
		t.Errorf("fields\n%s\nwant\n%s", req.Fields, want)
	}
}

// TestParquetNoTree: without the field tree, the fields column is null and the rest alike.
// TestParquetTimeTypes: time is a TIMESTAMP(MICROS, UTC), the timestamp Spark, Trino,
// ClickHouse and DuckDB all read as one; time_ns is an INT64 integer (nanoseconds since the
// epoch, as the JSON time has them). No other column is a timestamp.
func TestParquetTimeTypes(t *testing.T) {
	data := writeParquet(t, Options{File: "cap.pcap"}, parquetEntries())
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	// timestamp returns a column's timestamp annotation, if it has one.
	timestamp := func(lt *format.LogicalType) *format.TimestampType {
		if lt == nil {
			return nil
		}
		ts, _ := lt.Value.(*format.TimestampType)
		return ts
	}
	seen := 0
	for _, path := range f.Schema().Columns() {
		leaf, _ := f.Schema().Lookup(path...)
		typ := leaf.Node.Type()
		ts := timestamp(typ.LogicalType())
		switch name := strings.Join(path, "."); name {
		case "time":
			seen++
			if typ.Kind() != parquet.Int64 || ts == nil || !ts.IsAdjustedToUTC || ts.Unit.Value.Duration() != time.Microsecond {
				t.Errorf("time: %v %v, want INT64 TIMESTAMP(MICROS, UTC)", typ.Kind(), typ.LogicalType())
			}
		case "time_ns":
			seen++
			if typ.Kind() != parquet.Int64 || ts != nil {
				t.Errorf("time_ns: %v %v, want an INT64 integer", typ.Kind(), typ.LogicalType())
			}
		default:
			if ts != nil {
				t.Errorf("%s is a timestamp too: %v", name, typ.LogicalType())
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d of the columns time and time_ns", seen)
	}
}

func TestParquetNoTree(t *testing.T) {
	entries := parquetEntries()
	full := readParquet(t, writeParquet(t, Options{}, entries))
	lean := readParquet(t, writeParquet(t, Options{NoTree: true}, entries))
	for i := range full {
		if lean[i].Fields != nil {
			t.Errorf("row %d: fields %s", i, lean[i].Fields)
		}
		if full[i].Fields == nil {
			t.Errorf("row %d: no fields", i)
		}
		full[i].Fields = nil
		a, _ := json.Marshal(full[i])
		b, _ := json.Marshal(lean[i])
		if !bytes.Equal(a, b) {
			t.Errorf("row %d:\n%s\n%s", i, a, b)
		}
	}
}

// TestParquetRowGroups: rows are flushed a row group at a time, whatever the number of rows.
func TestParquetRowGroups(t *testing.T) {
	e := parquetEntries()[1]
	var out bytes.Buffer
	p := NewParquet(&out, true, "")
	n := ParquetRowGroupRows*2 + 100
	for range n {
		if err := p.Message(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	// Three row groups at least: the writer may end one early when its buffered columns grow
	// past parquetRowGroupBytes (each column buffers up to a page before it is encoded).
	if f.NumRows() != int64(n) || len(f.RowGroups()) < 3 {
		t.Errorf("%d rows in %d row groups, want %d in 3 or more", f.NumRows(), len(f.RowGroups()), n)
	}
	for i, g := range f.RowGroups() {
		if g.NumRows() > ParquetRowGroupRows {
			t.Errorf("row group %d: %d rows, more than %d", i, g.NumRows(), ParquetRowGroupRows)
		}
	}
}

// TestParquetRowGroupBytes: a row group ends once its columns (and compressed trees) hold
// parquetRowGroupBytes, long before ParquetRowGroupRows rows of large field trees (a live
// period's rows are never held all at once): each holds little more than the bound, and the
// rows come back in order.
func TestParquetRowGroupBytes(t *testing.T) {
	for _, c := range []struct {
		name  string
		value int // bytes of each message's one value
		n     int
	}{
		{"values", 24 << 10, 1200},
		{"pages", parquetStreamOver + 1, 400}, // trees compressed into pages of their own
	} {
		t.Run(c.name, func(t *testing.T) {
			rowGroupBytes(t, c.value, c.n)
		})
	}
}

// rowGroupBytes writes n messages of value random bytes each, and checks the row groups.
func rowGroupBytes(t *testing.T, size, n int) {
	rng := rand.New(rand.NewPCG(3, 4))
	value := make([]byte, size) // random bytes: written as hex, compressed to about their size
	var out bytes.Buffer
	p := NewParquet(&out, true, "")
	for i := range n {
		for j := range value {
			value[j] = byte(rng.Uint32())
		}
		m := &codec.Message{APIKey: 0, APIName: "Produce", Version: 9, Size: len(value), Fields: []*codec.Node{
			{Name: "Value", Type: wire.Bytes, Value: bytes.Clone(value)}}}
		if err := p.Message(&model.Entry{Frame: i + 1, FirstFrame: i + 1, Msg: m}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	groups := f.Metadata().RowGroups
	if f.NumRows() != int64(n) || len(groups) < 3 {
		t.Fatalf("%d rows in %d row groups, want %d in 3 or more", f.NumRows(), len(groups), n)
	}
	// A group ends after the run of rows (about a page of field trees) that passed the bound.
	limit := int64(parquetRowGroupBytes + 2*parquetPageBytes)
	for i, g := range groups {
		if g.TotalCompressedSize > limit {
			t.Errorf("row group %d: %d bytes, more than %d", i, g.TotalCompressedSize, limit)
		}
	}
	for i, r := range readParquet(t, out.Bytes()) {
		if r.Frame != int64(i+1) {
			t.Fatalf("row %d is frame %d", i, r.Frame)
		}
	}
}

// BenchmarkParquet writes rows of the messages of parquetEntries, with and without the field
// tree, and of treePageEntries (trees over a page: a message of 1 MB of random bytes).
func BenchmarkParquet(b *testing.B) {
	for _, c := range []struct {
		name    string
		entries []*model.Entry
		tree    bool
	}{
		{"facts", parquetEntries(), false},
		{"tree", parquetEntries(), true},
		{"big", treePageEntries(), true},
	} {
		entries, tree := c.entries, c.tree
		b.Run(c.name, func(b *testing.B) {
			p := NewParquet(io.Discard, tree, "")
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := p.Message(entries[i%len(entries)]); err != nil {
					b.Fatal(err)
				}
			}
			if err := p.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestParquetNoFieldBounds: the fields column's pages carry no bounds (whole JSON values
// copied into page headers and the column index); the other columns keep theirs.
func TestParquetNoFieldBounds(t *testing.T) {
	data := writeParquet(t, Options{}, parquetEntries())
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	bounds := map[string]bool{}
	for _, c := range f.Metadata().RowGroups[0].Columns {
		s := c.MetaData.Statistics
		bounds[strings.Join(c.MetaData.PathInSchema, ".")] = len(s.MaxValue) > 0 || len(s.MinValue) > 0
	}
	if bounds["fields"] {
		t.Error("the fields column has bounds")
	}
	if !bounds["frame"] || !bounds["api_name"] {
		t.Errorf("frame or api_name without bounds: %v", bounds)
	}
}

// TestParquetLazyRecords: a Fetch response whose records are left unexpanded until the field
// tree is written (by the builders, several at once) gives the rows of one decoded whole: the
// field tree, the warnings (from a damaged zstd batch) and the record counts (those the
// batches' headers state, also of the batch that does not decompress).
func TestParquetLazyRecords(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	frame := largeFetch(t, 2)
	frame[len(frame)-10] ^= 0xff // in the zstd batch of the last partition
	write := func(lazy bool) []parquetRow {
		c := codec.New(set)
		c.Records, c.LazyRecords = records.New(records.Options{}), lazy
		var out bytes.Buffer
		p := NewParquet(&out, true, "")
		for i := range 8 { // a batch each: builders write them at once
			m := c.DecodeResponse(frame, 1, 16)
			if m.Unexpanded() != lazy {
				t.Fatalf("lazy %v: message unexpanded %v", lazy, m.Unexpanded())
			}
			f := m.Facts()
			if err := p.Message(&model.Entry{Frame: i + 1, FirstFrame: i + 1, Msg: m, Facts: &f}); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		return readParquet(t, out.Bytes())
	}
	eager, lazy := write(false), write(true)
	if len(eager) != len(lazy) || len(eager) != 8 {
		t.Fatalf("%d and %d rows", len(eager), len(lazy))
	}
	if len(eager[0].Warnings) == 0 || eager[0].Records == 0 || len(eager[0].Fields) < 1<<20 {
		t.Fatalf("the message does not test much: warnings %v, %d records, %d bytes of fields", eager[0].Warnings,
			eager[0].Records, len(eager[0].Fields))
	}
	for i := range eager {
		if !bytes.Equal(eager[i].Fields, lazy[i].Fields) {
			t.Fatalf("row %d: the field trees differ", i)
		}
		if !slices.Equal(eager[i].Warnings, lazy[i].Warnings) || eager[i].Records != lazy[i].Records ||
			eager[i].RecordsBytes != lazy[i].RecordsBytes || !slices.Equal(eager[i].Codecs, lazy[i].Codecs) {
			t.Fatalf("row %d: warnings %v, %d records (%d bytes, %v); lazily %v, %d (%d, %v)", i, eager[i].Warnings,
				eager[i].Records, eager[i].RecordsBytes, eager[i].Codecs, lazy[i].Warnings, lazy[i].Records,
				lazy[i].RecordsBytes, lazy[i].Codecs)
		}
	}
}

// TestParquetLetsGoOfBigMessages: a message bigger than ParquetHoldsUpTo is not read once
// Message has returned (its frame may be unmapped then, Needs.HoldsUpTo): overwriting its
// frame at once changes no row.
func TestParquetLetsGoOfBigMessages(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	frame := largeFetch(t, 2)
	write := func(clobber bool) []parquetRow {
		c := codec.New(set)
		c.Records, c.LazyRecords = records.New(records.Options{}), true
		var out bytes.Buffer
		p := NewParquet(&out, true, "")
		for i := range 3 {
			b := bytes.Clone(frame)
			m := c.DecodeResponse(b, 1, 16)
			if m.Size <= ParquetHoldsUpTo || !m.Unexpanded() {
				t.Fatalf("a message of %d bytes (unexpanded %v): not big enough", m.Size, m.Unexpanded())
			}
			f := m.Facts()
			if err := p.Message(&model.Entry{Frame: i + 1, FirstFrame: i + 1, Msg: m, Facts: &f}); err != nil {
				t.Fatal(err)
			}
			if clobber {
				clear(b)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		return readParquet(t, out.Bytes())
	}
	want, got := write(false), write(true)
	if len(got) != len(want) || len(want) != 3 {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].Fields, want[i].Fields) || !slices.Equal(got[i].Warnings, want[i].Warnings) {
			t.Errorf("row %d: the field tree or warnings read the frame after Message returned", i)
		}
	}
}

// TestResponseClientID: a response's JSON line and Parquet row carry its request's client id
// (Entry.ClientID) under the request's key, and its errors; a request's line has no errors.
func TestResponseClientID(t *testing.T) {
	entries := parquetEntries()
	cid := "producer-1"
	entries[2].ClientID = &cid
	var out bytes.Buffer
	j := NewJSON(&out)
	for _, e := range entries[1:3] {
		if err := j.Message(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	if req, resp := lines[0], lines[1]; req["client_id"] != "producer-1" || resp["client_id"] != "producer-1" ||
		req["errors"] != nil || !sameValues(resp["errors"], []any{"NOT_LEADER_OR_FOLLOWER"}) {
		t.Errorf("request line: client_id %v, errors %v; response line: client_id %v, errors %v", req["client_id"], req["errors"],
			resp["client_id"], resp["errors"])
	}
	rows := readParquet(t, writeParquet(t, Options{}, entries))
	if r := rows[2]; r.ClientID == nil || *r.ClientID != "producer-1" {
		t.Errorf("response row's client_id %v", r.ClientID)
	}
	if r := rows[3]; r.ClientID != nil {
		t.Errorf("the unpaired response's client_id %v", *r.ClientID)
	}
}

func sameValues(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
