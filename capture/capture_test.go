package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/gopacket/gopacket/layers"
)

func TestFormats(t *testing.T) {
	v4 := tcp4(t, 53422, 9092, "request")
	v6 := tcp6(t, 9092, 53422, "response")
	t1, t2 := ts0, ts0.Add(1500*time.Millisecond+1)
	micro := func(ts time.Time) time.Time { return ts.Truncate(time.Microsecond) }
	le, be := binary.LittleEndian, binary.BigEndian

	// Two packets on one interface, with the timestamp precision of the file.
	one := func(lt layers.LinkType, precision func(time.Time) time.Time) []got {
		frame1, frame2 := ethIP(t, v4), ethIP(t, v6)
		if lt == layers.LinkTypeRaw {
			frame1, frame2 = v4, v6
		}
		return []got{
			{Num: 1, Net: net4, Ports: "53422->9092", Payload: "request", LinkType: lt, TS: precision(t1), CapLen: len(frame1), Len: len(frame1)},
			{Num: 2, Net: net6, Ports: "9092->53422", Payload: "response", LinkType: lt, TS: precision(t2), CapLen: len(frame2), Len: len(frame2)},
		}
	}
	ethRecs := []rec{{data: ethIP(t, v4), ts: t1}, {data: ethIP(t, v6), ts: t2}}
	pcapMicro := pcapFile(t, layers.LinkTypeEthernet, false, ethRecs...)
	pcapNano := pcapFile(t, layers.LinkTypeEthernet, true, ethRecs...)

	// Two interfaces with different link types, packets interleaved.
	twoIfaces := []rec{
		{data: ethIP(t, v4), ts: t1, iface: 0},
		{data: sll(v6), ts: t2, iface: 1},
		{data: ethIP(t, tcp4(t, 1, 2, "third")), ts: t2.Add(time.Second), iface: 0},
	}
	twoWant := func(precision1 func(time.Time) time.Time, lt1 layers.LinkType) []got {
		return []got{
			{Num: 1, Net: net4, Ports: "53422->9092", Payload: "request", LinkType: layers.LinkTypeEthernet, Iface: 0, TS: t1, CapLen: 14 + 40 + 7, Len: 14 + 40 + 7},
			{Num: 2, Net: net6, Ports: "9092->53422", Payload: "response", LinkType: lt1, Iface: 1, TS: precision1(t2), CapLen: 16 + 60 + 8, Len: 16 + 60 + 8},
			{Num: 3, Net: net4, Ports: "1->2", Payload: "third", LinkType: layers.LinkTypeEthernet, Iface: 0, TS: t2.Add(time.Second), CapLen: 60, Len: 60}, // padded
		}
	}
	same := func(ts time.Time) time.Time { return ts }
	ngTwo := ngFile(t, []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL}, twoIfaces...)
	// Interface 0 in nanoseconds, interface 1 in the default microseconds.
	resolutions := []ngIface{{lt: layers.LinkTypeEthernet, snaplen: 65535, tsresol: 9}, {lt: layers.LinkTypeLinuxSLL}}
	ngResLE := ngFileRaw(le, resolutions, twoIfaces...)
	ngResBE := ngFileRaw(be, resolutions, twoIfaces...)

	tests := []struct {
		name    string
		file    string
		content []byte
		want    []got
	}{
		{"pcap little-endian microseconds", "le-us.pcap", pcapMicro, one(layers.LinkTypeEthernet, micro)},
		{"pcap little-endian nanoseconds", "le-ns.pcap", pcapNano, one(layers.LinkTypeEthernet, same)},
		{"pcap big-endian microseconds", "be-us.pcap", pcapFileBE(t, layers.LinkTypeEthernet, false, ethRecs...), one(layers.LinkTypeEthernet, micro)},
		{"pcap big-endian nanoseconds", "be-ns.pcap", pcapFileBE(t, layers.LinkTypeRaw, true, rec{data: v4, ts: t1}, rec{data: v6, ts: t2}), one(layers.LinkTypeRaw, same)},
		{"pcapng two interfaces", "two.pcapng", ngTwo, twoWant(same, layers.LinkTypeLinuxSLL)},
		{"pcapng two timestamp resolutions", "res.pcapng", ngResLE, twoWant(micro, layers.LinkTypeLinuxSLL)},
		{"pcapng big-endian", "be.pcapng", ngResBE, twoWant(micro, layers.LinkTypeLinuxSLL)},
		{"pcap gzipped", "le-us.pcap.gz", gz(t, pcapMicro), one(layers.LinkTypeEthernet, micro)},
		{"pcapng gzipped", "two.pcapng.gz", gz(t, ngTwo), twoWant(same, layers.LinkTypeLinuxSLL)},
		{"gzipped pcap without .gz", "capture", gz(t, pcapNano), one(layers.LinkTypeEthernet, same)},
		{"pcapng named .pcap", "really-pcapng.pcap", ngTwo, twoWant(same, layers.LinkTypeLinuxSLL)},
		{"pcap named .pcapng", "really-pcap.pcapng", pcapNano, one(layers.LinkTypeEthernet, same)},
		{"pcap named .gz", "not-gzipped.pcap.gz", pcapNano, one(layers.LinkTypeEthernet, same)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, err := openBytes(t, tt.file, tt.content)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			segs, perrs, err := readAll(t, r)
			if err != nil || len(perrs) != 0 {
				t.Fatalf("read: %v %v", err, perrs)
			}
			if !reflect.DeepEqual(segs, tt.want) {
				t.Errorf("segments\n got %+v\nwant %+v", segs, tt.want)
			}
			st := r.Stats()
			checkStats(t, st)
			if want := (Stats{Packets: len(tt.want), TCP: len(tt.want)}); st != want {
				t.Errorf("stats %+v, want %+v", st, want)
			}
		})
	}
}

// TestNewReader reads from a stream that is not a file.
func TestNewReader(t *testing.T) {
	r, err := NewReader(bytes.NewReader(pcapFile(t, layers.LinkTypeRaw, false, recs(tcp4(t, 1, 2, "x"))...)), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Next()
	if err != nil || s.Num != 1 || string(s.TCP.Payload) != "x" {
		t.Fatalf("Next: %+v, %v", s, err)
	}
	for range 2 { // io.EOF again after the end
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("Next at the end: %v, want io.EOF", err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); !errors.Is(err, os.ErrClosed) || !strings.HasPrefix(err.Error(), "stdin: ") {
		t.Errorf("Next after Close: %v", err)
	}
}

// TestRecordsAroundTheBuffer reads pcap records that its read buffer holds (read where they
// lie) and records bigger than it (copied out), one after the other, from a stream that gives
// one byte at a time: each packet's bytes are its own, whatever came before.
func TestRecordsAroundTheBuffer(t *testing.T) {
	// The largest IPv4 packet, in an Ethernet frame: larger than a stream's buffer.
	big := func(fill byte) string { return strings.Repeat(string(rune(fill)), 65535-40) }
	payloads := []string{"a", big('x'), "b", "c", big('y'), big('z'), "d"}
	var frames [][]byte
	for _, p := range payloads {
		frames = append(frames, ethIP(t, tcp4(t, 1, 2, p)))
	}
	if len(frames[1]) <= streamBuffer {
		t.Fatalf("a frame of %d bytes fits in the buffer of %d", len(frames[1]), streamBuffer)
	}
	file := pcapFile(t, layers.LinkTypeEthernet, false, recs(frames...)...)
	for _, tc := range []struct {
		name string
		r    io.Reader
	}{
		{"whole", bytes.NewReader(file)},
		{"one byte at a time", iotest.OneByteReader(bytes.NewReader(file))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(tc.r, "stream")
			if err != nil {
				t.Fatal(err)
			}
			segs, perrs, err := readAll(t, r)
			if err != nil || len(perrs) > 0 {
				t.Fatalf("read: %v %v", err, perrs)
			}
			if len(segs) != len(payloads) {
				t.Fatalf("%d segments, want %d", len(segs), len(payloads))
			}
			for i, s := range segs {
				if s.Payload != payloads[i] || s.CapLen != len(frames[i]) {
					t.Errorf("packet %d: %d bytes of payload (%d captured), want %d (%d)", i+1, len(s.Payload), s.CapLen, len(payloads[i]), len(frames[i]))
				}
			}
		})
	}
}

func TestOpenMissingFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "absent.pcap")
	_, err := Open(name)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), name) {
		t.Errorf("Open: %v, want a not-exist error naming the file", err)
	}
}

func TestOpenErrors(t *testing.T) {
	pcap := pcapFile(t, layers.LinkTypeEthernet, false, recs(ethIP(t, tcp4(t, 1, 2, "x")))...)
	ng := ngFile(t, []layers.LinkType{layers.LinkTypeEthernet}, recs(ethIP(t, tcp4(t, 1, 2, "x")))...)
	badVersion := bytes.Clone(pcap)
	badVersion[4] = 3
	tests := []struct {
		name    string
		file    string
		content []byte
		want    string // what the error says after the file name and ": "
		is      error
	}{
		{"empty", "empty.pcap", nil, "empty file: not a capture", nil},
		{"too short", "short.pcap", []byte{0xd4, 0xc3}, "only 2 bytes: not a capture", nil},
		{"text", "notes.pcap", []byte("These are my notes about the capture.\n"), `not a pcap or pcapng file (starts with "Thes", which looks like text)`, nil},
		{"garbage", "garbage.pcapng", []byte{0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5}, "not a pcap or pcapng file (starts with bytes de ad be ef)", nil},
		{"gzipped text", "notes.gz", gz(t, []byte("hello")), `not a pcap or pcapng file (starts with "hell", which looks like text)`, nil},
		{"gzipped nothing", "nothing.pcap.gz", gz(t, nil), "empty file inside gzip: not a capture", nil},
		{"gzipped too short", "short.gz", gz(t, []byte{0xd4, 0xc3}), "only 2 bytes: not a capture", nil},
		{"broken gzip header", "broken.pcap.gz", []byte{0x1f, 0x8b, 0, 0}, "gzip: unexpected EOF", io.ErrUnexpectedEOF},
		{"broken gzip data", "broken-data.pcap.gz", append(bytes.Clone(gz(t, pcap)[:10]), 0xff, 0xff, 0xff, 0xff), "gzip: flate: corrupt input", nil},
		{"pcap header cut", "cut-header.pcap", pcap[:20], "pcap header: unexpected EOF", io.ErrUnexpectedEOF},
		{"pcap version", "version.pcap", badVersion, "pcap header: Unknown major version 3", nil},
		{"pcapng header cut", "cut-header.pcapng", ng[:20], "pcapng section header: unexpected EOF", io.ErrUnexpectedEOF},
		{"modified pcap", "kuznetzov.pcap", []byte{0x34, 0xcd, 0xb2, 0xa1, 2, 0, 4, 0}, "modified (Kuznetzov) pcap format is not supported", nil},
		{"unsupported link type", "usb.pcap", pcapFile(t, layers.LinkTypeLinuxUSB, false), "link type USB (220): unsupported link type", ErrUnsupportedLinkType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, path, err := openBytes(t, tt.file, tt.content)
			if err == nil {
				t.Fatalf("Open succeeded: %+v", r)
			}
			if !strings.HasPrefix(err.Error(), path+": "+tt.want) {
				t.Errorf("error %q\nwant %q", err, path+": "+tt.want+"...")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
		})
	}
}

// TestReadErrors covers fatal errors after the file header: they name the
// file and the last packet read, and come back from every later Next.
func TestReadErrors(t *testing.T) {
	frames := recs(ethIP(t, tcp4(t, 1, 2, "one")), ethIP(t, tcp4(t, 1, 2, "two")), ethIP(t, tcp4(t, 1, 2, "three")))
	pcap := pcapFile(t, layers.LinkTypeEthernet, false, frames...)
	ng := ngFile(t, []layers.LinkType{layers.LinkTypeEthernet}, frames...)
	frameLen := len(frames[2].data)
	pcapThird := len(pcap) - 16 - frameLen          // offset of the third record header
	ngThird := len(ng) - (28 + (frameLen+3)&^3 + 4) // offset of the third packet block

	gzPcap := gz(t, pcap)
	badCRC := bytes.Clone(gzPcap)
	badCRC[len(badCRC)-8] ^= 0xff

	// A record header that claims 1 GiB, after two good packets.
	huge := func(content []byte, at, lenOffset int, order binary.AppendByteOrder) []byte {
		b := bytes.Clone(content[:at])
		b = append(b, content[at:at+lenOffset]...)
		b = order.AppendUint32(b, 1<<30) // captured length
		b = order.AppendUint32(b, 1<<30) // original length
		return append(b, bytes.Repeat([]byte{0x45}, 4096)...)
	}
	hugeSnaplen := bytes.Clone(pcap)
	binary.LittleEndian.PutUint32(hugeSnaplen[16:], 0xffffffff)
	be := pcapFileBE(t, layers.LinkTypeEthernet, false, frames...)

	tests := []struct {
		name    string
		file    string
		content []byte
		want    string // after "path: "
		is      error
	}{
		{"pcap cut in a record header", "a.pcap", pcap[:pcapThird+10], "truncated after packet 2: unexpected EOF", io.ErrUnexpectedEOF},
		{"pcap cut after a record header", "b.pcap", pcap[:pcapThird+16], "truncated after packet 2: unexpected EOF", io.ErrUnexpectedEOF},
		{"pcap cut in packet data", "c.pcap", pcap[:len(pcap)-1], "truncated after packet 2: unexpected EOF", io.ErrUnexpectedEOF},
		{"pcapng cut in a block header", "d.pcapng", ng[:ngThird+6], "truncated after packet 2: unexpected EOF", io.ErrUnexpectedEOF},
		{"pcapng cut in packet data", "e.pcapng", ng[:ngThird+40], "truncated after packet 2: unexpected EOF", io.ErrUnexpectedEOF},
		{"pcapng cut in the block trailer", "f.pcapng", ng[:len(ng)-2], "truncated after packet 2: unexpected EOF", io.ErrUnexpectedEOF},
		// Where a cut in compressed data falls depends on the compressor.
		{"gzip cut", "g.pcap.gz", gzPcap[:len(gzPcap)-12], "truncated after packet ", io.ErrUnexpectedEOF},
		{"gzip checksum", "h.pcap.gz", badCRC, "after packet 3: gzip: invalid checksum", nil},
		{"pcap huge captured length", "i.pcap", huge(pcap, pcapThird, 8, binary.LittleEndian),
			"after packet 2: the next record claims 1073741824 captured bytes, more than the 262144 a capture holds", nil},
		{"pcap huge captured length and snap length", "j.pcap", huge(hugeSnaplen, pcapThird, 8, binary.LittleEndian),
			"after packet 2: the next record claims 1073741824 captured bytes", nil},
		{"pcap big-endian huge captured length", "k.pcap", huge(be, pcapThird, 8, binary.BigEndian),
			"after packet 2: the next record claims 1073741824 captured bytes", nil},
		{"pcapng huge captured length", "l.pcapng", huge(ng, ngThird, 20, binary.LittleEndian),
			"after packet 2: the next record claims 1073741824 captured bytes", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r, path, err := openBytes(t, tt.file, tt.content)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			segs, perrs, err := readAll(t, r)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatalf("no error after %d segments", len(segs))
			}
			if !strings.HasPrefix(err.Error(), path+": "+tt.want) {
				t.Errorf("error %q\nwant %q", err, path+": "+tt.want+"...")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
			var pe *PacketError
			if errors.As(err, &pe) || len(perrs) != 0 {
				t.Errorf("fatal error given as a packet error: %v %v", err, perrs)
			}
			wantSegs := 2
			if strings.Contains(tt.want, "after packet 3") {
				wantSegs = 3
			}
			if strings.HasSuffix(tt.want, "after packet ") {
				wantSegs = r.Stats().Packets // only consistency can be checked
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("after packet %d:", r.Stats().Packets)) {
				t.Errorf("error %q, but %d packets were read", err, r.Stats().Packets)
			}
			if len(segs) != wantSegs {
				t.Errorf("%d segments before the error, want %d", len(segs), wantSegs)
			}
			if _, again := r.Next(); again != err {
				t.Errorf("Next after a fatal error: %v, want the same error again", again)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("allocated %d bytes reading a %d byte file", alloc, len(tt.content))
			}
		})
	}
}

func BenchmarkNext(b *testing.B) {
	var frames []rec
	for i := range 1000 {
		frames = append(frames, rec{data: ethIP(b, tcp4(b, 53422, 9092, strings.Repeat("k", i%1400)))})
	}
	file := pcapFile(b, layers.LinkTypeEthernet, false, frames...)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(file), "bench.pcap")
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
