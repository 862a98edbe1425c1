package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{Count(0, "byte"), "0 bytes"},
		{Count(1, "byte"), "1 byte"},
		{Count(2, "byte"), "2 bytes"},
		{Count(int64(-1), "byte"), "-1 bytes"},
		{Count(uint64(1<<63), "message"), "9223372036854775808 messages"},
		{Count(int8(1), "packet"), "1 packet"},
		{string(AppendCount([]byte("of "), int32(-3), "item")), "of -3 items"},
		{string(AppendCount(nil, uint8(1), "item")), "1 item"},
		{Noun(1, "connection"), "connection"},
		{Noun(uint16(7), "connection"), "connections"},
		{Count(2, "batch"), "2 batches"},
		{Count(1, "batch"), "1 batch"},
		{Noun(3, "prefix"), "prefixes"},
		{string(AppendCount(nil, 2, "class")), "2 classes"},
		{string(AppendNoun([]byte("3 "), 3, "batch")), "3 batches"},
		{string(AppendNoun(nil, int64(1), "record")), "record"},
		{Noun(2, "waltz"), "waltzes"},
		{Noun(2, "wish"), "wishes"},
		{Noun(2, "month"), "months"},
		{Noun(2, "h"), "hs"},
		{Noun(2, "s"), "ses"},
		{Noun(2, ""), "s"},
		{Pick(1, "was", "were"), "was"},
		{Pick(0, "was", "were"), "were"},
	} {
		if tt.got != tt.want {
			t.Errorf("%q, want %q", tt.got, tt.want)
		}
	}
	b := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(10, func() { b = AppendNoun(b[:0], 2, "partition") }); n != 0 {
		t.Errorf("AppendNoun made %v allocations", n)
	}
}
