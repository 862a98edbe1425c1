package filter_test

import (
	"fmt"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/filter"
	"github.com/kdissect/kdissect/model"
)

// A display filter is compiled once, refused with the library's message and position when it
// is wrong, and asked about each request/response pair.
func ExampleFilter_Match() {
	if _, err := filter.Compile(`api == "Fetch" && latency_ms >`); err != nil {
		fmt.Println(err)
	}
	f, err := filter.Compile(`api == "Fetch" && latency_ms > 100`)
	if err != nil {
		fmt.Println(err)
		return
	}
	t := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	req := &model.Entry{Frame: 12, Time: t, Request: true, Msg: &codec.Message{APIKey: 1, APIName: "Fetch", Version: 17, CorrelationID: 9}}
	resp := &model.Entry{Frame: 15, Time: t.Add(501 * time.Millisecond), Msg: &codec.Message{Response: true, APIKey: 1, APIName: "Fetch", Version: 17, CorrelationID: 9},
		RequestFrame: 12, Latency: 501 * time.Millisecond}
	ok, err := f.Match(req, resp)
	fmt.Println(ok, err)
	ok, err = f.Match(req, nil) // no response in the capture: no latency
	fmt.Println(ok, err)
	// Output:
	// unexpected token EOF (1:30)
	//  | api == "Fetch" && latency_ms >
	//  | .............................^
	// true <nil>
	// false <nil>
}
