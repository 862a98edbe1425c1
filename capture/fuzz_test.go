package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// FuzzReader reads arbitrary bytes as a capture file: it must not panic, must
// come to an end, and what it returns must be consistent.
func FuzzReader(f *testing.F) {
	v4 := tcp4(f, 53422, 9092, "kafka")
	v6 := tcp6ext(f, 9092, 53422, "kafka6", layers.IPProtocolIPv6HopByHop, ext(layers.IPProtocolTCP, padN...))
	ethFrames := append(recs(ethIP(f, v4), eth(f, layers.EthernetTypeIPv6, v6, 1, 2), arp(f)), cut(40, ethIP(f, v4)))
	seeds := [][]byte{
		pcapFile(f, layers.LinkTypeEthernet, false, ethFrames...),
		pcapFile(f, layers.LinkTypeLinuxSLL2, true, recs(sll2(v4), sll2(v6))...),
		pcapFileBE(f, layers.LinkTypeNull, false, recs(null(binary.BigEndian, 2, v4), null(binary.BigEndian, 30, v6))...),
		pcapFileBE(f, layers.LinkTypeRaw, true, recs(v4, v6, udp4(f))...),
		ngFile(f, []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeIPv4},
			rec{data: ethIP(f, v4)}, rec{data: sll(v6), iface: 1}, rec{data: v4, iface: 2}),
		ngFileRaw(binary.BigEndian, []ngIface{{lt: layers.LinkTypeLoop, tsresol: 3}, {lt: layers.LinkTypeEthernet}},
			rec{data: null(binary.BigEndian, 2, v4)}, rec{data: ethIP(f, v6), iface: 1}),
	}
	for _, s := range seeds[:len(seeds):len(seeds)] {
		seeds = append(seeds, gz(f, s), s[:len(s)-7])
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Add([]byte{})
	f.Add([]byte("not a capture at all"))

	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "fuzz.pcap")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.pcap: ") {
				t.Errorf("Open error does not name the file: %v", err)
			}
			return
		}
		defer r.Close()
		// Each record takes at least 16 bytes of the file, or of what it
		// decompresses to, which deflate bounds at about 1032 times its input.
		limit := 100*len(data) + 10
		for i := 0; ; i++ {
			if i > limit {
				t.Fatalf("more than %d results from %d bytes", limit, len(data))
			}
			s, err := r.Next()
			st := r.Stats()
			var pe *PacketError
			if err == io.EOF {
				break
			} else if errors.As(err, &pe) {
				if pe.Num != st.Packets || pe.File != "fuzz.pcap" {
					t.Fatalf("packet error %v after %d packets", pe, st.Packets)
				}
				continue
			} else if err != nil {
				if !strings.HasPrefix(err.Error(), "fuzz.pcap: ") || !strings.Contains(err.Error(), fmt.Sprint("packet ", st.Packets)) {
					t.Fatalf("error %q does not name the file and packet %d", err, st.Packets)
				}
				if _, again := r.Next(); again != err {
					t.Fatalf("error not repeated: %v, then %v", err, again)
				}
				break
			}
			if s.Num != st.Packets || s.TCP == nil || s.Missing < 0 || (s.Missing > 0 && !s.Truncated) {
				t.Fatalf("inconsistent segment %+v after %d packets", s, st.Packets)
			}
			if len(s.TCP.Payload) > s.Info.CaptureLength || s.Info.CaptureLength > MaxCaptureLength {
				t.Fatalf("payload of %d bytes in a packet of %d", len(s.TCP.Payload), s.Info.CaptureLength)
			}
		}
		checkStats(t, r.Stats())
	})
}
