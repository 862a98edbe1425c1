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
		{Pick(1, "was", "were"), "was"},
		{Pick(0, "was", "were"), "were"},
	} {
		if tt.got != tt.want {
			t.Errorf("%q, want %q", tt.got, tt.want)
		}
	}
}
