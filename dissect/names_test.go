package dissect

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/pcaps"
)

// TestNamesFromWholeFile: in kgo-late-metadata.pcap a Fetch names a topic by id before the
// Metadata response that gives the id its name. Read as a file (two passes), the early Fetch
// shows the name; read once, from a stream (stdin), it cannot, and says so.
func TestNamesFromWholeFile(t *testing.T) {
	file := pcapPath("kgo-late-metadata.pcap")
	msgs := dissectJSON(t, file, testRun{})
	// From the JSON: where the first Metadata response names each id, and the notes of the
	// TopicIds of the Fetches before it.
	named := map[string]int{} // id -> frame of the first Metadata response naming it
	for _, m := range msgs {
		if m.APIName != "Metadata" || m.Kind != "response" {
			continue
		}
		walkFields(m.Fields, func(f *jsonField, _ string) {
			if id, ok := f.Value.(string); ok && f.Name == "TopicId" && id != nullTopicID {
				if _, seen := named[id]; !seen {
					named[id] = m.Frame
				}
			}
		})
	}
	early := map[int]bool{} // frames of Fetches naming an id before its Metadata response
	for _, m := range msgs {
		if m.APIName != "Fetch" {
			continue
		}
		walkFields(m.Fields, func(f *jsonField, _ string) {
			id, _ := f.Value.(string)
			if at, ok := named[id]; f.Name == "TopicId" && ok && m.Frame < at {
				early[m.Frame] = true
				if f.Note != "topic kdissect-late" {
					t.Errorf("#%d: TopicId note %q, want the name the later Metadata response gives", m.Frame, f.Note)
				}
			}
		})
	}
	if len(early) != 2 { // the first Fetch request and its response
		t.Fatalf("%d Fetches name a topic id before its Metadata response, want 2", len(early))
	}

	// Read once, as from stdin.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	r := testRun{format: "json", ports: pcaps.Ports}
	p, _ := r.pipeline(t, &out, &errOut, Config{})
	if _, err := fileFrom(p, bytes.NewReader(data), "stdin"); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, m := range parseJSON(t, out.String()) {
		walkFields(m.Fields, func(f *jsonField, _ string) {
			if f.Name != "TopicId" || f.Value == nullTopicID {
				return
			}
			want := "topic kdissect-late"
			if early[m.Frame] {
				want = unknownTopic
			}
			if !strings.HasPrefix(f.Note, want) {
				t.Errorf("one pass, #%d %s: TopicId note %q, want %q", m.Frame, m.APIName, f.Note, want)
			}
		})
	}
}

// TestNamesDeferred: a capture file's first pass is put off until an entry uses a topic id
// not named before it (learnFirst), and runs only then; the output is the same as when the
// first pass runs before the file is shown, as it did always: for every capture, alone and
// after another that names topics, in the formats that show names in facts and in notes.
func TestNamesDeferred(t *testing.T) {
	late, plain := pcapPath("kgo-late-metadata.pcap"), pcapPath("kgo-produce-fetch.pcap")
	runs := [][]string{{late, plain}, {plain, late}}
	for _, f := range captures(t) {
		runs = append(runs, []string{f})
	}
	for _, files := range runs {
		for _, format := range []string{"summary", "json"} {
			for _, workers := range []int{1, 3} {
				r := testRun{format: format, ports: pcaps.Ports, workers: workers}
				got, firstPass := r.namesRun(t, files, false)
				want, _ := r.namesRun(t, files, true)
				if got != want {
					g, w := clip(got, want)
					t.Errorf("%v %s, %d workers: first pass put off:\n%s\nfirst pass first:\n%s", files, format, workers, g, w)
				}
				// The first pass runs where a message uses an id before the Metadata response
				// that names it (the late Metadata, a capture begun midstream, one missing a
				// packet), and in pcapng files, which may carry TLS secrets: only there.
				base := filepath.Base(files[0])
				wantFirst := base == "kgo-late-metadata.pcap" || base == "kgo-midstream.pcap" || base == "kgo-capture-loss.pcap" ||
					filepath.Ext(base) == ".pcapng"
				if len(files) == 1 && firstPass != wantFirst {
					t.Errorf("%v %s, %d workers: first pass ran: %v, want %v", files, format, workers, firstPass, wantFirst)
				}
			}
		}
	}
}

// namesRun reads files as File does, with the first pass before each file when first, and
// returns what it wrote (stdout and stderr) and whether a first pass ran.
func (r testRun) namesRun(t *testing.T, files []string, first bool) (out string, firstPass bool) {
	t.Helper()
	var w, errW bytes.Buffer
	p, _ := r.pipeline(t, &w, &errW, Config{})
	for _, file := range files {
		var err error
		if first {
			if p.learnNames(file, &p.names.names) {
				p.names.names.LearntAll()
			}
			var c *capture.Reader
			if c, err = capture.Open(file); err == nil {
				_, err = p.Read(c, file)
				c.Close()
			}
		} else {
			_, err = p.File(file)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return w.String() + errW.String(), p.names.scan != nil
}

// TestUnnamed checks which entries use a topic id without a name (naming.unnamed): in their
// facts, their record sets or their fetch session, after the partitions of named topics, and
// never for the zero id.
func TestUnnamed(t *testing.T) {
	named, other := codec.UUID{1}, codec.UUID{2}
	var n naming
	n.names.Add([]codec.TopicIDName{{ID: named, Name: "orders"}})
	session := func(ps ...codec.SessionPartition) *model.Entry {
		return &model.Entry{Session: &codec.SessionStep{Partitions: ps}}
	}
	for _, tc := range []struct {
		name string
		e    *model.Entry
		want bool
	}{
		{"no facts", &model.Entry{}, false},
		{"named id", &model.Entry{Facts: &codec.Facts{TopicIDs: []codec.UUID{named}}}, false},
		{"unnamed id", &model.Entry{Facts: &codec.Facts{TopicIDs: []codec.UUID{named, other}}}, true},
		{"zero id", &model.Entry{Facts: &codec.Facts{TopicIDs: []codec.UUID{{}}}}, false},
		{"record set", &model.Entry{Facts: &codec.Facts{RecordSets: []codec.RecordSet{{TopicID: named}, {TopicID: other}}}}, true},
		{"record set named by the message", &model.Entry{Facts: &codec.Facts{RecordSets: []codec.RecordSet{{Topic: "t", TopicID: other}}}}, false},
		{"session of named", session(codec.SessionPartition{TopicID: named}, codec.SessionPartition{TopicID: named, Partition: 1}), false},
		{"session, unnamed after named", session(codec.SessionPartition{TopicID: named}, codec.SessionPartition{TopicID: named, Partition: 1},
			codec.SessionPartition{TopicID: other}), true},
		{"session, zero then unnamed", session(codec.SessionPartition{Topic: "t"}, codec.SessionPartition{TopicID: other}), true},
	} {
		if got := n.unnamed(tc.e); got != tc.want {
			t.Errorf("%s: unnamed %v, want %v", tc.name, got, tc.want)
		}
	}
	// A session's set found named is not looked at again, but a longer list on the same
	// memory is.
	set := []codec.SessionPartition{{TopicID: named}, {TopicID: other}}
	for i, tc := range []struct {
		n    int
		want bool
	}{{1, false}, {1, false}, {2, true}} {
		if got := n.unnamed(session(set[:tc.n]...)); got != tc.want {
			t.Errorf("session set %d: unnamed %v, want %v", i, got, tc.want)
		}
	}
}
