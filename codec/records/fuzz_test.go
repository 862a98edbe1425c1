package records

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzRecords feeds arbitrary records fields to the decoder: no panic, and the nodes stay
// within the data and tile it.
func FuzzRecords(f *testing.F) {
	for _, c := range allCodecs {
		data, _ := batchSpec{baseOffset: 5, baseTimestamp: t0, codec: c, records: headerRecords()}.build(f)
		f.Add(data)
	}
	ctrl, _ := batchSpec{baseOffset: 9, baseTimestamp: t0, attrs: 0x30, codec: "none", records: []kmsg.Record{marker(0, true)}}.build(f)
	f.Add(ctrl)
	for _, c := range []string{"none", "gzip", "snappy", "lz4"} {
		v0, _ := messageSet(f, 0, c, 1, 0, 0, []kv{{nil, []byte("a")}, {[]byte("k"), nil}})
		v1, _ := messageSet(f, 1, c, 1, t0, 0, []kv{{nil, []byte("a")}, {[]byte("k"), nil}})
		f.Add(append(v0, v1...))
	}
	d := New(Options{MaxDecompressed: 1 << 20})
	f.Fuzz(func(t *testing.T, data []byte) {
		const base = 50
		nodes, _ := d.DecodeRecords(data, base, nil)
		if err := checkTiling(nodes, base, base+len(data), false); err != nil {
			t.Fatal(err)
		}
	})
}
