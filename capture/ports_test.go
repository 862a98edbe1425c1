package capture

import (
	"fmt"
	"testing"
)

func TestParsePorts(t *testing.T) {
	for _, tc := range []struct {
		specs  []string
		ranges string
		text   string
	}{
		{[]string{"9092,9093-9095", "19092", "1"}, "[port 1 portrange 9092-9095 port 19092]", "ports 1,9092-9095,19092"},
		{[]string{"9092"}, "[port 9092]", "port 9092"},
		{[]string{" 9092 , ", "9092-9092"}, "[port 9092]", "port 9092"},
		{[]string{"65535", "65534"}, "[portrange 65534-65535]", "ports 65534-65535"},
		{nil, "[]", "ports "},
	} {
		ps, err := ParsePorts(tc.specs)
		if err != nil {
			t.Errorf("%q: %v", tc.specs, err)
			continue
		}
		if got := fmt.Sprint(ps.Ranges()); got != tc.ranges {
			t.Errorf("%q: ranges %s, want %s", tc.specs, got, tc.ranges)
		}
		if got := ps.String(); got != tc.text {
			t.Errorf("%q: %q, want %q", tc.specs, got, tc.text)
		}
	}
	ps, _ := ParsePorts([]string{"9092-9094"})
	for p, want := range map[uint16]bool{9091: false, 9092: true, 9094: true, 9095: false, 0: false} {
		if ps.Has(p) != want {
			t.Errorf("Has(%d) = %v", p, !want)
		}
	}
	for _, bad := range []string{"0", "x", "9095-9092", "70000", "1-", "-3"} {
		if _, err := ParsePorts([]string{bad}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
