package flight

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/filter"
	"github.com/kdissect/kdissect/internal/rotate"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// pair returns the request and response of correlation id corr, on stream corr%3, the
// response at the given second.
func pair(corr int32, at int) (req, resp *model.Entry) {
	t := time.Unix(int64(at), 0)
	req = &model.Entry{Request: true, Stream: int(corr % 3), Time: t.Add(-time.Millisecond), Frame: 2 * at,
		Msg: &codec.Message{APIKey: 3, APIName: "Metadata", Version: 12, CorrelationID: corr}}
	resp = &model.Entry{Stream: int(corr % 3), Time: t, Frame: 2*at + 1,
		Msg: &codec.Message{Response: true, APIKey: 3, APIName: "Metadata", Version: 12, CorrelationID: corr}}
	return req, resp
}

// saved is a file the recorder wrote: its comment and its packets' times, in seconds.
type saved struct {
	comment string
	times   []int
}

func readSaved(t *testing.T, path string) saved {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatal(err)
	}
	s := saved{comment: r.SectionInfo().Comment}
	for {
		_, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return s
		}
		if err != nil {
			t.Fatal(err)
		}
		s.times = append(s.times, int(ci.Timestamp.Unix()))
	}
}

func TestRecorder(t *testing.T) {
	tests := []struct {
		name   string
		expr   string
		after  time.Duration
		max    int
		pairs  int
		want   int    // files
		wantIn string // in the first file's comment
	}{
		{name: "one match", expr: "corr == 42", after: time.Hour, pairs: 100, want: 1, wantIn: "correlation id 42, packet 169"},
		{name: "no match", expr: "corr == 1000", after: time.Hour, pairs: 100, want: 0},
		{name: "matches while a file waits share it", expr: "corr % 10 == 0", after: time.Hour, pairs: 100, want: 1,
			wantIn: "correlation id 10,"},
		{name: "at most max files", expr: "corr % 10 == 0", pairs: 100, max: 3, want: 3},
		{name: "requests without a response", expr: "kind == 'request' && no_response", after: time.Hour, pairs: 10, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ring := NewRing(1 << 16)
			for s := 0; s <= 200; s++ {
				ring.Packet(gopacketInfo(s), layers.LinkTypeEthernet, []byte{byte(s)})
			}
			expr, err := filter.Compile(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			dir := &rotate.Dir{Path: t.TempDir(), Prefix: "kafka-h-", Ext: ".pcapng"}
			var paths, warned []string
			r := NewRecorder(Config{Ring: ring, Expr: expr, Before: 5 * time.Second, After: tt.after, MaxPerHour: tt.max,
				Dir: dir, Iface: "lo", Warn: func(err error) { warned = append(warned, err.Error()) },
				Saved: func(p string) { paths = append(paths, p) }}, render.Discard{})
			for c := int32(1); c <= int32(tt.pairs); c++ {
				req, resp := pair(c, 2*int(c))
				r.Message(req)
				r.Message(resp)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			files, err := dir.Files()
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != tt.want || len(paths) != tt.want {
				t.Fatalf("%d files (%d said saved), want %d; warned %q", len(files), len(paths), tt.want, warned)
			}
			if tt.max > 0 && (len(warned) != 1 || !strings.Contains(warned[0], "--save-max 3")) {
				t.Errorf("warned %q, want --save-max said once", warned)
			}
			if tt.want == 0 {
				return
			}
			s := readSaved(t, filepath.Join(dir.Path, files[0].Name))
			if !strings.Contains(s.comment, tt.wantIn) || !strings.Contains(s.comment, tt.expr) {
				t.Errorf("comment %q lacks %q", s.comment, tt.wantIn)
			}
			// The file holds the ring's packets from Before the match to After it.
			at := files[0].Start
			if tt.after == time.Hour && (len(s.times) == 0 || s.times[0] != int(at.Unix())-5 || s.times[len(s.times)-1] != 200) {
				t.Errorf("packets at %v, want from %d to the last", s.times, at.Unix()-5)
			}
		})
	}
}

func gopacketInfo(s int) gopacket.CaptureInfo {
	return gopacket.CaptureInfo{Timestamp: time.Unix(int64(s), 0), CaptureLength: 1, Length: 1}
}
