package reassembly

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec/wire"
)

// TestOversizedFramePassedOver: a frame larger than the buffer limit is skipped as it streams
// by, with a notice; the buffer never grows past the limit and the next frame decodes.
func TestOversizedFramePassedOver(t *testing.T) {
	var frames []Frame
	var notices []Notice
	f := &framer{
		check:     func([]byte, bool) wire.Verdict { return wire.Yes },
		maxSize:   1 << 30,
		maxBuffer: 1000,
		synced:    true,
		started:   true,
		emit:      func(fr Frame) { frames = append(frames, fr) },
		notice:    func(n Notice) { notices = append(notices, n) },
	}
	big := binary.BigEndian.AppendUint32(nil, 50000)
	big = append(big, make([]byte, 50000)...)
	small := binary.BigEndian.AppendUint32(nil, 8)
	small = append(small, "12345678"...)
	stream := append(big, small...)
	peak := 0
	for off := 0; off < len(stream); off += 700 {
		end := min(len(stream), off+700)
		f.add(stream[off:end], []span{{off: int64(off), pkt: off/700 + 1, time: time.Unix(0, 0)}})
		peak = max(peak, len(f.buf))
	}
	if peak > 1000+700 {
		t.Errorf("buffer reached %d bytes", peak)
	}
	if len(frames) != 1 || string(frames[0].Data[4:]) != "12345678" {
		t.Fatalf("frames = %d, want the small frame after the big one", len(frames))
	}
	if frames[0].Offset != int64(len(big)) {
		t.Errorf("frame offset %d, want %d", frames[0].Offset, len(big))
	}
	if len(notices) != 1 || !strings.Contains(notices[0].Msg, "passed over") {
		t.Errorf("notices = %v", notices)
	}
}
