package schema

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// parseJSON is Parse without readFast: encoding/json's path alone.
func parseJSON(data []byte, source string, _ *[]rawField) (*Message, error) {
	raw, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	return fromRaw(&raw, source)
}

// sameAsJSON fails t unless decodeJSON accepts data and reads what readFast read.
func sameAsJSON(t *testing.T, data []byte, fast rawMessage) {
	t.Helper()
	slow, err := decodeJSON(data)
	if err != nil {
		t.Fatalf("readFast accepted what encoding/json refuses (%v):\n%s", err, data)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("readFast read\n%#v\nencoding/json read\n%#v\nfrom\n%s", fast, slow, data)
	}
}

// TestEmbeddedReadFast: the set of embedded definitions, each read by readFast, is the set
// encoding/json reads, every API, version and field; and readFast reads every one of them
// (else start-up is slow again, though right).
func TestEmbeddedReadFast(t *testing.T) {
	fast, err := loadEmbedded(parse)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := loadEmbedded(parseJSON)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatal("the embedded set read by readFast differs from encoding/json's")
	}
	files, _ := filepath.Glob("defs/*.json")
	for _, dir := range []string{"testdata/kafka", "testdata/newer", "testdata/older"} {
		more, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		files = append(files, more...)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		raw, ok := readFast(data, nil)
		if !ok {
			t.Errorf("%s: readFast declined it", p)
			continue
		}
		sameAsJSON(t, data, raw)
	}
}

// TestReadFastLenient: readFast reads the liberties Parse allows as encoding/json reads them
// after clean, and reads them itself.
func TestReadFastLenient(t *testing.T) {
	for _, src := range []string{
		`{"apiKey": 7, "name": "N", "validVersions": "0-3"} trailing bytes json.Decoder leaves`,
		`{"APIKEY": "7", "Name": "N", "VALIDversions": 3, "type": "request", "unknown": {"a": [1, -2.5e3, true, null, "s"]}}`,
		`{"apiKey": TBD, "name": "N"}`,
		`{"apiKey" /* c */ : // c
		  TBD_2, "name": "N"}`,
		`{"apiKey": true, "name": "N"}`,
		`{"apiKey": null, "name": "N"}`,
		`{"ApiKey": null, "name": "N"}`,
		`{"apiKey": "\u0031", "name": "N"}`,
		`{"apiKey": -0.5e+2, "name": "N"}`,
		`{"name": "A", "name": "B", "fields": [{"name": "X"}], "fields": []}`,
		`{"name": "N", "fields": null, "commonStructs": {"name": "C", "fields": {"name": "D", "tag": "3", "tag": null}}}`,
		`{"name": "N", "fields": [{"default": -1}, {"default": "x"}, {"default": 1e3}, {"default": 2.5E-7}, {"default": false}, {"default": null}, {"default": -0}]}`,
		`{"name": "N", "fields": [{"flexibleVersions": null}, {"flexibleVersions": "none"}, {"FlexibleVersions": 3, "flexibleversions": null}]}`,
		`{"name": "N", "fields": [{"tag": " 12 ", "versions": false, "about": "caf` + "\xc3\xa9" + ` \"q\" \t", "apiKey": TBD}]}`,
		"\u00a0{\u00a0\"name\"\u00a0:\"N\"} /* unterminated after the object",
		`{"name": "N", "about": "// not a comment /* nor this */", "x": {"apiKey": word}}`,
		`{}`,
	} {
		raw, ok := readFast([]byte(src), nil)
		if !ok {
			t.Errorf("readFast declined %s", src)
			continue
		}
		sameAsJSON(t, []byte(src), raw)
	}
}

// TestReadFastDeclines: what readFast cannot read as encoding/json would, it leaves to it, so
// Parse's errors stay encoding/json's.
func TestReadFastDeclines(t *testing.T) {
	for _, src := range []string{
		"Title of a KIP page\n{\"name\": \"N\"}",
		`{"n\u0061me": "N"}`,
		"{\"nam\xc3\xa9\": \"N\"}",
		`{"name": "N", "fields": [{"default": {}}]}`,
		`{"name": "N", "fields": [{"default": 1e400}]}`,
		`{"name": "N", "fields": [null]}`,
		`{"name": "N", "fields": [{"tag": "one"}]}`,
		`{"name": {}}`,
		`{"name": "N",}`,
		`{"name": "N" "type": "request"}`,
		`{"name": "N", "x": [1,]}`,
		`{"name": "N", "x": 01}`,
		`{"name": "N", "x": 1.}`,
		`{"name": "N", "x": "bad \x escape"}`,
		"{\"name\": \"a\tb\"}",
		`{"apikey": TBD, "name": "N"}`,
		`{"name": "N", "x": TBD}`,
		`{"name": "N", "x": tru}`,
		`{"name": "N" /* unterminated }`,
		`[{"name": "N"}]`,
		`null`,
		``,
	} {
		if raw, ok := readFast([]byte(src), nil); ok {
			t.Errorf("readFast read %s as %#v", src, raw)
		}
	}
}
