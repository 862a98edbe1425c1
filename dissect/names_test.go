package dissect

import (
	"bytes"
	"os"
	"strings"
	"testing"

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
