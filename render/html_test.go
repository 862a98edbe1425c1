package render

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

// TestPageMessageEscapes: a value that would close the script element holding the page's data
// (a client id "</script>...") is escaped, and reads back unchanged.
func TestPageMessageEscapes(t *testing.T) {
	id := `</script><img src=x onerror=alert(1)>&`
	e := &model.Entry{Frame: 3, FirstFrame: 3, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Src: "a", Dst: "b",
		Msg: &codec.Message{APIKey: 18, APIName: "ApiVersions", ClientID: &id, Size: 4,
			Fields: []*codec.Node{{Name: "message_size", Offset: 0, Size: 4, Value: int64(0)}}, HeaderFields: 1},
		Bytes: []byte{0, 0, 0, 0}}
	var p PageMessages
	b := p.Append(nil, e, "")
	if strings.ContainsAny(string(b), "<>&") {
		t.Fatalf("the page's data holds <, > or &: %s", b)
	}
	var got struct {
		ClientID string `json:"client_id"`
		Frame    int    `json:"frame"`
		F        []any  `json:"f"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.ClientID != id || got.Frame != 3 || len(got.F) != 1 {
		t.Errorf("read back %+v", got)
	}
}

// TestPageMessageBigInts: the workshop page shows an int64 beyond 2^53 (a producer id) digit
// for digit: its data holds values as text, and no JSON number that JSON.parse would round.
func TestPageMessageBigInts(t *testing.T) {
	const id = 7369327973057909530
	e := &model.Entry{Frame: 3, FirstFrame: 3, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Src: "a", Dst: "b",
		Msg: &codec.Message{APIKey: 22, APIName: "InitProducerId", Version: 4, Response: true, Size: 12,
			Fields: []*codec.Node{{Name: "ProducerId", Type: wire.Int64, Offset: 4, Size: 8, Value: int64(id)}}},
		Bytes: make([]byte, 12)}
	var p PageMessages
	b := p.Append(nil, e, "")
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	shown := false
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case json.Number:
			if n, err := v.Int64(); err != nil || n > 1<<53 || n < -(1<<53) {
				t.Errorf("the page's data holds the number %s, which JSON.parse rounds", v)
			}
		case string:
			shown = shown || strings.Contains(v, strconv.FormatInt(id, 10))
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	if !shown {
		t.Errorf("no text of the page's data shows %d: %s", id, b)
	}
}
