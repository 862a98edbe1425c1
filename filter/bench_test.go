package filter

import (
	"testing"
)

// BenchmarkMatch measures one pair's decision: a simple expression over the header and the
// latency, one that reads the facts, and one that reads a body (built for each pair).
func BenchmarkMatch(b *testing.B) {
	c := newCodec(b)
	req, resp := fetch(5, 10)
	p := pair(b, c, req, resp, 12)
	for _, tc := range []struct{ name, expr string }{
		{"header", `api == "Fetch" && latency_ms > 1`},
		{"no-match", `api == "Produce"`},
		{"topics", `"orders" in topics`},
		{"body", `api == "Fetch" && any(resp.Responses, any(.Partitions, .HighWatermark < .LogStartOffset))`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			f, err := Compile(tc.expr)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Match(p.req, p.resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompile measures compiling, which kdissect does once per run.
func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(`api == "Fetch" && any(resp.Responses, any(.Partitions, .HighWatermark < .LogStartOffset))`); err != nil {
			b.Fatal(err)
		}
	}
}
