package schema

import "testing"

// TestAPIKeys checks that every API is found by its key and listed in key order, and that keys
// no API has find none.
func TestAPIKeys(t *testing.T) {
	s, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	apis := s.APIs()
	if len(apis) < 80 {
		t.Fatalf("%d APIs", len(apis))
	}
	for i, a := range apis {
		if i > 0 && apis[i-1].Key >= a.Key {
			t.Errorf("API %d (%s) after %d", a.Key, a.Name, apis[i-1].Key)
		}
		if s.API(a.Key) != a {
			t.Errorf("API(%d) is not %s", a.Key, a.Name)
		}
	}
	for _, key := range []int16{-1, -32768, 32767, apis[len(apis)-1].Key + 1} {
		if a := s.API(key); a != nil {
			t.Errorf("API(%d) = %s, want none", key, a.Name)
		}
	}
}

// BenchmarkAPI looks an API up by key, as the decoding of every message does.
func BenchmarkAPI(b *testing.B) {
	s, err := Embedded()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if s.API(1) == nil {
			b.Fatal("no Fetch")
		}
	}
}
