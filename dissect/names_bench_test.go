package dissect

import (
	"slices"
	"testing"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// shardEntry is an entry as a shard gives it to the merger: topics named by id alone (Fetch
// v13+, Produce v13+). reset makes it so again, as analyse found it, in the memory it had.
type shardEntry struct {
	e     *model.Entry
	reset func()
}

// newShardEntry makes a shardEntry of facts naming partitions of ids (the partitions of the
// i-th id: partitions[i]), records in each when records, and of session, when set.
func newShardEntry(ids []codec.UUID, partitions [][]int32, records bool, session *codec.SessionStep) shardEntry {
	var want codec.Facts
	want.TopicIDs = ids
	for i, id := range ids {
		want.Partitions = append(want.Partitions, codec.TopicPartitions{Topic: id.String(), Partitions: partitions[i]})
		for _, p := range partitions[i] {
			if records {
				want.RecordSets = append(want.RecordSets, codec.RecordSet{TopicID: id, Partition: p, Records: 2, Bytes: 400, Codecs: []string{"none"}})
			}
		}
	}
	f := &codec.Facts{TopicIDs: ids, Partitions: slices.Clone(want.Partitions), RecordSets: slices.Clone(want.RecordSets),
		Topics: make([]string, 0, len(ids))} // room for the names, as a shard's facts have
	var s *codec.SessionStep
	if session != nil {
		s = new(codec.SessionStep)
	}
	reset := func() {
		f.Topics = f.Topics[:0]
		f.Partitions = append(f.Partitions[:0], want.Partitions...)
		copy(f.RecordSets, want.RecordSets)
		if s != nil {
			added, updated := s.Added, s.Updated
			*s = *session
			s.Added = append(added[:0], session.Added...)
			s.Updated = append(updated[:0], session.Updated...)
		}
	}
	reset()
	return shardEntry{e: &model.Entry{Facts: f, Session: s}, reset: reset}
}

// shardEntries are the entries most of a `kbench gen` capture's summary shows, as the merger
// gets them: an incremental Fetch v18 request of a session of 10 partitions and its response,
// and a Produce v13 request, their topics named by id.
func shardEntries() (map[string]shardEntry, []codec.TopicIDName) {
	topics := []codec.TopicIDName{
		{ID: codec.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, Name: "kbench-logs"},
		{ID: codec.UUID{16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, Name: "kbench-orders"},
		// The last byte as the first id's: two of a `kbench gen` capture's four ids have theirs
		// alike modulo 16 (codec.TopicNames keeps names by it).
		{ID: codec.UUID{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 16}, Name: "kbench-metrics"},
	}
	ids := []codec.UUID{topics[0].ID, topics[1].ID, topics[2].ID}
	var set []codec.SessionPartition // shared by the steps of the session, never written
	for i := range int32(10) {
		set = append(set, codec.SessionPartition{TopicID: ids[i%3], Partition: i})
	}
	slices.SortFunc(set, func(a, b codec.SessionPartition) int { return slices.Compare(a.TopicID[:], b.TopicID[:]) })
	step := &codec.SessionStep{ID: 10, Epoch: 63, Action: codec.SessionIncremental, Followed: true, Partitions: set,
		Updated: []codec.SessionPartition{{TopicID: ids[0], Partition: 0}, {TopicID: ids[1], Partition: 1}}}
	return map[string]shardEntry{
		"FetchRequest":  newShardEntry(ids[:2], [][]int32{{0}, {1}}, false, step),
		"FetchResponse": newShardEntry(ids[:2], [][]int32{{0, 1}, {0, 1}}, true, &codec.SessionStep{ID: 10, Response: true}),
		"Produce":       newShardEntry(ids, [][]int32{{0, 1}, {0, 1}, {0, 1}}, true, nil),
	}, topics
}

// BenchmarkAnalyse measures the naming of the topics of shardEntries (naming.analyse), on the
// merging goroutine for every message, with the first pass put off (as it is on a `kbench
// gen` capture, whose Metadata responses name every id before it is used).
func BenchmarkAnalyse(b *testing.B) {
	entries, topics := shardEntries()
	for name, se := range entries {
		b.Run(name, func(b *testing.B) {
			n := naming{deferred: "gen.pcap"}
			n.names.Add(topics)
			learn := func() { b.Fatal("an id has no name") }
			b.ReportAllocs()
			for b.Loop() {
				se.reset()
				n.analyse(se.e, nil, false, learn)
			}
		})
	}
}

// TestShardEntries checks what BenchmarkAnalyse measures: every topic named, in the order the
// message names them, partitions and records sets too.
func TestShardEntries(t *testing.T) {
	entries, topics := shardEntries()
	for name, se := range entries {
		n := naming{deferred: "gen.pcap"}
		n.names.Add(topics)
		for range 2 { // again, from the state reset left
			se.reset()
			n.analyse(se.e, nil, false, func() { t.Fatalf("%s: an id has no name", name) })
			f := se.e.Facts
			if want := len(f.TopicIDs); len(f.Topics) != want || f.Topics[0] != "kbench-logs" || f.Topics[1] != "kbench-orders" {
				t.Errorf("%s: topics %q, want the %d of its ids, in their order", name, f.Topics, want)
			}
			for _, p := range f.Partitions {
				if !slices.Contains(f.Topics, p.Topic) {
					t.Errorf("%s: partitions of %q, not a topic's name", name, p.Topic)
				}
			}
			for _, r := range f.RecordSets {
				if !slices.Contains(f.Topics, r.Topic) {
					t.Errorf("%s: a record set of %q, not a topic's name", name, r.Topic)
				}
			}
			if s := se.e.Session; s != nil {
				for _, p := range slices.Concat(s.Added, s.Updated, s.Partitions) {
					if p.Topic == "" {
						t.Errorf("%s: session partition %v not named", name, p)
					}
				}
			}
		}
	}
}
