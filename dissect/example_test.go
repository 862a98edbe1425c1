package dissect_test

import (
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/render"
)

// A connection whose bytes come from elsewhere than a capture (a proxy, a pipe) goes through
// the same pipeline as a capture's connections: here an ApiVersions request, written in two
// pieces, and its response, shown as summary lines.
func ExamplePipeline_Stream() {
	set, err := schema.Embedded()
	if err != nil {
		fmt.Println(err)
		return
	}
	f, _ := render.LookupFormat("summary")
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: dissect.SelectAll()})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := dissect.NewCodec(set, plan, dissect.CodecOptions{})
	p, err := dissect.New(dissect.Config{Codec: c, Out: f.New(os.Stdout, render.Options{}), Plan: plan, Select: dissect.SelectAll()})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := p.Stream(netip.MustParseAddrPort("10.0.0.1:50000"), netip.MustParseAddrPort("10.0.0.2:9092"))
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	request := []byte{0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 5, 0, 0} // ApiVersions v0, correlation id 5
	response := []byte{0, 0, 0, 10, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0} // no error, no API keys
	s.Write(reassembly.ToServer, request[:6], 1, t)
	s.Write(reassembly.ToServer, request[6:], 2, t.Add(time.Millisecond))
	s.Write(reassembly.ToClient, response, 3, t.Add(3*time.Millisecond))
	s.Close()
	if err := p.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	//      2    0.001000   0 10.0.0.1:50000 -> 10.0.0.2:9092 Request  ApiVersions v0               corr 5      client ""  14 bytes
	//      3    0.003000   0 10.0.0.2:9092 -> 10.0.0.1:50000 Response ApiVersions v0               corr 5      answers #2 after 2.000 ms  14 bytes
}

// A run's plan follows from what its format reads and what the run asks: summaries read facts
// only, so their messages are decoded shallow and their frames lent; a display filter on
// message bodies reads whole trees, which must then be decoded and kept.
func ExampleNewPlan() {
	f, _ := render.LookupFormat("summary")
	sel := dissect.SelectAll()
	plain, _ := dissect.NewPlan(f, dissect.Asks{Select: sel})
	sel.Expr = "resp.ErrorCode != 0"
	filtered, _ := dissect.NewPlan(f, dissect.Asks{Select: sel})
	for _, p := range []dissect.Plan{plain, filtered} {
		fmt.Printf("records %s, shallow %v, lend %v, notes %v, spill over %d\n", p.Records, p.Shallow, p.Lend, p.Notes, p.SpillOver)
	}
	// Output:
	// records headers, shallow true, lend true, notes false, spill over 1048576
	// records full, shallow false, lend false, notes true, spill over 0
}
