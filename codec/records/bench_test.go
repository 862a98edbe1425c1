package records

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// benchRecords are n records of about 100 bytes: a key and a value of log-line-like text.
func benchRecords(n int) []kmsg.Record {
	rs := make([]kmsg.Record, n)
	for i := range rs {
		rs[i] = kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i),
			Key:   fmt.Appendf(nil, "user-%05d", i*7919%100000),
			Value: fmt.Appendf(nil, `{"ts":%d,"level":"info","msg":"request served","path":"/api/v1/items/%d","ms":%d}`, 1795946401234+int64(i), i*31%977, i%250)}
	}
	return rs
}

// BenchmarkDecode decodes a batch of 1000 records of ~100 bytes in each codec. Throughput is
// counted in uncompressed batch bytes.
func BenchmarkDecode(b *testing.B) {
	recs := benchRecords(1000)
	plain, _ := batchSpec{baseTimestamp: t0, codec: "none", records: recs}.build(b)
	for _, c := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		b.Run(c, func(b *testing.B) {
			data, _ := batchSpec{baseTimestamp: t0, codec: c, records: recs}.build(b)
			d := New(Options{})
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ws := d.DecodeRecords(data, 0, nil); len(ws) > 0 {
					b.Fatal(ws)
				}
			}
			b.ReportMetric(float64(len(recs)*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
