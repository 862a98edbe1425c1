package capture

import (
	"errors"
	"time"
)

// FirstTime returns the time of the first TCP packet of the named capture file, the one that
// relative times count from, reading no further than that packet (packets it cannot decode
// are skipped). ok is false for a FIFO, which can be read once, and for a file that cannot
// be opened or holds no TCP packet: reading it will say why.
func FirstTime(name string) (t time.Time, ok bool) {
	if IsStreamName(name) {
		return time.Time{}, false
	}
	r, err := Open(name)
	if err != nil {
		return time.Time{}, false
	}
	defer r.Close()
	for {
		seg, err := r.Next()
		var pe *PacketError
		switch {
		case err == nil:
			return seg.Info.Timestamp, true
		case !errors.As(err, &pe):
			return time.Time{}, false
		}
	}
}
