package render

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

// TestJSONValues: the hand-built lines are valid JSON, every value reads back as it was, and
// strings are escaped as encoding/json escapes them (HTML characters left alone).
func TestJSONValues(t *testing.T) {
	strs := []string{"plain", `quo"te`, `back\slash`, "tab\tnew\nline", "é and 日本", "<&>", "line\u2028sep", "bad \xff utf8", ""}
	var fields []*codec.Node
	for _, s := range strs {
		fields = append(fields, &codec.Node{Name: "s", Type: wire.String, Value: s})
	}
	uuid := codec.UUID{1, 2, 3}
	fields = append(fields,
		&codec.Node{Name: "f", Type: wire.Float64, Value: 1.5e300},
		&codec.Node{Name: "n", Type: wire.NullableString},
		&codec.Node{Name: "b", Type: wire.Bool, Value: true},
		&codec.Node{Name: "u", Type: wire.UUID, Value: uuid},
		&codec.Node{Name: "text", Type: wire.Bytes, Value: []byte("hello")},
		&codec.Node{Name: "bin", Type: wire.Bytes, Value: []byte{0, 1, 0xff}},
		&codec.Node{Name: "ErrorCode", Type: wire.Int16, Value: int64(3), Note: "a \"note\"",
			Children: []*codec.Node{{Name: "x", Type: wire.Int8, Value: int64(-1)}}},
	)
	cid := "client \"1\""
	m := &codec.Message{APIKey: 3, APIName: "Metadata", Version: 12, CorrelationID: 7, ClientID: &cid, Size: 99,
		Fields: fields, Warnings: []codec.Warning{{Offset: 4, Msg: "odd <x>"}}}
	var out bytes.Buffer
	j := NewJSON(&out)
	e := &model.Entry{Frame: 2, FirstFrame: 1, Time: time.Date(2026, 11, 29, 1, 2, 3, 4000, time.UTC), Stream: 5,
		Src: "10.0.0.1:1", Dst: "10.0.0.2:9092", Msg: m}
	if err := j.Message(e); err != nil {
		t.Fatal(err)
	}
	if err := j.Notice(&model.Notice{Frame: 3, Text: "lost \"bytes\""}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	if !strings.Contains(lines[0], `"<&>"`) || !strings.Contains(lines[0], `"offset 0x0004: odd <x>"`) {
		t.Errorf("HTML characters escaped: %s", lines[0])
	}
	var got struct {
		Frame    int    `json:"frame"`
		Time     string `json:"time"`
		ClientID string `json:"client_id"`
		Fields   []struct {
			Value    any    `json:"value"`
			Encoding string `json:"encoding"`
			Error    string `json:"error"`
			Note     string `json:"note"`
			Fields   []struct {
				Value any `json:"value"`
			} `json:"fields"`
		} `json:"fields"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("%v:\n%s", err, lines[0])
	}
	// Strings come back whole: as text when they are UTF-8, in hex otherwise.
	for i, s := range strs {
		want, enc := s, ""
		if !utf8.ValidString(s) {
			want, enc = hex.EncodeToString([]byte(s)), "hex"
		}
		if got.Fields[i].Value != want || got.Fields[i].Encoding != enc {
			t.Errorf("string %d: %q (encoding %q), want %q (%q)", i, got.Fields[i].Value, got.Fields[i].Encoding, want, enc)
		}
	}
	rest := got.Fields[len(strs):]
	wants := []any{1.5e300, nil, true, uuid.String(), "hello", "0001ff", float64(3)}
	for i, w := range wants {
		if rest[i].Value != w {
			t.Errorf("value %d: %v, want %v", i, rest[i].Value, w)
		}
	}
	if rest[4].Encoding != "utf8" || rest[5].Encoding != "hex" {
		t.Errorf("encodings %q %q", rest[4].Encoding, rest[5].Encoding)
	}
	if e := rest[6]; e.Error != codec.ErrorName(3) || e.Note != `a "note"` || len(e.Fields) != 1 || e.Fields[0].Value != float64(-1) {
		t.Errorf("error code node: %+v", e)
	}
	if got.ClientID != cid || got.Time != "2026-11-29T01:02:03.000004Z" || got.Frame != 2 {
		t.Errorf("header: %+v", got)
	}
	if len(got.Warnings) != 1 || got.Warnings[0] != (codec.Warning{Offset: 4, Msg: "odd <x>"}).String() {
		t.Errorf("warnings %q", got.Warnings)
	}
	var notice map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &notice); err != nil || notice["text"] != `lost "bytes"` || notice["kind"] != "notice" {
		t.Errorf("notice %s: %v", lines[1], err)
	}
}

// TestJSONBigInts: int64 values beyond 2^53 (producer ids) are JSON numbers written digit for
// digit, which a reader that keeps numbers as text (Go's json.Number) reads back exactly.
func TestJSONBigInts(t *testing.T) {
	values := []int64{7369327973057909530, 1<<53 + 1, -(1<<53 + 1), math.MaxInt64, math.MinInt64}
	var fields []*codec.Node
	for _, v := range values {
		fields = append(fields, &codec.Node{Name: "producerId", Type: wire.Int64, Value: v})
	}
	var out bytes.Buffer
	j := NewJSON(&out)
	e := &model.Entry{Frame: 1, FirstFrame: 1, Time: time.Date(2026, 11, 29, 1, 2, 3, 0, time.UTC), Src: "a", Dst: "b",
		Msg: &codec.Message{APIKey: 22, APIName: "InitProducerId", Version: 4, Response: true, Size: 40, Fields: fields}}
	if err := j.Message(e); err != nil {
		t.Fatal(err)
	}
	j.Close()
	dec := json.NewDecoder(&out)
	dec.UseNumber()
	var got struct {
		Fields []struct {
			Value json.Number `json:"value"`
		} `json:"fields"`
	}
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if len(got.Fields) != len(values) {
		t.Fatalf("%d fields, want %d", len(got.Fields), len(values))
	}
	for i, v := range values {
		n, err := got.Fields[i].Value.Int64()
		if err != nil || n != v || got.Fields[i].Value.String() != strconv.FormatInt(v, 10) {
			t.Errorf("value %d: %q (%d, %v), want %d", i, got.Fields[i].Value, n, err, v)
		}
	}
}
