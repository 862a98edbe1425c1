package cli

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"200MB": 200e6, "200mb": 200e6, "1.5GB": 1.5e9, "512MiB": 512 << 20, "1000": 1000,
		"10 kB": 10e3, "2GiB": 2 << 30, "7B": 7,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-5MB", "12XB", "0"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
}
