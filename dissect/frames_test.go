package dissect

import "testing"

func TestIsHexText(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"0000002a 0003", true},
		{"00 00\n00\t2A", true},
		{"", false},
		{" \n", false},
		{"zz", false},
		{"\x00\x00\x00\x10", false},
		{"0x2a", false},
	}
	for _, tt := range tests {
		if got := isHexText([]byte(tt.in)); got != tt.want {
			t.Errorf("isHexText(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
