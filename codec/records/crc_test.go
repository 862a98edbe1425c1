package records

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/kdissect/kdissect/codec"
)

// TestCRCVerdict: the crc node of a batch (magic 2) and of a legacy message says "ok" when the
// checksum matches its bytes, and "mismatch (computed X)" with the checksum of the bytes, computed
// here, when it does not.
func TestCRCVerdict(t *testing.T) {
	batch := buildBatch(t, "none", 2)
	legacy := message(1, 0, 0, 1767323045000, []byte("k"), []byte("v"))
	for _, tc := range []struct {
		name     string
		data     []byte
		crcAt    int
		computed func(b []byte) uint32
	}{
		{"batch", batch, 17, func(b []byte) uint32 { return crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)) }},
		{"legacy", legacy, 12, func(b []byte) uint32 { return crc32.ChecksumIEEE(b[16:]) }},
	} {
		for _, damaged := range []bool{false, true} {
			data := append([]byte(nil), tc.data...)
			want := "ok"
			if damaged {
				binary.BigEndian.PutUint32(data[tc.crcAt:], binary.BigEndian.Uint32(data[tc.crcAt:])^1)
				want = fmt.Sprintf("mismatch (computed %d)", tc.computed(data))
			}
			nodes, ws := New(Options{}).DecodeRecords(data, 0, nil)
			var notes []string
			codec.Walk(nodes, func(n *codec.Node, _ int) bool {
				if n.Name == "crc" {
					notes = append(notes, n.Note)
				}
				return true
			})
			if len(notes) != 1 || notes[0] != want {
				t.Errorf("%s, damaged %v: crc notes %q, want [%q]", tc.name, damaged, notes, want)
			}
			if damaged != (len(ws) > 0) {
				t.Errorf("%s, damaged %v: warnings %v", tc.name, damaged, ws)
			}
		}
	}
}
