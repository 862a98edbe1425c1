package filter

import "testing"

// FuzzCompile: any expression is compiled or refused, and a compiled one decides on a pair,
// without a panic.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		`api == "Fetch" && latency_ms > 1`, `"orders" in topics`, `req.Acks == 0`, `len(errors) > 0`,
		`any(resp.Responses, any(.Partitions, .HighWatermark < .LogStartOffset))`, `req.X[3].Y >= resp.Z`,
		`filter(req.Topics, .Name matches "^o")[0].Name == "orders"`, `time > date("2026-11-29T10:00:00Z")`,
	} {
		f.Add(s)
	}
	c := newCodec(f)
	req, resp := fetch(5, 10)
	p := pair(f, c, req, resp, 12)
	f.Fuzz(func(t *testing.T, src string) {
		flt, err := Compile(src)
		if err != nil {
			return
		}
		flt.Match(p.req, p.resp)
		flt.Match(p.req, nil)
		flt.Match(nil, p.resp)
	})
}
