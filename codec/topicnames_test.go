package codec

import "testing"

// TestTopicNamesRecent: the names kept in TopicNames.recent are those of the map, as Add and
// Fill change it, for ids that share a pair of slots (three of them: one more than it holds),
// and never for an id without a name.
func TestTopicNamesRecent(t *testing.T) {
	a, b, c := UUID{1, 5}, UUID{2, 5}, UUID{9}
	b[len(b)-1], a[len(a)-1], c[len(c)-1] = 3, 3, 3 // in the same pair
	var names TopicNames
	want := func(id UUID, name string) {
		t.Helper()
		for range 2 { // from the map, then from its slot
			if got, ok := names.Name(id); got != name || ok != (name != "") {
				t.Fatalf("Name(%v) = %q, %v; want %q", id, got, ok, name)
			}
		}
	}
	want(a, "")
	want(UUID{}, "") // an empty slot's id
	names.Add([]TopicIDName{{ID: a, Name: "orders"}, {ID: b, Name: "payments"}})
	want(a, "orders")
	want(b, "payments")
	want(a, "orders")
	names.Add([]TopicIDName{{ID: a, Name: "orders-2"}}) // renamed (a topic made again)
	want(a, "orders-2")
	want(b, "payments")
	want(a, "orders-2")
	want(c, "")
	var whole TopicNames
	whole.Add([]TopicIDName{{ID: c, Name: "clicks"}, {ID: a, Name: "not this"}})
	names.Fill(&whole)
	want(c, "clicks")
	want(a, "orders-2")
	want(b, "payments")
	want(c, "clicks")
	names.Add([]TopicIDName{{ID: b, Name: "payments-2"}, {ID: c, Name: "clicks-2"}})
	want(b, "payments-2")
	want(a, "orders-2")
	want(c, "clicks-2")
	want(b, "payments-2")
	want(UUID{}, "")
}

// TestResolveRecent: Resolve finds the partitions of ids by the text kept in their slots of
// TopicNames.recent, right for ids that take each other's slot, one message after another.
func TestResolveRecent(t *testing.T) {
	a, b, c := UUID{1, 5}, UUID{2, 5}, UUID{9}
	b[len(b)-1], a[len(a)-1], c[len(c)-1] = 3, 3, 3 // in the same pair
	var names TopicNames
	names.Add([]TopicIDName{{ID: a, Name: "orders"}, {ID: b, Name: "payments"}, {ID: c, Name: "clicks"}})
	for _, ids := range [][]UUID{{a}, {b}, {a, b}, {b, a}, {c}, {a}, {c, b, a}, {b}} {
		f := &Facts{TopicIDs: ids}
		for i, id := range ids {
			f.Partitions = append(f.Partitions, TopicPartitions{Topic: id.String(), Partitions: []int32{int32(i)}})
		}
		names.Resolve(f)
		for i, id := range ids {
			name, _ := names.Name(id)
			if got := f.Partitions[i]; got.Topic != name || f.Topics[i] != name {
				t.Errorf("ids %v: partitions %v, topics %q; want %d's named %s", ids, f.Partitions, f.Topics, i, name)
			}
		}
	}
}
