package main

// The selection itself is tested in package dissect (find_test.go), through its API; here, that
// the flags make the selection they name, and that bad ones are refused.

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/dissect"
)

func pcap(name string) string { return filepath.Join("..", "..", "pcaps", name) }

// TestSelectionFlags: each selection flag sets its field of dissect.Selection, lists and
// repeated flags add up, and nothing given selects every message.
func TestSelectionFlags(t *testing.T) {
	all := dissect.SelectAll()
	with := func(set func(s *dissect.Selection)) dissect.Selection {
		s := dissect.SelectAll()
		set(&s)
		return s
	}
	for _, tt := range []struct {
		args []string
		want dissect.Selection
	}{
		{nil, all},
		{[]string{"--api", "Fetch"}, with(func(s *dissect.Selection) { s.APIs = []string{"Fetch"} })},
		{[]string{"--api", "heartbeat", "--api", "11"}, with(func(s *dissect.Selection) { s.APIs = []string{"heartbeat", "11"} })},
		{[]string{"--api", "Metadata,22"}, with(func(s *dissect.Selection) { s.APIs = []string{"Metadata", "22"} })},
		{[]string{"--topic", "*-ord?rs", "--group", "g*", "--client-id", "c"}, with(func(s *dissect.Selection) { s.Topic, s.Group, s.ClientID = "*-ord?rs", "g*", "c" })},
		{[]string{"--errors", "--requests", "--stats"}, with(func(s *dissect.Selection) { s.Errors, s.Requests, s.Stats = true, true, true })},
		{[]string{"--responses"}, with(func(s *dissect.Selection) { s.Responses = true })},
		{[]string{"--min-latency", "347us"}, with(func(s *dissect.Selection) { s.MinLatency = 347 * time.Microsecond })},
		{[]string{"--min-latency", "50ms"}, with(func(s *dissect.Selection) { s.MinLatency = 50 * time.Millisecond })},
		{[]string{"--correlation-id", "0", "--stream", "8"}, with(func(s *dissect.Selection) { s.CorrelationID, s.Stream = 0, 8 })},
		{[]string{"-Y", `api == "Fetch"`}, with(func(s *dissect.Selection) { s.Expr = `api == "Fetch"` })},
		{[]string{"--display-filter", "len(errors) > 0"}, with(func(s *dissect.Selection) { s.Expr = "len(errors) > 0" })},
	} {
		fs, o := captureFlags()
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(o.Select, tt.want) {
			t.Errorf("%q: selection %+v, want %+v", tt.args, o.Select, tt.want)
		}
		fs, lo := liveFlags()
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(lo.sel, tt.want) {
			t.Errorf("live %q: selection %+v, want %+v", tt.args, lo.sel, tt.want)
		}
	}
}

// TestFilterErrors checks that bad selection flags are refused.
func TestFilterErrors(t *testing.T) {
	file := pcap("kgo-produce-fetch.pcap")
	for _, args := range [][]string{
		{"--requests", "--responses"},
		{"--topic", "[bad"},
		{"--group", "[bad"},
		{"--client-id", "[bad"},
		{"--api", "NoSuchApi"},
		{"--api", "40000"},
	} {
		out, errOut, code := kdissect(t, append(args, file)...)
		if code != 2 || out != "" || !strings.Contains(errOut, "kdissect: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and an error", args, code, out, errOut)
		}
	}
}
