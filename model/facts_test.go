package model

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec"
)

// fact returns the row of the table named name.
func fact(t testing.TB, name string) Fact {
	for _, f := range facts {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no fact %q", name)
	return Fact{}
}

// TestPartitionsOrder checks that the summary and the partitions fact find each topic's
// partitions in the facts' list, whichever order the list holds them in and however many
// topics there are (searched while few, indexed past codec.ManyTopics): topics by name first, then
// ids, then other keys sorted.
func TestPartitionsOrder(t *testing.T) {
	id := codec.UUID{1}
	for _, topics := range []int{2, codec.ManyTopics + 3} {
		f := &codec.Facts{TopicIDs: []codec.UUID{id, {2}}}
		for i := range topics {
			f.Topics = append(f.Topics, fmt.Sprint("t", i))
		}
		// The list in another order than the topics: the id's first, a key no topic names,
		// the topics backwards, one of them without partitions.
		f.Partitions = append(f.Partitions, codec.TopicPartitions{Topic: id.String(), Partitions: []int32{7}},
			codec.TopicPartitions{Topic: "other", Partitions: []int32{9}})
		for i := topics - 1; i > 0; i-- {
			f.Partitions = append(f.Partitions, codec.TopicPartitions{Topic: fmt.Sprint("t", i), Partitions: []int32{int32(i), 0}})
		}
		var v Value
		fact(t, "partitions").Add(&v, f)
		var want []string
		for i := 1; i < topics; i++ {
			want = append(want, fmt.Sprintf("{t%d %d} {t%d 0}", i, i, i))
		}
		want = append(want, "{"+id.String()+" 7} {other 9}")
		if got, w := fmt.Sprint(v.Partitions), "["+strings.Join(want, " ")+"]"; got != w {
			t.Errorf("%d topics: partitions %s, want %s", topics, got, w)
		}
		shown := string(fact(t, "topics").Show(nil, f))
		w := fmt.Sprintf("t0 t1[1,0] t2[2,0] +%d more", topics+1-3) // the id is one more
		if topics == 2 {
			w = "t0 t1[1,0] id:" + id.String()
		}
		if shown != w {
			t.Errorf("%d topics: summary %q, want %q", topics, shown, w)
		}
	}
	// The ids that name partitions show after the names.
	f := &codec.Facts{Topics: []string{"a"}, TopicIDs: []codec.UUID{{2}, id},
		Partitions: []codec.TopicPartitions{{Topic: id.String(), Partitions: []int32{3}}}}
	if got, want := string(fact(t, "topics").Show(nil, f)), "a id:"+id.String(); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	// A topic named as an id is printed: the id names its partitions too.
	if len(id.String()) != codec.UUIDTextLen {
		t.Fatalf("an id's text is %d bytes, codec.UUIDTextLen %d", len(id.String()), codec.UUIDTextLen)
	}
	f = &codec.Facts{Topics: []string{id.String()}, TopicIDs: []codec.UUID{id},
		Partitions: []codec.TopicPartitions{{Topic: id.String(), Partitions: []int32{3}}}}
	if got, want := string(fact(t, "topics").Show(nil, f)), id.String()+"[3] id:"+id.String(); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

// BenchmarkShowTopics measures the summary's topics of a message naming one topic and of one
// naming many (a Metadata response).
func BenchmarkShowTopics(b *testing.B) {
	for _, topics := range []int{1, 1000} {
		f := &codec.Facts{}
		for i := range topics {
			f.Topics = append(f.Topics, fmt.Sprint("topic-", i))
			f.TopicIDs = append(f.TopicIDs, codec.UUID{byte(i), byte(i >> 8), 1})
			f.Partitions = append(f.Partitions, codec.TopicPartitions{Topic: f.Topics[i], Partitions: []int32{0, 1, 2}})
		}
		show := fact(b, "topics").Show
		b.Run(fmt.Sprint(topics), func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = show(buf[:0], f)
			}
		})
	}
}
