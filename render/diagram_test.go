package render

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

func TestDiagramValues(t *testing.T) {
	batch := &codec.Node{Name: "batch", Type: wire.RecordBatch}
	record := &codec.Node{Name: "[0]", Type: wire.Record}
	long := bytes.Repeat([]byte("a"), 70)
	binary := []byte{0, 1, 2, 0xff}
	uuid := codec.UUID{15: 1}
	tests := []struct {
		name   string
		n      *codec.Node
		parent *codec.Node
		want   string
	}{
		{"int32", &codec.Node{Name: "ThrottleTimeMs", Type: wire.Int32, Value: int64(0)}, nil, "0"},
		{"negative", &codec.Node{Name: "NodeId", Type: wire.Int32, Value: int64(-1)}, nil, "-1"},
		{"no error", &codec.Node{Name: "ErrorCode", Type: wire.Int16, Value: int64(0)}, nil, "0 NONE"},
		{"error", &codec.Node{Name: "ErrorCode", Type: wire.Int16, Value: int64(16)}, nil, "16 NOT_COORDINATOR"},
		{"top-level error", &codec.Node{Name: "TopLevelErrorCode", Type: wire.Int16, Value: int64(15)}, nil, "15 COORDINATOR_NOT_AVAILABLE"},
		{"unknown error", &codec.Node{Name: "ErrorCode", Type: wire.Int16, Value: int64(999)}, nil, "999 UNKNOWN_ERROR_CODE(999)"},
		{"int16 not an error", &codec.Node{Name: "ApiKey", Type: wire.Int16, Value: int64(16)}, nil, "16"},
		{"array of 1", &codec.Node{Name: "Groups", Type: wire.CompactArray, Value: int64(1)}, nil, "1 item"},
		{"array of 3", &codec.Node{Name: "Groups", Type: wire.Array, Value: int64(3)}, nil, "3 items"},
		{"empty array", &codec.Node{Name: "Groups", Type: wire.Array, Value: int64(0)}, nil, "0 items"},
		{"null array", &codec.Node{Name: "Topics", Type: wire.CompactArray}, nil, "null"},
		{"record headers", &codec.Node{Name: "headers", Type: wire.VarintArray, Value: int64(2)}, record, "2 items"},
		{"struct", &codec.Node{Name: "[0]", Type: wire.Struct}, nil, ""},
		{"null struct", &codec.Node{Name: "Assignment", Type: wire.NullableStruct, Children: []*codec.Node{{Name: "present", Type: wire.Int8, Value: int64(-1)}}}, nil, "null"},
		{"present struct", &codec.Node{Name: "Assignment", Type: wire.NullableStruct, Children: []*codec.Node{{Name: "present", Type: wire.Int8, Value: int64(1)}}}, nil, ""},
		{"null string", &codec.Node{Name: "ErrorMessage", Type: wire.CompactNullableString}, nil, "null"},
		{"null bytes", &codec.Node{Name: "key", Type: wire.VarintBytes}, record, "null"},
		{"string", &codec.Node{Name: "GroupId", Type: wire.CompactString, Value: "order-processors"}, nil, `"order-processors"`},
		{"string with quote", &codec.Node{Name: "GroupId", Type: wire.String, Value: "a\"b\n"}, nil, `"a\"b\n"`},
		{"long string", &codec.Node{Name: "GroupId", Type: wire.String, Value: string(long)}, nil, `"` + strings.Repeat("a", 64) + `"… (70 bytes)`},
		{"text bytes", &codec.Node{Name: "MemberMetadata", Type: wire.CompactBytes, Value: []byte("<metadata>")}, nil, `"<metadata>"`},
		{"empty bytes", &codec.Node{Name: "MemberMetadata", Type: wire.CompactBytes, Value: []byte{}}, nil, `""`},
		{"binary bytes", &codec.Node{Name: "MemberMetadata", Type: wire.Bytes, Value: binary}, nil, "000102ff"},
		{"decoded bytes", &codec.Node{Name: "MemberMetadata", Type: wire.Bytes, Value: binary, Children: []*codec.Node{{Name: "Version", Type: wire.Int16}},
			Note: "ConsumerProtocolSubscription v0"}, nil, "4 bytes  [ConsumerProtocolSubscription v0]"},
		{"control key", &codec.Node{Name: "key", Type: wire.VarintBytes, Value: binary, Children: []*codec.Node{{Name: "version", Type: wire.Int16}}}, record, "4 bytes"},
		{"long bytes", &codec.Node{Name: "value", Type: wire.Bytes, Value: append(long, 0)}, nil, strings.Repeat("61", 64) + "… (71 bytes)"},
		{"uuid", &codec.Node{Name: "TopicId", Type: wire.UUID, Value: uuid}, nil, "AAAAAAAAAAAAAAAAAAAAAQ (00000000-0000-0000-0000-000000000001)"},
		{"bool", &codec.Node{Name: "IsInternal", Type: wire.Bool, Value: true}, nil, "true"},
		{"float", &codec.Node{Name: "Ratio", Type: wire.Float64, Value: 0.25}, nil, "0.25"},
		{"timestamp", &codec.Node{Name: "baseTimestamp", Type: wire.Int64, Value: int64(1795946401234)}, batch, "1795946401234 (2026-11-29 10:00:01.234 UTC)"},
		{"timestamp -1", &codec.Node{Name: "maxTimestamp", Type: wire.Int64, Value: int64(-1)}, batch, "-1"},
		{"legacy timestamp", &codec.Node{Name: "timestamp", Type: wire.Int64, Value: int64(946684800000)}, nil, "946684800000 (2000-01-01 00:00:00.000 UTC)"},
		{"TimestampMs", &codec.Node{Name: "MaxTimestampMs", Type: wire.Int64, Value: int64(1795946401234)}, nil, "1795946401234 (2026-11-29 10:00:01.234 UTC)"},
		{"TimeMs", &codec.Node{Name: "LogAppendTimeMs", Type: wire.Int64, Value: int64(1795946401234)}, nil, "1795946401234 (2026-11-29 10:00:01.234 UTC)"},
		{"implausible", &codec.Node{Name: "LogAppendTimeMs", Type: wire.Int64, Value: int64(5000)}, nil, "5000"},
		{"after 2100", &codec.Node{Name: "Timestamp", Type: wire.Int64, Value: int64(9e12)}, nil, "9000000000000"},
		{"TimeoutMs", &codec.Node{Name: "TransactionTimeoutMs", Type: wire.Int64, Value: int64(1795946401234)}, nil, "1795946401234"},
		{"int32 TimeMs", &codec.Node{Name: "RebalanceTimeMs", Type: wire.Int32, Value: int64(60000)}, nil, "60000"},
		{"batch attributes", &codec.Node{Name: "attributes", Type: wire.Int16, Value: int64(0x14), Bits: wire.BatchAttributes}, batch, "0x0014 codec=zstd timestamp=create transactional"},
		{"record attributes", &codec.Node{Name: "attributes", Type: wire.Int8, Value: int64(0)}, record, "0"},
		{"tagged field", &codec.Node{Name: "ClusterId", Type: wire.TaggedField, Children: []*codec.Node{{Name: "tag", Type: wire.Uvarint, Value: int64(0)}}}, nil, "tag 0"},
		{"record note", &codec.Node{Name: "[0]", Type: wire.Record, Value: "offset 5, timestamp 2026-11-29T10:00:01.234Z"}, nil, "offset 5, timestamp 2026-11-29T10:00:01.234Z"},
		{"codec", &codec.Node{Name: "records", Type: wire.CompressedRecords, Value: "lz4"}, batch, "lz4"},
		{"decoded records", &codec.Node{Name: "Records", Type: wire.CompactRecords, Value: int64(227)}, nil, "227 bytes"},
		{"secret", &codec.Node{Name: "Hmac", Type: wire.CompactBytes, Value: codec.Redacted, Secret: true}, nil, codec.Redacted},
	}
	d := NewDiagram(nil, DiagramOptions{MaxBytes: 64})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := d.value(tt.n, tt.parent); got != tt.want {
				t.Errorf("value = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBatchAttributes(t *testing.T) {
	tests := []struct {
		v    int64
		want string
	}{
		{0, "0x0000 codec=none timestamp=create"},
		{1, "0x0001 codec=gzip timestamp=create"},
		{2, "0x0002 codec=snappy timestamp=create"},
		{0x3 | 0x10 | 0x20, "0x0033 codec=lz4 timestamp=create transactional control"},
		{4 | 8, "0x000c codec=zstd timestamp=log-append"},
		{7, "0x0007 codec=unknown(7) timestamp=create"},
	}
	for _, tt := range tests {
		if got := string(appendBatchAttributes(nil, tt.v)); got != tt.want {
			t.Errorf("BatchAttributes(%#x) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestIsTimestampName(t *testing.T) {
	for name, want := range map[string]bool{
		"baseTimestamp": true, "maxTimestamp": true, "timestamp": true, "Timestamp": true,
		"MaxTimestampMs": true, "LogAppendTimeMs": true, "LogStartOffset": false,
		"TimeoutMs": false, "SessionTimeoutMs": false, "timestampDelta": false, "ThrottleTimeMs": true,
	} {
		if got := isTimestampName(name); got != want {
			t.Errorf("IsTimestampName(%q) = %v, want %v", name, got, want)
		}
	}
}

// tree builds a node tree with consistent offsets: each node starts where the previous one ended
// and a container's children follow its head. Nodes under a compressed_records node count from
// 0 and are marked Decompressed.
type spec struct {
	name  string
	typ   wire.Type
	head  int // leaf size, or a container's prefix
	value any
	kids  []spec
}

func build(specs []spec, off int, decompressed bool) ([]*codec.Node, int) {
	var out []*codec.Node
	for _, s := range specs {
		n := &codec.Node{Name: s.name, Type: s.typ, Offset: off, Value: s.value, Decompressed: decompressed}
		if s.typ == wire.CompressedRecords {
			n.Children, _ = build(s.kids, 0, true)
			n.Size = s.head
		} else {
			var end int
			n.Children, end = build(s.kids, off+s.head, decompressed)
			n.Size = s.head
			if len(s.kids) > 0 {
				n.Size = end - off
			}
		}
		off += n.Size
		out = append(out, n)
	}
	return out, off
}

// sample is a Fetch response with a compressed batch, an error and a warning.
func sample(t *testing.T) *model.Entry {
	t.Helper()
	specs := []spec{
		{"message_size", wire.Int32, 4, int64(0), nil},
		{"correlation_id", wire.Int32, 4, int64(7), nil},
		{"_tagged_fields", wire.TaggedFields, 1, int64(0), nil},
		{"ThrottleTimeMs", wire.Int32, 4, int64(0), nil},
		{"ErrorCode", wire.Int16, 2, int64(16), nil},
		{"Responses", wire.CompactArray, 1, int64(1), []spec{
			{"[0]", wire.Struct, 0, nil, []spec{
				{"TopicId", wire.UUID, 16, codec.UUID{15: 1}, nil},
				{"Records", wire.CompactRecords, 2, int64(80), []spec{
					{"batch", wire.RecordBatch, 0, nil, []spec{
						{"baseOffset", wire.Int64, 8, int64(5), nil},
						{"attributes", wire.Int16, 2, int64(0x13), nil},
						{"baseTimestamp", wire.Int64, 8, int64(1795946401234), nil},
						{"records", wire.CompressedRecords, 62, "lz4", []spec{
							{"[0]", wire.Record, 0, "offset 5, timestamp 2026-11-29T10:00:01.234Z", []spec{
								{"length", wire.Varint, 1, int64(12), nil},
								{"key", wire.VarintBytes, 1, nil, nil},
								{"value", wire.VarintBytes, 6, []byte("hello"), nil},
							}},
						}},
					}},
				}},
				{"_tagged_fields", wire.TaggedFields, 1, int64(1), []spec{
					{"ClusterId", wire.TaggedField, 0, nil, []spec{
						{"tag", wire.Uvarint, 1, int64(0), nil},
						{"size", wire.Uvarint, 1, int64(4), nil},
						{"ClusterId", wire.CompactNullableString, 4, "abc", nil},
					}},
				}},
			}},
		}},
		{"_tagged_fields", wire.TaggedFields, 1, int64(0), nil},
	}
	nodes, size := build(specs, 0, false)
	nodes[0].Value = int64(size - 4)
	codec.Find(nodes, "attributes").Bits = wire.BatchAttributes
	frame := make([]byte, size)
	for i := range frame {
		frame[i] = byte(i*7 + 0x20)
	}
	return &model.Entry{
		Frame: 13, FirstFrame: 12, Time: time.Date(2026, 11, 29, 10, 0, 1, 234567000, time.UTC), Stream: 3,
		Src: "10.0.0.9:9092", Dst: "10.0.0.5:53422", RequestFrame: 12, Latency: 1204 * time.Microsecond,
		Msg: &codec.Message{Response: true, APIKey: 1, APIName: "Fetch", Version: 17, CorrelationID: 7, Size: size,
			Fields: nodes, HeaderFields: 3, Warnings: []codec.Warning{{Offset: 0x20, Msg: "something odd"}}},
		Bytes: frame,
	}
}

func TestDiagramGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		opt  DiagramOptions
	}{
		{"fetch.txt", DiagramOptions{MaxBytes: 64}},
		{"fetch-hex.txt", DiagramOptions{MaxBytes: 64, Hex: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			d := NewDiagram(&out, tt.opt)
			if err := d.Message(sample(t)); err != nil {
				t.Fatal(err)
			}
			if err := d.Notice(&model.Notice{Frame: 14, Time: time.Date(2026, 11, 29, 10, 0, 2, 0, time.UTC), Src: "10.0.0.5:53422", Dst: "10.0.0.9:9092", Text: "gap of 100 bytes"}); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out.String(), "\x1b[") {
				t.Error("colours without DiagramOptions.Color")
			}
			golden(t, "diagram/"+tt.name, out.Bytes())
		})
	}
}

// fieldLine is one field line of a diagram: offset (d marks decompressed data), size, bytes.
type fieldLine struct {
	off, size    int
	decompressed bool
	hex          string
}

// fieldLines reads the field lines of a diagram (those that start with an offset).
func fieldLines(t *testing.T, out string, hexCol bool) []fieldLine {
	t.Helper()
	var lines []fieldLine
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || !(strings.HasPrefix(f[0], "0x") || strings.HasPrefix(f[0], "d0x")) {
			continue
		}
		var fl fieldLine
		s := f[0]
		if fl.decompressed = s[0] == 'd'; fl.decompressed {
			s = s[1:]
		}
		off, err := strconv.ParseInt(s[2:], 16, 64)
		if err != nil {
			t.Fatalf("bad offset in %q", l)
		}
		fl.off = int(off)
		if n, err := strconv.Atoi(f[1]); err == nil {
			fl.size = n
			if h := strings.TrimSuffix(f[2], "…"); hexCol && isHex(h) {
				fl.hex = f[2]
			}
		}
		lines = append(lines, fl)
	}
	return lines
}

// TestDiagramOffsetsAddUp reads the diagram back: every line's offset plus its size is the next
// line's offset, within the frame and within decompressed data; the hex column holds the frame's
// bytes at that offset.
func TestDiagramOffsetsAddUp(t *testing.T) {
	e := sample(t)
	var out bytes.Buffer
	d := NewDiagram(&out, DiagramOptions{Hex: true})
	if err := d.Message(e); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := fieldLines(t, out.String(), true)
	checkOffsets(t, lines, e.Bytes)
	if n := strings.Count(out.String(), "decompressed data: lz4"); n != 1 {
		t.Errorf("%d notes about decompressed offsets, want 1:\n%s", n, out.String())
	}
	note := strings.Index(out.String(), "decompressed data: lz4")
	first := strings.Index(out.String(), "d0x0000")
	if note < 0 || first < 0 || note > first {
		t.Errorf("the note on decompressed offsets is not before the first d offset:\n%s", out.String())
	}
}

// checkOffsets requires lines to tile the frame, and decompressed lines to tile from 0.
func checkOffsets(t *testing.T, lines []fieldLine, frame []byte) {
	t.Helper()
	next, dnext := 0, 0
	for i, l := range lines {
		if l.decompressed {
			if l.off != dnext && l.off != 0 {
				t.Errorf("line %d: decompressed offset 0x%04x, want 0x%04x", i, l.off, dnext)
			}
			dnext = l.off + l.size
			continue
		}
		if l.off != next {
			t.Errorf("line %d: offset 0x%04x, want 0x%04x (the previous line's offset + size)", i, l.off, next)
		}
		next = l.off + l.size
		if l.hex != "" {
			want := frame[l.off : l.off+min(l.size, 16)]
			got := strings.TrimSuffix(l.hex, "…")
			if got != hexOf(want) {
				t.Errorf("line %d: bytes %s, want %s", i, got, hexOf(want))
			}
		}
	}
	if next != len(frame) {
		t.Errorf("fields cover 0x%04x of 0x%04x bytes", next, len(frame))
	}
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return s != ""
}

func hexOf(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		s.WriteString(strconv.FormatInt(int64(c)|0x100, 16)[1:])
	}
	return s.String()
}

func TestDiagramColor(t *testing.T) {
	var out bytes.Buffer
	d := NewDiagram(&out, DiagramOptions{Color: true, MaxBytes: 64})
	if err := d.Message(sample(t)); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		styleError + "16 NOT_COORDINATOR" + styleReset,
		styleWarn + "! offset 0x0020: something odd" + styleReset,
		styleDim + "correlation_id" + styleReset,
		styleNumber + "1 item" + styleReset,
		styleString + `"hello"` + styleReset,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, styleDim+"ThrottleTimeMs") {
		t.Error("a body field's name is dim like a header field's")
	}
}

func TestTitle(t *testing.T) {
	client := "cli"
	tests := []struct {
		name string
		e    *model.Entry
		want string
	}{
		{"request", &model.Entry{Msg: &codec.Message{APIName: "Metadata", APIKey: 3, Version: 12, CorrelationID: 3, Size: 46, ClientID: &client}},
			`Metadata Request v12  correlation_id 3  46 bytes  client_id "cli"`},
		{"acks=0", &model.Entry{NoResponse: true, Msg: &codec.Message{APIName: "Produce", Version: 9, Size: 100}},
			"Produce Request v9  correlation_id 0  100 bytes  no response expected"},
		{"answered", &model.Entry{RequestFrame: 12, Latency: 1204 * time.Microsecond, Msg: &codec.Message{Response: true, APIName: "DescribeGroups", APIKey: 15, Version: 6, CorrelationID: 7, Size: 218}},
			"DescribeGroups Response v6  correlation_id 7  218 bytes  answers #12 after 1.204 ms"},
		{"unpaired", &model.Entry{Msg: &codec.Message{Response: true, APIName: "Unknown(-1)", APIKey: -1, CorrelationID: 9, Size: 30}},
			"Unknown(-1) Response  correlation_id 9  30 bytes  request not captured"},
	}
	for _, tt := range tests {
		if got := title(tt.e); got != tt.want {
			t.Errorf("%s: title = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestHexDump(t *testing.T) {
	b := []byte("\x00\x00\x00\x10Kafka!\x01\x02abcdefghijklmn")
	out := bytes.NewBuffer(appendHexDump(nil, b, 0))
	want := "0000  00 00 00 10 4b 61 66 6b 61 21 01 02 61 62 63 64   ....Kafka!..abcd\n" +
		"0010  65 66 67 68 69 6a 6b 6c 6d 6e                     efghijklmn\n"
	if out.String() != want {
		t.Errorf("hex dump:\n%s\nwant:\n%s", out.String(), want)
	}
	// A big frame's dump is written a piece at a time, its offsets counting on.
	big := bytes.Repeat([]byte("0123456789abcdef"), 1000)
	big = append(big, "tail"...)
	var dump bytes.Buffer
	d := NewDiagram(&dump, DiagramOptions{})
	d.hexDump(big)
	d.Close()
	lines := strings.Split(strings.TrimSuffix(dump.String(), "\n"), "\n")
	if len(lines) != 1001 || !strings.HasPrefix(lines[256], "1000  30 31") || lines[1000] != "3e80  74 61 69 6c"+strings.Repeat(" ", 1+3*12+2)+"tail" {
		t.Errorf("hex dump of %d bytes: %d lines, line 256 %q, last %q", len(big), len(lines), lines[256], lines[len(lines)-1])
	}
}

// TestNoteInValue: a batch's CRC verdict and an API key's name are part of the value; other
// notes follow it in brackets.
func TestNoteInValue(t *testing.T) {
	d := NewDiagram(nil, DiagramOptions{})
	batch := &codec.Node{Name: "batch", Type: wire.RecordBatch}
	for _, tc := range []struct {
		n      *codec.Node
		parent *codec.Node
		want   string
	}{
		{&codec.Node{Name: "crc", Type: wire.Uint32, Value: int64(7), Note: "ok"}, batch, "7 ok"},
		{&codec.Node{Name: "crc", Type: wire.Uint32, Value: int64(7), Note: "mismatch (computed 9)"}, batch, "7 mismatch (computed 9)"},
		{&codec.Node{Name: "ApiKey", Type: wire.Int16, Value: int64(0), Note: "Produce"}, nil, "0 Produce"},
		{&codec.Node{Name: "crc", Type: wire.Uint32, Value: int64(7), Note: "a note"}, nil, "7  [a note]"},
	} {
		if got, _ := d.value(tc.n, tc.parent); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.n.Name, got, tc.want)
		}
	}
}

// TestDiagramHeldOrNot: a message's fields are written alike whether the diagram holds them
// all, starts holding them and then turns to measuring (a big message), or holds none.
func TestDiagramHeldOrNot(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	frame := fetchResponse(t, 3, 4<<10)
	for _, opt := range []DiagramOptions{{MaxBytes: 64}, {Hex: true, Explain: true}, {Color: true, MaxBytes: 16}} {
		var want []byte
		for _, hold := range []int{0, 1, 3000, 20000, holdLimit} {
			c := codec.New(set)
			c.Records, c.LazyRecords = records.New(records.Options{}), true
			var out bytes.Buffer
			d := NewDiagram(&out, opt)
			d.hold = hold
			e := &model.Entry{Frame: 2, Time: time.Unix(1767323045, 0), Src: "127.0.0.1:9092", Dst: "127.0.0.1:50000",
				Msg: c.DecodeResponse(frame, 1, 16), Bytes: frame, RequestFrame: 1, Latency: time.Millisecond}
			if err := d.Message(e); err != nil {
				t.Fatal(err)
			}
			d.Close()
			if want == nil {
				want = out.Bytes()
				continue
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("%+v, holding %d bytes: the diagram differs from the one held whole", opt, hold)
			}
		}
	}
}

// TestDiagramLetsGoOfLongLines: the buffers that a very long line grew (a big value, uncut) are
// not kept after its message.
func TestDiagramLetsGoOfLongLines(t *testing.T) {
	value := strings.Repeat("v", 2*holdLimit+1)
	m := &codec.Message{APIName: "Produce", Version: 9, Size: 100,
		Fields: []*codec.Node{{Name: "Value", Type: wire.CompactString, Value: value, Size: len(value) + 4}}}
	var out bytes.Buffer
	d := NewDiagram(&out, DiagramOptions{})
	for _, hold := range []int{holdLimit, 1} { // held, then in two passes
		d.hold = hold
		if err := d.Message(&model.Entry{Frame: 1, Msg: m}); err != nil {
			t.Fatal(err)
		}
		d.Flush()
		if !strings.Contains(out.String(), `"`+value+`"`) {
			t.Fatalf("holding %d: the value is not written whole", hold)
		}
		out.Reset()
		for name, b := range map[string][]byte{"row": d.grid.row.text, "line": d.grid.line, "held": d.grid.held.text, "buf": d.buf, "own line": d.line} {
			if limit := max(1<<20, 2*hold); cap(b) > limit || name != "held" && cap(b) > 1<<20 {
				t.Errorf("holding %d: the %s buffer keeps %d bytes", hold, name, cap(b))
			}
		}
	}
}
