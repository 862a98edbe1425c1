package wire

import (
	"strconv"
	"strings"
	"testing"
)

// TestTypeNames checks that every type but None has a name of its own, and that the predicates
// agree with what the names say: the outputs print the names, and render asks the predicates.
func TestTypeNames(t *testing.T) {
	seen := map[string]Type{}
	for ty := None + 1; ty < numTypes; ty++ {
		name := ty.String()
		if name == "" {
			t.Fatalf("type %d has no name", ty)
		}
		if other, ok := seen[name]; ok {
			t.Fatalf("types %d and %d are both named %s", other, ty, name)
		}
		seen[name] = ty
		checks := []struct {
			what      string
			got, want bool
		}{
			{"IsArray", ty.IsArray(), strings.HasSuffix(name, "array")},
			{"IsString", ty.IsString(), strings.HasSuffix(name, "string")},
			{"IsBytes", ty.IsBytes(), strings.HasSuffix(name, "bytes")},
			{"IsRecords", ty.IsRecords(), strings.HasSuffix(name, "records")},
			{"Nullable", ty.Nullable(), strings.Contains(name, "nullable")},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s.%s() = %v, want %v", name, c.what, c.got, c.want)
			}
		}
	}
	if None.String() != "" {
		t.Errorf("None is named %q", None.String())
	}
	if b, _ := CompactNullableString.MarshalText(); string(b) != "compact_nullable_string" {
		t.Errorf("MarshalText = %s", b)
	}
}

func TestVariable(t *testing.T) {
	for _, bytes := range []bool{false, true} {
		for _, nullable := range []bool{false, true} {
			for _, compact := range []bool{false, true} {
				want := "string"
				if bytes {
					want = "bytes"
				}
				if nullable {
					want = "nullable_" + want
				}
				if compact {
					want = "compact_" + want
				}
				if got := Variable(bytes, nullable, compact).String(); got != want {
					t.Errorf("Variable(%v, %v, %v) = %s, want %s", bytes, nullable, compact, got, want)
				}
			}
		}
	}
}

func TestIndexName(t *testing.T) {
	for i := range 1100 {
		if got, want := IndexName(i), "["+strconv.Itoa(i)+"]"; got != want {
			t.Errorf("IndexName(%d) = %s, want %s", i, got, want)
		}
	}
	if got := IndexName(100000); got != "[100000]" {
		t.Errorf("IndexName(100000) = %s", got)
	}
}

func TestAttributes(t *testing.T) {
	tests := []struct {
		a             Attributes
		codec         string
		known         bool
		logAppend, tx bool
		control       bool
	}{
		{0x00, "none", true, false, false, false},
		{0x14, "zstd", true, false, true, false},
		{0x39, "gzip", true, true, true, true},
		{0x02, "snappy", true, false, false, false},
		{0x03, "lz4", true, false, false, false},
		{0x07, "codec7", false, false, false, false},
	}
	for _, tt := range tests {
		c := tt.a.Codec()
		if c.String() != tt.codec || c.Known() != tt.known || tt.a.Has(LogAppendTime) != tt.logAppend ||
			tt.a.Has(Transactional) != tt.tx || tt.a.Has(Control) != tt.control {
			t.Errorf("attributes 0x%02x: codec %s known %v, log append %v, transactional %v, control %v", int64(tt.a),
				c, c.Known(), tt.a.Has(LogAppendTime), tt.a.Has(Transactional), tt.a.Has(Control))
		}
	}
}
