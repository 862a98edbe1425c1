package render

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// TestTimeFormats: each -t format in summaries and diagram headings, for three messages whose
// times are known: the first packet at 10:00:00.5, messages 1.25 s and 1.5 s after it.
func TestTimeFormats(t *testing.T) {
	start := time.Date(2026, 11, 29, 10, 0, 0, 500000000, time.UTC)
	times := []time.Time{start.Add(1250 * time.Millisecond), start.Add(1500 * time.Millisecond), start.Add(1500*time.Millisecond + 7*time.Microsecond)}
	epoch := start.Unix() // 1795946400, from date -d '2026-11-29 10:00:00 UTC' +%s
	if epoch != 1795946400 {
		t.Fatalf("epoch of the start = %d", epoch)
	}
	tests := []struct {
		flag    string
		summary []string // the time column of each line
		heading []string // the time of each diagram heading
	}{
		{"", []string{"1.250000", "1.500000", "1.500007"},
			[]string{"2026-11-29 10:00:01.750000 UTC", "2026-11-29 10:00:02.000000 UTC", "2026-11-29 10:00:02.000007 UTC"}},
		{"ad", []string{"2026-11-29 10:00:01.750000", "2026-11-29 10:00:02.000000", "2026-11-29 10:00:02.000007"},
			[]string{"2026-11-29 10:00:01.750000 UTC", "2026-11-29 10:00:02.000000 UTC", "2026-11-29 10:00:02.000007 UTC"}},
		{"a", []string{"10:00:01.750000", "10:00:02.000000", "10:00:02.000007"},
			[]string{"10:00:01.750000 UTC", "10:00:02.000000 UTC", "10:00:02.000007 UTC"}},
		{"r", []string{"1.250000", "1.500000", "1.500007"},
			[]string{"1.250000 s since the first packet", "1.500000 s since the first packet", "1.500007 s since the first packet"}},
		{"d", []string{"0.000000", "0.250000", "0.000007"},
			[]string{"0.000000 s since the previous message", "0.250000 s since the previous message", "0.000007 s since the previous message"}},
		{"e", []string{"1795946401.750000", "1795946402.000000", "1795946402.000007"},
			[]string{"1795946401.750000 (epoch)", "1795946402.000000 (epoch)", "1795946402.000007 (epoch)"}},
	}
	for _, tt := range tests {
		f, err := ParseTimeFormat(tt.flag)
		if err != nil {
			t.Fatal(err)
		}
		if f.String() != tt.flag || (tt.flag == "") != (f == TimeDefault) {
			t.Errorf("%q: %d, String() = %q", tt.flag, f, f.String())
		}
		var sum, dia bytes.Buffer
		s, d := NewSummary(&sum, f), NewDiagram(&dia, DiagramOptions{Time: f})
		s.SetStart(start)
		d.SetStart(start)
		for i, tm := range times {
			e := &model.Entry{Frame: i + 1, Time: tm, Stream: 4, Src: "a:1", Dst: "b:2", Request: true,
				Msg: &codec.Message{APIKey: 18, APIName: "ApiVersions", Size: 10}}
			if err := s.Message(e); err != nil {
				t.Fatal(err)
			}
			if err := d.Message(e); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		d.Close()
		lines := strings.Split(strings.TrimSpace(sum.String()), "\n")
		for i, l := range lines {
			fields := strings.Fields(l)
			// packet, time (one or two words), stream, endpoints
			got := fields[1]
			if tt.flag == "ad" {
				got += " " + fields[2]
			}
			if got != tt.summary[i] {
				t.Errorf("-t %q summary line %d: time %q, want %q\n%s", tt.flag, i, got, tt.summary[i], l)
			}
			if !strings.Contains(l, " 4 a:1 -> b:2 ") {
				t.Errorf("-t %q summary line %d: no stream column before the endpoints: %s", tt.flag, i, l)
			}
		}
		var heads []string
		for _, l := range strings.Split(dia.String(), "\n") {
			if strings.HasPrefix(l, "#") {
				heads = append(heads, l)
			}
		}
		for i, h := range heads {
			want := "#" + string(rune('1'+i)) + "  " + tt.heading[i] + "  a:1 -> b:2  stream 4"
			if h != want {
				t.Errorf("-t %q heading %d:\n%s, want\n%s", tt.flag, i, h, want)
			}
		}
	}
	if _, err := ParseTimeFormat("x"); err == nil {
		t.Error("-t x accepted")
	}
}

// TestSecondsAndLatency: the times and latencies written from integer microseconds are those
// the floats gave, for durations at and around every rounding edge, over the range where
// integers are used and past it.
func TestSecondsAndLatency(t *testing.T) {
	var ds []time.Duration
	rng := rand.New(rand.NewPCG(3, 4))
	for _, base := range []time.Duration{0, time.Second, 451780 * time.Microsecond, 1<<20*time.Second - time.Microsecond,
		1 << 20 * time.Second, 30 * 24 * time.Hour, 1e15 * time.Microsecond, math.MaxInt64 - 2000} {
		for _, off := range []time.Duration{0, 1, 499, 500, 501, 999, 1000, 1500, 999_999_500, 999_999_501} {
			ds = append(ds, base+off, -(base + off))
		}
	}
	for range 100000 {
		ds = append(ds, time.Duration(rng.Int64N(int64(48*time.Hour))), time.Duration(rng.Int64N(2e6)), time.Duration(rng.Int64())-math.MaxInt64/2)
	}
	for _, d := range ds {
		if got, want := string(appendSeconds(nil, d)), strconv.FormatFloat(d.Seconds(), 'f', 6, 64); got != want {
			t.Fatalf("appendSeconds(%d ns) = %s, want %s", d, got, want)
		}
		if got, want := FormatLatency(d), strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64)+" ms"; got != want {
			t.Fatalf("FormatLatency(%d ns) = %s, want %s", d, got, want)
		}
	}
}
