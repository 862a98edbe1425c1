package capture

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// bigCapture is a pcap file of n Ethernet/IPv4/TCP packets with 1000-byte payloads.
func bigCapture(t *testing.T, n int) []byte {
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = ethIP(t, tcp4(t, 50000, 9092, strings.Repeat("k", 1000)))
	}
	return pcapFile(t, layers.LinkTypeEthernet, false, recs(frames...)...)
}

// TestProgress checks the bytes read and the total that Progress reports: for plain pcap and
// pcapng files, the file's size, reached exactly at the end and not before; for gzipped files and
// streams, a total of 0 and the bytes read all the same.
func TestProgress(t *testing.T) {
	const packets = 300 // about 320 KB, many times the read buffer
	pcapBytes := bigCapture(t, packets)
	frames := make([][]byte, 50)
	for i := range frames {
		frames[i] = ethIP(t, tcp4(t, 50000, 9092, strings.Repeat("n", 1000)))
	}
	ngBytes := ngFile(t, []layers.LinkType{layers.LinkTypeEthernet}, recs(frames...)...)
	gzBytes := gz(t, pcapBytes)
	for _, tc := range []struct {
		name      string
		content   []byte
		open      func(t *testing.T, content []byte) *Reader
		wantTotal int64
		packets   int
	}{
		{"pcap file", pcapBytes, openFile, int64(len(pcapBytes)), packets},
		{"pcapng file", ngBytes, openFile, int64(len(ngBytes)), 50},
		{"gzipped file", gzBytes, openFile, 0, packets},
		{"stream", pcapBytes, openStream, 0, packets},
		{"gzipped stream", gzBytes, openStream, 0, packets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.open(t, tc.content)
			read, total := r.Progress()
			if total != tc.wantTotal {
				t.Errorf("total %d, want %d", total, tc.wantTotal)
			}
			if read <= 0 || read > int64(len(tc.content)) {
				t.Errorf("after the header: %d bytes read of %d", read, len(tc.content))
			}
			last, n := read, 0
			for {
				_, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
				read, total = r.Progress()
				if read < last || total != tc.wantTotal {
					t.Fatalf("packet %d: progress %d/%d after %d", n, read, total, last)
				}
				if n == packets/10 && read >= int64(len(tc.content)) && len(tc.content) > 64<<10 {
					t.Errorf("packet %d of %d: all %d bytes read already", n, tc.packets, read)
				}
				last = read
			}
			if n != tc.packets {
				t.Errorf("%d packets, want %d", n, tc.packets)
			}
			if read, _ := r.Progress(); read != int64(len(tc.content)) {
				t.Errorf("at the end: %d bytes read, want %d", read, len(tc.content))
			}
		})
	}
}

func openFile(t *testing.T, content []byte) *Reader {
	r, _, err := openBytes(t, "c", content)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func openStream(t *testing.T, content []byte) *Reader {
	r, err := NewReader(bytes.NewReader(content), "stream")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestProgressLive: a Reader that does not read a file has no progress to report.
func TestProgressLive(t *testing.T) {
	r := &Reader{name: "lo"}
	if read, total := r.Progress(); read != 0 || total != 0 {
		t.Errorf("Progress() = %d, %d; want 0, 0", read, total)
	}
}
