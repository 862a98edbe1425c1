package dissect

import (
	"bytes"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/render"
)

// summaryLine is a line of a summary: a message or a notice.
type summaryLine struct {
	index, frame, stream int
	notice               bool
	server               string // the broker's address, of a message line
	text                 string // a notice's text, from "! " on
}

// detectedPort reads the port of a "port N taken as Kafka" notice ("" for other notices).
var detectedPort = regexp.MustCompile(`^! port ([0-9]+) taken as Kafka`)

// noticeLines reads the message and notice lines of a summary (not the warnings under a
// message, nor the file headers).
func noticeLines(t *testing.T, out string) []summaryLine {
	t.Helper()
	var ls []summaryLine
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 7 {
			continue
		}
		frame, err1 := strconv.Atoi(f[0])
		stream, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			continue
		}
		s := summaryLine{index: len(ls), frame: frame, stream: stream, notice: f[6] == "!"}
		if s.notice {
			s.text = l[strings.Index(l, " ! ")+1:]
		} else if f[6] == "Request" {
			s.server = f[5]
		} else {
			s.server = f[3]
		}
		ls = append(ls, s)
	}
	return ls
}

// TestNoticesUnderFilters: under each kind of filter, a capture's notices are shown when their
// connection shows a message, before its first one, the port taken as Kafka once, and the
// others are counted as left out; --stream alone shows its connection's notices. The output is
// the same with one worker and three.
func TestNoticesUnderFilters(t *testing.T) {
	filters := []struct {
		name string
		sel  func(s *Selection)
	}{
		{"--errors", func(s *Selection) { s.Errors = true }},
		{"--api Produce", func(s *Selection) { s.APIs = []string{"Produce"} }},
		{"--api Fetch,Metadata", func(s *Selection) { s.APIs = []string{"Fetch", "Metadata"} }},
		{"-Y", func(s *Selection) { s.Expr = `api_name == "Metadata" || client_id == "kdissect-stream-consumer"` }},
		{"--topic", func(s *Selection) { s.Topic = "orders" }},
		{"--group", func(s *Selection) { s.Group = "*long*" }},
		{"--client-id", func(s *Selection) { s.ClientID = "kdissect-odd-ports-*" }},
		{"--min-latency", func(s *Selection) { s.MinLatency = 300 * time.Microsecond }},
		{"--correlation-id", func(s *Selection) { s.CorrelationID = 2 }},
		{"--requests", func(s *Selection) { s.Requests = true }},
		{"--stream", func(s *Selection) { s.Stream = 1 }},
	}
	files := []string{"kgo-filters.pcap", "kgo-midstream.pcap", "kgo-odd-ports.pcap", "kgo-tls12.pcap"}
	shown, leftOut := 0, 0 // over the whole table: the captures must give both to see
	for _, file := range files {
		all, _ := testRun{format: "summary", workers: 1}.mustDissect(t, pcapPath(file))
		unfiltered := noticeLines(t, all)
		for _, fl := range filters {
			var outs []string
			var counts [][2]int
			for _, workers := range []int{1, 3} {
				var out, errOut bytes.Buffer
				p, _ := testRun{format: "summary", workers: workers, sel: fl.sel}.pipeline(t, &out, &errOut, Config{})
				if _, err := p.File(pcapPath(file)); err != nil {
					t.Fatal(err)
				}
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
				quiet, crowded := p.NoticesLeftOut()
				outs, counts = append(outs, out.String()), append(counts, [2]int{quiet, crowded})
			}
			if outs[0] != outs[1] || counts[0] != counts[1] {
				a, b := clip(outs[0], outs[1])
				t.Errorf("%s %s: one worker and three differ: %v %v\n%s\n%s", file, fl.name, counts[0], counts[1], a, b)
			}
			got := noticeLines(t, outs[0])
			checkNotices(t, file+" "+fl.name, unfiltered, got, counts[0], fl.name == "--stream")
			for _, l := range got {
				if l.notice && !strings.Contains(l.text, "TLS") {
					shown++
				}
			}
			leftOut += counts[0][0]
		}
	}
	if shown == 0 || leftOut == 0 {
		t.Errorf("%d notices shown, %d left out: the test sees nothing", shown, leftOut)
	}
}

// checkNotices compares the notices a filter shows with those of the unfiltered run.
func checkNotices(t *testing.T, name string, unfiltered, got []summaryLine, leftOut [2]int, byStream bool) {
	t.Helper()
	first := map[int]summaryLine{} // each connection's first message shown
	servers := map[string]bool{}
	for _, l := range got {
		if _, ok := first[l.stream]; !l.notice && !ok {
			first[l.stream] = l
			servers[l.server[strings.LastIndex(l.server, ":")+1:]] = true
		}
	}
	if byStream {
		first[1] = summaryLine{index: len(got)} // its notices are shown whether it shows a message or not
	}
	// What the unfiltered run says: the notices of each connection, and the ports taken.
	want := map[int][]string{}
	var detected []string
	quiet := 0
	for _, l := range unfiltered {
		if !l.notice {
			continue
		}
		if m := detectedPort.FindStringSubmatch(l.text); m != nil {
			detected = append(detected, m[1])
			continue
		}
		if _, shown := first[l.stream]; shown {
			want[l.stream] = append(want[l.stream], l.text)
		} else if !byStream {
			quiet++
		}
	}
	gotNotices := map[int][]string{}
	var gotPorts []string
	for _, l := range got {
		if !l.notice {
			continue
		}
		f, ok := first[l.stream]
		if !ok {
			t.Errorf("%s: a notice of connection %d, which shows no message: %s", name, l.stream, l.text)
			continue
		}
		if l.frame <= f.frame && l.index > f.index {
			t.Errorf("%s: packet %d's notice comes after connection %d's first message, of packet %d", name, l.frame, l.stream, f.frame)
		}
		if m := detectedPort.FindStringSubmatch(l.text); m != nil {
			gotPorts = append(gotPorts, m[1])
			continue
		}
		gotNotices[l.stream] = append(gotNotices[l.stream], l.text)
	}
	for s, w := range want {
		if !slices.Equal(gotNotices[s], w) {
			t.Errorf("%s: connection %d's notices are %q, want %q", name, s, gotNotices[s], w)
		}
	}
	// Each port taken is said once, by a connection showing a message, when one on it does.
	var wantPorts []string
	for _, port := range detected {
		if servers[port] && !byStream {
			wantPorts = append(wantPorts, port)
		} else if !byStream {
			quiet++
		}
	}
	// (in the order their connections show messages, not in the order they were taken)
	slices.Sort(gotPorts)
	slices.Sort(wantPorts)
	if !byStream && !slices.Equal(gotPorts, wantPorts) {
		t.Errorf("%s: ports taken as Kafka said %v, want %v", name, gotPorts, wantPorts)
	}
	if !byStream && leftOut != [2]int{quiet, 0} {
		t.Errorf("%s: %v notices left out, want %d", name, leftOut, quiet)
	}
	if byStream && leftOut != [2]int{} {
		t.Errorf("%s: --stream left notices out: %v", name, leftOut)
	}
}

// TestNoticesHeldBounded: a connection holds at most MaxHeldNotices notices before its first
// message shown; the others are counted, and so are those of a connection that shows none.
func TestNoticesHeldBounded(t *testing.T) {
	var out bytes.Buffer
	sel := SelectAll()
	sel.CorrelationID = 100
	p, err := New(Config{Codec: newCodec(t), Out: render.NewSummary(&out, render.TimeRel), Plan: planOf(t, render.Needs{Facts: true}, sel), Select: sel})
	if err != nil {
		t.Fatal(err)
	}
	client, server := netip.MustParseAddrPort("10.0.0.1:50000"), netip.MustParseAddrPort("10.0.0.2:9092")
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pkt := 0
	lossy := func(s *Stream, losses int, last int32) {
		req := slices.Clone(apiVersionsRequest)
		for i := range losses {
			req[11] = byte(i)
			pkt++
			s.Write(reassembly.ToServer, req, pkt, start.Add(time.Duration(pkt)*time.Millisecond))
			pkt++
			s.Lost(reassembly.ToServer, 100, pkt, start.Add(time.Duration(pkt)*time.Millisecond))
		}
		req[11] = byte(last)
		pkt++
		s.Write(reassembly.ToServer, req, pkt, start.Add(time.Duration(pkt)*time.Millisecond))
		s.Close()
	}
	const many, few = MaxHeldNotices + 4, 3
	lossy(p.Stream(client, server), many, 100)
	lossy(p.Stream(client, server), few, 99)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	lines := noticeLines(t, out.String())
	notices := 0
	for _, l := range lines {
		if l.notice {
			notices++
		}
	}
	if notices != MaxHeldNotices || len(lines) != MaxHeldNotices+1 || lines[len(lines)-1].notice {
		t.Errorf("%d notices, %d lines; want %d notices, then the request:\n%s", notices, len(lines), MaxHeldNotices, out.String())
	}
	if quiet, crowded := p.NoticesLeftOut(); quiet != few || crowded != many-MaxHeldNotices {
		t.Errorf("left out: %d quiet, %d crowded; want %d, %d", quiet, crowded, few, many-MaxHeldNotices)
	}
}

// noticesSeen records the notices a renderer is told of.
type noticesSeen struct {
	render.Renderer
	notices *[]model.Notice
}

func (r noticesSeen) Notice(n *model.Notice) error {
	*r.notices = append(*r.notices, *n)
	return r.Renderer.Notice(n)
}

// TestOnNotice: Config.OnNotice is told of exactly the notices the output is, in the same
// order, under a filter that holds notices or not, with one worker or three.
func TestOnNotice(t *testing.T) {
	for _, tc := range []struct {
		name string
		sel  func(s *Selection)
	}{
		{"kgo-tls13.pcap", nil},
		{"kgo-midstream.pcap", nil},
		{"kgo-odd-ports.pcap", nil},
		{"kgo-midstream.pcap", func(s *Selection) { s.APIs = []string{"Fetch"} }},
		{"kgo-tls13.pcap", func(s *Selection) { s.Errors = true }},
	} {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%v/%d", tc.name, tc.sel != nil, workers), func(t *testing.T) {
				var shown, told []model.Notice
				r := testRun{format: "none", sel: tc.sel, workers: workers,
					wrap: func(out render.Renderer) render.Renderer { return noticesSeen{out, &shown} }}
				var out, errOut bytes.Buffer
				p, _ := r.pipeline(t, &out, &errOut, Config{OnNotice: func(n *model.Notice) { told = append(told, *n) }})
				if _, err := p.File(pcapPath(tc.name)); err != nil {
					t.Fatal(err)
				}
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
				if len(shown) == 0 && tc.sel == nil {
					t.Fatalf("%s shows no notice", tc.name)
				}
				if !slices.Equal(told, shown) {
					t.Errorf("OnNotice told of %d notices, the output of %d:\n%v\n%v", len(told), len(shown), told, shown)
				}
			})
		}
	}
}
