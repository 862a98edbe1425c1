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
	c, err := dissect.NewCodec(set, f, dissect.CodecOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := dissect.New(dissect.Config{Codec: c, Out: f.New(os.Stdout, render.Options{}), Needs: f.Needs, Select: dissect.SelectAll()})
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
