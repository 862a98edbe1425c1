package wire

import (
	"math"
	"strings"
	"testing"
)

// TestPrefixes: the prefix of each type agrees with its name, and a prefix value turns into a
// length and back.
func TestPrefixes(t *testing.T) {
	for ty := None + 1; ty < numTypes; ty++ {
		name := ty.String()
		var want Prefix
		switch {
		case ty == TaggedFields || strings.HasPrefix(name, "compact_"):
			want = UvarintPrefix
		case strings.HasPrefix(name, "varint_"):
			want = VarintPrefix
		case name == "string" || name == "nullable_string":
			want = Int16Prefix
		case name == "bytes" || name == "nullable_bytes" || name == "records" || name == "array":
			want = Int32Prefix
		}
		if got := ty.Prefix(); got != want {
			t.Errorf("%s.Prefix() = %s, want %s", name, got, want)
		}
		if ty.PlusOne() != (want == UvarintPrefix && ty != TaggedFields) {
			t.Errorf("%s.PlusOne() = %v", name, ty.PlusOne())
		}
		if want == NoPrefix {
			continue
		}
		for _, n := range []int64{0, 1, 10, 1 << 20} {
			if got, null := ty.Length(ty.PrefixValue(n, false)); got != n || null {
				t.Errorf("%s: length %d comes back as %d (null %v)", name, n, got, null)
			}
		}
		if _, null := ty.Length(ty.PrefixValue(0, true)); !null {
			t.Errorf("%s: null does not come back", name)
		}
	}
	if v := CompactString.PrefixValue(10, false); v != 11 {
		t.Errorf("compact_string of 10 bytes: prefix %d, want 11", v)
	}
	if v := NullableString.PrefixValue(0, true); v != -1 {
		t.Errorf("null nullable_string: prefix %d, want -1", v)
	}
	if v := TaggedFields.PrefixValue(2, false); v != 2 {
		t.Errorf("two tagged fields: prefix %d, want 2", v)
	}
}

// TestEncodings: every type of Kafka's definitions and of the record format says how it is
// written, and the strings say the rule for null where there is one.
func TestEncodings(t *testing.T) {
	for ty := None + 1; ty < numTypes; ty++ {
		e := ty.Encoding()
		if ty == RecordData || ty == CompressedRecords || ty == SASL {
			continue // kdissect's own views of bytes
		}
		if e == "" {
			t.Errorf("%s has no encoding line", ty)
		}
		if ty.Nullable() && !strings.Contains(e, "null") {
			t.Errorf("%s: %q does not say how null is written", ty, e)
		}
	}
	if e := CompactNullableString.Encoding(); e != "uvarint length+1, 0 = null, then UTF-8 bytes" {
		t.Errorf("compact_nullable_string: %q", e)
	}
}

func TestZigzag(t *testing.T) {
	for _, tt := range []struct {
		v int64
		u uint64
	}{{0, 0}, {-1, 1}, {1, 2}, {-10, 19}, {math.MaxInt64, math.MaxUint64 - 1}, {math.MinInt64, math.MaxUint64}} {
		if u := ZigzagEncode(tt.v); u != tt.u || ZigzagDecode(u) != tt.v {
			t.Errorf("zigzag %d: %d (back %d), want %d", tt.v, u, ZigzagDecode(u), tt.u)
		}
	}
}

// TestBits: each bit field's groups cover distinct bits, are found by name, and pick the
// value's bits.
func TestBits(t *testing.T) {
	for f := NoBits + 1; f < numBitFields; f++ {
		if LookupBitField(f.String()) != f {
			t.Errorf("%s is not found by its name", f)
		}
		var seen uint64
		for _, b := range f.Bits(0) {
			for i := b.Low; i <= b.High; i++ {
				if seen&(1<<i) != 0 {
					t.Errorf("%s: bit %d in two groups", f, i)
				}
				seen |= 1 << i
			}
		}
	}
	if LookupBitField("nope") != NoBits {
		t.Error("an unknown name is found")
	}
	got := map[string]int64{}
	for _, b := range BatchAttributes.Bits(0x0019) { // gzip, log-append time, transactional
		got[b.Name] = b.Value
	}
	if got["compression"] != 1 || got["timestampType"] != 1 || got["isTransactional"] != 1 || got["isControlBatch"] != 0 {
		t.Errorf("batch attributes 0x0019: %v", got)
	}
	ops := ACLOperations.Bits(1<<3 | 1<<8) // READ, DESCRIBE
	for _, b := range ops {
		if want := int64(0); (b.Name == "READ" || b.Name == "DESCRIBE") != (b.Value == 1) || (b.Name != "READ" && b.Name != "DESCRIBE" && b.Value != want) {
			t.Errorf("ACL operations READ|DESCRIBE: %s = %d", b.Name, b.Value)
		}
	}
	if b := ACLOperations.Bits(math.MinInt32); len(b) != 1 || b[0].Name != "omitted" {
		t.Errorf("ACL operations not asked for: %v", b)
	}
}
