package render

import (
	"fmt"
	"testing"

	"github.com/kdissect/kdissect/codec"
)

// TestAppendFewPartitions checks that the few partitions of most fetch-session steps, grouped
// by looking back, are shown as the map of any number of them shows them: topics in order of
// first appearance, named or by id, a topic named like an id's key among them, and at most
// most topics.
func TestAppendFewPartitions(t *testing.T) {
	a, b := codec.UUID{1}, codec.UUID{2}
	p := func(topic string, id codec.UUID, n int32) codec.SessionPartition {
		return codec.SessionPartition{Topic: topic, TopicID: id, Partition: n}
	}
	many := make([]codec.SessionPartition, fewPartitions)
	for i := range many {
		many[i] = p(fmt.Sprint("t", i%5), codec.UUID{}, int32(i))
	}
	for _, tc := range []struct {
		name string
		ps   []codec.SessionPartition
		// mixed: named and unnamed topics together, whose keys are made to compare them.
		mixed bool
	}{
		{"none", nil, false},
		{"one", []codec.SessionPartition{p("orders", a, 3)}, false},
		{"interleaved", []codec.SessionPartition{p("orders", a, 1), p("payments", b, 0), p("orders", a, 0), p("payments", b, 7)}, false},
		{"by id", []codec.SessionPartition{p("", a, 1), p("", b, 2), p("", a, 0)}, false},
		{"a name like an id's key", []codec.SessionPartition{p("", a, 1), p("id:"+a.String(), b, 2), p("orders", a, 0)}, true},
		{"the same id named and not", []codec.SessionPartition{p("", a, 1), p("orders", a, 2)}, true},
		{"many topics", []codec.SessionPartition{p("a", a, 0), p("b", a, 0), p("c", a, 0), p("d", a, 0), p("a", a, 1), p("e", a, 0)}, false},
		{"as many as few", many, false},
	} {
		for _, most := range []int{0, 1, 3, 5} {
			want := string(appendManyPartitions([]byte("x "), tc.ps, most))
			if got := string(appendFewPartitions([]byte("x "), tc.ps, most)); got != want {
				t.Errorf("%s, most %d: %q, want %q", tc.name, most, got, want)
			}
			buf := make([]byte, 0, 4096)
			if allocs := testing.AllocsPerRun(10, func() { appendFewPartitions(buf, tc.ps, most) }); allocs > 0 && !tc.mixed {
				t.Errorf("%s, most %d: %v allocations", tc.name, most, allocs)
			}
		}
	}
}
