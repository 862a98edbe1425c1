package dissect

import (
	"testing"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// entryWatch passes messages on to a renderer and remembers each entry it is given, with the
// packet number the entry had then, and the entry's message with its size then.
type entryWatch struct {
	render.Renderer
	given  []*model.Entry
	frames []int
	msgs   []*codec.Message
	sizes  []int
}

func (w *entryWatch) Message(e *model.Entry) error {
	w.given = append(w.given, e)
	w.frames = append(w.frames, e.Frame)
	if e.Msg != nil {
		w.msgs = append(w.msgs, e.Msg)
		w.sizes = append(w.sizes, e.Msg.Size)
	}
	return w.Renderer.Message(e)
}

// distinctMessages is how many different messages w was given.
func (w *entryWatch) distinctMessages() int {
	seen := map[*codec.Message]bool{}
	for _, m := range w.msgs {
		seen[m] = true
	}
	return len(seen)
}

// forgettingWatch is an entryWatch that says it keeps nothing of an entry (render.Forgetter).
type forgettingWatch struct{ *entryWatch }

func (forgettingWatch) ForgetsEntries() {}

// TestEntriesReused: a pipeline whose renderer keeps nothing of its entries gives their memory,
// and their messages', to later messages, in one goroutine and over shards, and shows the same lines as one that
// does not; one whose renderer may keep them never does, so each keeps what it was shown.
// Rounds are small, so that the shards do not decode the whole capture before the first
// entries are done with.
func TestEntriesReused(t *testing.T) {
	file := pcapPath("kgo-rebalance-storm.pcap")
	for _, workers := range []int{1, 3} {
		kept := &entryWatch{}
		want, _ := testRun{format: "summary", workers: workers, perRound: 8,
			wrap: func(out render.Renderer) render.Renderer { kept.Renderer = out; return kept }}.mustDissect(t, file)
		distinct := map[*model.Entry]bool{}
		for i, e := range kept.given {
			distinct[e] = true
			if e.Frame != kept.frames[i] {
				t.Fatalf("workers %d: message %d was packet %d when shown, %d now: the entry was reused while a renderer that may keep it held it", workers, i, kept.frames[i], e.Frame)
			}
		}
		if len(kept.given) < 100 || len(distinct) != len(kept.given) {
			t.Errorf("workers %d: %d entries for %d messages, want one each (and 100 or more)", workers, len(distinct), len(kept.given))
		}
		for i, m := range kept.msgs {
			if m.Size != kept.sizes[i] {
				t.Fatalf("workers %d: message %d had %d bytes when shown, %d now: it was reused while a renderer that may keep it held it", workers, i, kept.sizes[i], m.Size)
			}
		}
		if n := kept.distinctMessages(); n != len(kept.msgs) {
			t.Errorf("workers %d: %d messages decoded into %d: want one each", workers, len(kept.msgs), n)
		}

		forgot := &entryWatch{}
		got, _ := testRun{format: "summary", workers: workers, perRound: 8,
			wrap: func(out render.Renderer) render.Renderer { forgot.Renderer = out; return forgettingWatch{forgot} }}.mustDissect(t, file)
		if got != want {
			a, b := clip(got, want)
			t.Errorf("workers %d: lines differ when entries are reused:\n%s\nwant\n%s", workers, a, b)
		}
		clear(distinct)
		for _, e := range forgot.given {
			distinct[e] = true
		}
		if len(distinct) >= len(forgot.given) {
			t.Errorf("workers %d: %d entries for %d messages: none reused", workers, len(distinct), len(forgot.given))
		}
		if n := forgot.distinctMessages(); n >= len(forgot.msgs) {
			t.Errorf("workers %d: %d messages decoded into %d: none reused", workers, len(forgot.msgs), n)
		}
	}
}
