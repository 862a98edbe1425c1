package render

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

// encoderEntries are two messages a second apart, the second a response.
func encoderEntries() []*model.Entry {
	t0 := time.Date(2026, 11, 29, 10, 0, 1, 234567000, time.UTC)
	req := &codec.Message{APIKey: 18, APIName: "ApiVersions", Version: 3, CorrelationID: 7, Size: 30,
		Fields: []*codec.Node{{Name: "ClientSoftwareName", Type: wire.CompactString, Offset: 14, Size: 4, Value: "kgo"},
			{Name: "TaggedBytes", Type: wire.Bytes, Offset: 18, Size: 5, Value: []byte("12345")}}}
	resp := &codec.Message{APIKey: 18, APIName: "ApiVersions", Version: 3, CorrelationID: 7, Size: 12, Response: true,
		Fields: []*codec.Node{{Name: "ErrorCode", Type: wire.Int16, Offset: 8, Size: 2, Value: int64(35)}}}
	return []*model.Entry{
		{Frame: 4, FirstFrame: 4, Time: t0, Stream: 1, Src: "10.0.0.1:50000", Dst: "10.0.0.2:9092", Msg: req, Request: true},
		{Frame: 6, FirstFrame: 6, Time: t0.Add(time.Second), Stream: 1, Src: "10.0.0.2:9092", Dst: "10.0.0.1:50000", Msg: resp,
			RequestFrame: 4, Latency: time.Second},
	}
}

// TestEncoderSameBytes: an Encoder writes, for each message, the bytes its renderer writes,
// and the renderer writes them out after what it wrote before; a renderer whose headings count
// from the previous message, or from a start not yet known, has none.
func TestEncoderSameBytes(t *testing.T) {
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		new   func(w *bytes.Buffer) Parallel
		start bool
		file  string
		none  bool
	}{
		{name: "json", new: func(w *bytes.Buffer) Parallel { return NewJSON(w) }},
		{name: "json file", new: func(w *bytes.Buffer) Parallel { return NewJSON(w) }, file: "a.pcap"},
		{name: "json cut", new: func(w *bytes.Buffer) Parallel { j := NewJSON(w); j.MaxBytes = 2; return j }},
		{name: "diagram", new: func(w *bytes.Buffer) Parallel { return NewDiagram(w, DiagramOptions{Hex: true}) }},
		{name: "diagram file", new: func(w *bytes.Buffer) Parallel { return NewDiagram(w, DiagramOptions{}) }, file: "a.pcap"},
		{name: "diagram -t r", new: func(w *bytes.Buffer) Parallel { return NewDiagram(w, DiagramOptions{Time: TimeRel}) }, start: true},
		{name: "diagram -t e", new: func(w *bytes.Buffer) Parallel { return NewDiagram(w, DiagramOptions{Time: TimeEpoch}) }},
		{name: "diagram -t r no start", new: func(w *bytes.Buffer) Parallel { return NewDiagram(w, DiagramOptions{Time: TimeRel}) }, none: true},
		{name: "diagram -t d", new: func(w *bytes.Buffer) Parallel { return NewDiagram(w, DiagramOptions{Time: TimeDelta}) }, start: true, none: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want, got bytes.Buffer
			direct, par := tc.new(&want), tc.new(&got)
			for _, r := range []Renderer{direct, par} {
				if s, ok := r.(StartSetter); ok && tc.start {
					s.SetStart(start)
				}
				if tc.file != "" {
					if err := r.(FileStarter).File(tc.file); err != nil {
						t.Fatal(err)
					}
				}
			}
			enc := par.Encoder()
			if enc == nil || tc.none {
				if (enc == nil) != tc.none {
					t.Fatalf("encoder %v, want none: %v", enc, tc.none)
				}
				return
			}
			direct.Flush()
			par.Flush()
			want.Reset()
			got.Reset()
			if err := par.WriteEncoded([]byte("before\n")); err != nil {
				t.Fatal(err)
			}
			var streamed bytes.Buffer
			for _, e := range encoderEntries() {
				if err := direct.Message(e); err != nil {
					t.Fatal(err)
				}
				if err := enc.WriteMessage(&streamed, e); err != nil {
					t.Fatal(err)
				}
			}
			if err := par.WriteEncoded(streamed.Bytes()); err != nil {
				t.Fatal(err)
			}
			direct.Close()
			par.Close()
			if streamed.String() != want.String() {
				t.Errorf("written by the encoder:\n%s\nby the renderer:\n%s", streamed.String(), want.String())
			}
			if w := "before\n" + want.String(); got.String() != w {
				t.Errorf("written out:\n%s\nwant:\n%s", got.String(), w)
			}
		})
	}
}

// Lines made on other goroutines by Encoders are written in order by the renderer.
func ExampleParallel() {
	out := NewJSON(os.Stdout)
	enc := out.Encoder() // one per goroutine
	var b bytes.Buffer
	for _, e := range encoderEntries() {
		enc.WriteMessage(&b, e)
	}
	out.WriteEncoded(b.Bytes())
	out.Close()
	// Output:
	// {"frame":4,"first_frame":4,"time":"2026-11-29T10:00:01.234567Z","stream":1,"src":"10.0.0.1:50000","dst":"10.0.0.2:9092","kind":"request","api_key":18,"api_name":"ApiVersions","api_version":3,"correlation_id":7,"size":30,"fields":[{"name":"ClientSoftwareName","type":"compact_string","offset":14,"size":4,"value":"kgo"},{"name":"TaggedBytes","type":"bytes","offset":18,"size":5,"value":"12345","encoding":"utf8"}],"warnings":[]}
	// {"frame":6,"first_frame":6,"time":"2026-11-29T10:00:02.234567Z","stream":1,"src":"10.0.0.2:9092","dst":"10.0.0.1:50000","kind":"response","api_key":18,"api_name":"ApiVersions","api_version":3,"correlation_id":7,"size":12,"request_frame":4,"latency_us":1000000,"errors":["UNSUPPORTED_VERSION"],"fields":[{"name":"ErrorCode","type":"int16","offset":8,"size":2,"value":35,"error":"UNSUPPORTED_VERSION"}],"warnings":[]}
}
