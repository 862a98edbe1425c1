package capture

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// withOverlongRecords rewrites a little-endian pcap file as some capture tools write theirs:
// each record holds 16 bytes more than the packet's original length (here zeros after the
// packet), and says so in its captured length.
func withOverlongRecords(t *testing.T, pcap []byte) []byte {
	t.Helper()
	le := binary.LittleEndian
	out := bytes.Clone(pcap[:24])
	for off := 24; off < len(pcap); {
		if off+16 > len(pcap) {
			t.Fatalf("record header cut at %d", off)
		}
		capLen := int(le.Uint32(pcap[off+8:]))
		h := bytes.Clone(pcap[off : off+16])
		le.PutUint32(h[8:], uint32(capLen+16))
		out = append(out, h...)
		out = append(out, pcap[off+16:off+16+capLen]...)
		out = append(out, make([]byte, 16)...)
		off += 16 + capLen
	}
	return out
}

// TestOverlongRecords: records that claim 16 captured bytes more than the packet had, which
// pcapgo refuses, are read like the same records without the extra bytes, and counted.
func TestOverlongRecords(t *testing.T) {
	packets := []string{"first", "second", "third"}
	var frames [][]byte
	for _, p := range packets {
		frames = append(frames, tcp4(t, 40000, 9092, p))
	}
	plain := pcapFile(t, layers.LinkTypeRaw, false, recs(frames...)...)
	quirk := withOverlongRecords(t, plain)

	// The file has the quirk: pcapgo stops at its first record.
	pr, err := pcapgo.NewReader(bytes.NewReader(quirk))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := pr.ReadPacketData(); err == nil || !strings.Contains(err.Error(), "exceeds original packet length") {
		t.Fatalf("pcapgo reads the first record: %v; the file does not have the quirk", err)
	}

	r, err := NewReader(bytes.NewReader(quirk), "quirk.pcap")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range packets {
		s, err := r.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i+1, err)
		}
		// The IP header's length ends the packet: the 16 extra bytes are not payload.
		if string(s.TCP.Payload) != want || s.Truncated {
			t.Errorf("packet %d: payload %q truncated=%v, want %q", i+1, s.TCP.Payload, s.Truncated, want)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last packet: %v", err)
	}
	n, first, capLen, length := r.Overlong()
	if n != 3 || first != 1 || capLen != len(frames[0])+16 || length != len(frames[0]) {
		t.Errorf("Overlong() = %d, %d, %d, %d; want 3, 1, %d, %d", n, first, capLen, length, len(frames[0])+16, len(frames[0]))
	}
	// The file without the quirk counts none.
	r, _ = NewReader(bytes.NewReader(plain), "plain.pcap")
	for {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	if n, _, _, _ := r.Overlong(); n != 0 {
		t.Errorf("a plain file has %d overlong records", n)
	}
}
