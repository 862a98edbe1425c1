package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
)

// TestPageMessageEscapes: a value that would close the script element holding the page's data
// (a client id "</script>...") is escaped, and reads back unchanged.
func TestPageMessageEscapes(t *testing.T) {
	id := `</script><img src=x onerror=alert(1)>&`
	e := &Entry{Frame: 3, FirstFrame: 3, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Src: "a", Dst: "b",
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
