package records

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testutil"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var update = flag.Bool("update", false, "regenerate testdata/*.bin from code and rewrite the golden files")

// fixtures builds the records fields kept in testdata/: `go test -run TestGolden -update`
// regenerates them; otherwise the stored bytes are decoded, so that a change in the
// compression libraries cannot move the goldens.
func fixtures(t *testing.T) map[string][]byte {
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	first := func(b []byte, _ []want) []byte { return b }
	plain := first(batchSpec{baseOffset: 7, baseTimestamp: t0, codec: "none", records: headerRecords()[:2]}.build(t))
	v0lz4, _ := kafka09LZ4(t)
	return map[string][]byte{
		"v2-headers":        plain,
		"v2-gzip-nulls":     first(batchSpec{baseOffset: 100, baseTimestamp: t0, codec: "gzip", producerID: 9, producerEpoch: 1, records: nullRecords()}.build(t)),
		"v2-control":        first(batchSpec{baseOffset: 12, baseTimestamp: t0, attrs: 0x30, codec: "none", producerID: 9, records: []kmsg.Record{marker(0, true)}}.build(t)),
		"v1-snappy-wrapper": first(messageSet(t, 1, "xerial", 30, t0, 0, []kv{{nil, []byte("a")}, {[]byte("k"), []byte("b")}})),
		"v0-lz4-kafka09":    v0lz4,
		"fetch-partial":     cat(plain, plain[:40]),
	}
}

// TestGolden decodes the fixtures and compares the node trees and warnings with the goldens.
func TestGolden(t *testing.T) {
	if *update {
		for name, data := range fixtures(t) {
			if err := os.WriteFile(filepath.Join("testdata", name+".bin"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.bin"))
	if len(files) == 0 {
		t.Fatal("no fixtures in testdata/; run go test -run TestGolden -update")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".bin")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			nodes, ws := decode(t, New(Options{}), data)
			got := dump(nodes)
			if len(ws) > 0 {
				got += "warnings:\n" + warnings(ws) + "\n"
			}
			golden := strings.TrimSuffix(file, ".bin") + ".golden"
			testutil.Golden(t, golden, []byte(got), *update)
		})
	}
}
