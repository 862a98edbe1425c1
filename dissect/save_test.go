package dissect

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/pcaps"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/render"
)

// savedMessages are the JSON lines of the messages in out, without what a file cut down to them
// numbers otherwise (packets, connections): their kind, API, correlation id, endpoints, times,
// latency, fields and warnings, sorted. A filter shows a request when its response decides the
// pair, so the order of the lines is not compared.
func savedMessages(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m["kind"] != "request" && m["kind"] != "response" {
			continue
		}
		for _, k := range []string{"frame", "first_frame", "request_frame", "stream"} {
			delete(m, k)
		}
		dropNames(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	slices.Sort(lines)
	return lines
}

// dropNames removes the names of topic ids from a line: the notes and the "topic" of uuid
// fields, and a "topic" beside a "topic_id". The names come from Metadata responses that the
// file need not hold.
func dropNames(v any) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			dropNames(e)
		}
	case map[string]any:
		if v["type"] == "uuid" {
			delete(v, "note")
			delete(v, "topic")
		}
		if _, ok := v["topic_id"]; ok {
			delete(v, "topic")
		}
		for _, e := range v {
			dropNames(e)
		}
	}
}

func packetsIn(t *testing.T, file string) int {
	t.Helper()
	r, err := capture.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err != nil {
			return r.Stats().Packets
		}
	}
}

// TestSave: a file written with -w, read back by kdissect, with -p or finding Kafka by itself,
// shows the messages the run that wrote it showed, the same in every field; tshark reads it
// without an error and finds its Kafka messages where kdissect does; and with a filter it holds
// few of the capture's packets.
func TestSave(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		run        testRun
		// most is the largest share of the capture's packets the file may hold.
		most float64
		// again: the file is read back with the same selection (TLS: the file holds every
		// record of the connection up to the last message shown, for decryption).
		again bool
	}{
		// Frames of 60 KB to 120 KB in several segments, and the acks=0 Produce requests.
		{"payments", "kgo-filters.pcap", testRun{sel: func(s *Selection) { s.Topic = "payments" }}, 0.3, false},
		{"big", "kgo-filters.pcap", testRun{sel: func(s *Selection) { s.Expr = `size > 50000` }}, 0.2, false},
		{"acks0", "kgo-filters.pcap", testRun{sel: func(s *Selection) { s.Expr = `api == "Produce" && req.Acks == 0` }}, 0.1, false},
		{"groups", "kgo-group-3brokers.pcap", testRun{sel: func(s *Selection) { s.APIs = []string{"JoinGroup", "SyncGroup", "Heartbeat"} }}, 0.5, false},
		// No SYN: connections that were busy before the capture started.
		{"midstream", "kgo-midstream.pcap", testRun{sel: func(s *Selection) { s.APIs = []string{"Fetch"} }}, 0.9, false},
		{"limit", "kgo-produce-fetch.pcap", testRun{limit: 7}, 0.3, false},
		{"all", "kgo-codecs.pcap", testRun{}, 1, false},
		{"sharded", "kgo-group-3brokers.pcap", testRun{workers: 3, perRound: 7, sel: func(s *Selection) { s.Errors = true }}, 0.5, false},
		{"tls", "kgo-tls13.pcap", testRun{keylog: pcapPath("kgo-tls13.keylog"), sel: func(s *Selection) { s.APIs = []string{"Fetch"} }}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := pcapPath(tc.file)
			saved := filepath.Join(t.TempDir(), "saved.pcapng")
			r := tc.run
			r.format, r.ports, r.save = "json", pcaps.Ports, saved
			out, _ := r.mustDissect(t, file)
			want := savedMessages(t, out)
			if len(want) == 0 {
				t.Fatal("the case shows no message")
			}
			if tc.run.limit > 0 && len(want) != tc.run.limit {
				t.Errorf("%d messages shown, want -c %d", len(want), tc.run.limit)
			}
			total, written := packetsIn(t, file), packetsIn(t, saved)
			if float64(written) > tc.most*float64(total) {
				t.Errorf("%d of the capture's %d packets written, more than %.0f%%", written, total, 100*tc.most)
			}
			for _, back := range []testRun{{ports: pcaps.Ports}, {}} {
				back.format, back.keylog = "json", tc.run.keylog
				if tc.again {
					back.sel = tc.run.sel
				}
				got, errOut := back.mustDissect(t, saved)
				if g := savedMessages(t, got); strings.Join(g, "\n") != strings.Join(want, "\n") {
					a, b := clip(strings.Join(want, "\n"), strings.Join(g, "\n"))
					t.Errorf("read back (ports %q): %d messages, want %d:\nwant %s\n got %s\n%s", back.ports, len(g), len(want), a, b, errOut)
				}
			}
			t.Logf("%d messages, %d of %d packets", len(want), written, total)
			if _, err := exec.LookPath("tshark"); err != nil && os.Getenv("CI") == "" {
				return
			}
			needTshark(t)
			if out, err := exec.Command("tshark", "-r", saved, "-n").CombinedOutput(); err != nil {
				t.Fatalf("tshark -r: %v: %s", err, out)
			}
			if tc.run.keylog == "" {
				back, _ := testRun{format: "json", ports: pcaps.Ports}.mustDissect(t, saved)
				if checked, _ := compareTshark(t, saved, back); checked == 0 {
					t.Error("tshark finds no Kafka message in the file")
				}
			}
		})
	}
}

// TestSaveNothing: a run that shows nothing still leaves a pcapng file that readers open.
func TestSaveNothing(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "saved.pcapng")
	r := testRun{format: "summary", ports: pcaps.Ports, save: saved, sel: func(s *Selection) { s.Expr = `api == "Nope"` }}
	if out, _ := r.mustDissect(t, pcapPath("kgo-produce-fetch.pcap")); strings.TrimSpace(out) != "" {
		t.Fatalf("shown: %s", out)
	}
	if n := packetsIn(t, saved); n != 0 {
		t.Errorf("%d packets written", n)
	}
}

// TestLimitFiles: -c on capture files stops reading once the messages are shown, in one
// goroutine and over shards, and a stopped pipeline reads no more of a later file. Rounds are
// small, so that those read ahead of the merge (up to lentRoundsInFlight) are a small part of
// the file.
func TestLimitFiles(t *testing.T) {
	file := pcapPath("kgo-group-3brokers.pcap")
	total := packetsIn(t, file)
	for _, workers := range []int{1, 3} {
		f, c := formatCodec(t, "summary", false)
		ports, err := capture.ParsePorts([]string{pcaps.Ports})
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		p, err := New(Config{Codec: c, Out: f.New(&out, render.Options{}), Plan: planOf(t, f.Needs, SelectAll()), Select: SelectAll(),
			IsServerPort: ports.Has, Limit: 3, Workers: workers, RoundPackets: 4})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := p.File(file); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		shown, _ := p.Shown()
		read := p.Seen().Packets
		lines := strings.Count(out.String(), " Request ") + strings.Count(out.String(), " Response ")
		if shown != 3 || lines != 3 || !p.Stopped() || read >= total/2 {
			t.Errorf("workers %d: %d shown, %d packets read of %d (and of a second file):\n%s", workers, shown, read, total, out.String())
		}
	}
}

// TestCreateSave: a Save made by CreateSave writes a pcapng file that Close closes; a capture
// being read is refused, and left as it is.
func TestCreateSave(t *testing.T) {
	in := pcapPath("kgo-produce-fetch.pcap")
	before, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreateSave(in, []string{pcapPath("kgo-codecs.pcap"), in}); !errors.Is(err, ErrSavingInput) {
		t.Errorf("saving to a capture being read: %v, want ErrSavingInput", err)
	}
	if after, err := os.ReadFile(in); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the capture changed (%v)", err)
	}
	name := filepath.Join(t.TempDir(), "saved.pcapng")
	s, err := CreateSave(name, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.file.(*os.File).Close(); err == nil {
		t.Error("Close left the file open")
	}
	if b, err := os.ReadFile(name); err != nil || len(b) == 0 || binary.LittleEndian.Uint32(b) != 0x0a0d0d0a {
		t.Errorf("%s: not a pcapng file (%d bytes, %v)", name, len(b), err)
	}
}
