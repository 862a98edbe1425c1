package reassembly

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
)

// kafkaSink is a sink whose checker believes any int32 size prefix up to 16 MiB: the TLS
// captures hold Kafka frames, and the framer is in step from the first decrypted byte.
type kafkaSink struct{ sink }

func (s *kafkaSink) Open(c *Conn) (Checker, Checker) {
	s.conns = append(s.conns, c)
	chk := func(head []byte, synced bool) wire.Verdict {
		if len(head) < 4 {
			return wire.NeedMore
		}
		if n := int32(binary.BigEndian.Uint32(head)); n < 8 || n > 16<<20 {
			return wire.No
		}
		return wire.Yes
	}
	return chk, chk
}

// runCapture runs a capture from pcaps/ through the assembler, leaving out the packets skip
// says to.
func runCapture(t *testing.T, name string, keys *tlsdec.KeyLog, skip func(num int) bool) *kafkaSink {
	t.Helper()
	r, err := capture.Open(filepath.Join("..", "pcaps", name))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := &kafkaSink{}
	a := New(h, Options{IsServerPort: func(p uint16) bool { return p == 9093 }, TLSKeys: keys})
	for {
		seg, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if skip == nil || !skip(seg.Num) {
			a.Add(seg)
		}
	}
	a.Close()
	return h
}

func keyLog(t *testing.T, name string, edit func([]byte) []byte) *tlsdec.KeyLog {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "pcaps", name))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		b = edit(b)
	}
	k, err := tlsdec.ParseKeyLog(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var tlsCaptures = []struct {
	name, tls string
	frames    int
}{
	{"kgo-tls12", "TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", 34},
	{"kgo-tls12-aes256", "TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", 34},
	{"kgo-tls12-chacha", "TLS 1.2 TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", 34},
	{"kgo-tls13", "TLS 1.3 TLS_AES_128_GCM_SHA256", 34},
	{"kgo-tls13-chacha", "TLS 1.3 TLS_CHACHA20_POLY1305_SHA256", 34},
	{"kgo-sasl-ssl-scram", "TLS 1.3 TLS_AES_128_GCM_SHA256", 70},
}

// With their key logs, the TLS captures give every frame, counted in the decrypted stream
// from 0, with no notice.
func TestTLSCapturesDecrypted(t *testing.T) {
	for _, tc := range tlsCaptures {
		t.Run(tc.name, func(t *testing.T) {
			h := runCapture(t, tc.name+".pcap", keyLog(t, tc.name+".keylog", nil), nil)
			if len(h.notices) > 0 {
				t.Errorf("notices: %s", h.noticeText())
			}
			if len(h.frames) != tc.frames {
				t.Fatalf("%d frames, want %d", len(h.frames), tc.frames)
			}
			next := map[[2]any]int64{}
			for _, f := range h.frames {
				k := [2]any{f.Conn, f.Dir}
				if f.TLS != tc.tls || f.Offset != next[k] || f.FirstPacket > f.LastPacket || f.FirstPacket == 0 {
					t.Fatalf("frame %q at %d (want %d), packets %d-%d", f.TLS, f.Offset, next[k], f.FirstPacket, f.LastPacket)
				}
				next[k] = f.Offset + int64(len(f.Data))
			}
		})
	}
}

// Without the key log, or with a wrong one: one notice per connection, no frame.
func TestTLSCapturesNotDecrypted(t *testing.T) {
	flip := func(b []byte) []byte {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(l)
			d := "0"
			if f[2][0] == '0' {
				d = "1"
			}
			out = append(out, f[0]+" "+f[1]+" "+d+f[2][1:])
		}
		return []byte(strings.Join(out, "\n"))
	}
	for _, tc := range tlsCaptures {
		for _, variant := range []string{"no key log", "wrong secrets"} {
			t.Run(tc.name+"/"+variant, func(t *testing.T) {
				var keys *tlsdec.KeyLog
				want := "encrypted; pass --tls-keylog FILE to decrypt"
				if variant == "wrong secrets" {
					keys = keyLog(t, tc.name+".keylog", flip)
					want = "decryption failed: authentication failed on the "
				}
				h := runCapture(t, tc.name+".pcap", keys, nil)
				if len(h.frames) > 0 {
					t.Errorf("%d frames", len(h.frames))
				}
				if len(h.notices) != len(h.conns) || len(h.conns) != 6 {
					t.Fatalf("%d notices for %d connections: %s", len(h.notices), len(h.conns), h.noticeText())
				}
				prefix, _, _ := strings.Cut(tc.tls, " TLS_")
				for _, n := range h.notices {
					if n.Kind != NoticeTLS || !strings.Contains(n.Msg, want) || !strings.HasPrefix(n.Msg, prefix+", cipher "+tc.tls[len(prefix)+1:]+": ") || n.Packet == 0 {
						t.Errorf("notice %d in packet %d: %s", n.Kind, n.Packet, n.Msg)
					}
				}
			})
		}
	}
}

// A lost segment in a decrypted direction: a notice, and that direction stops there; the
// other direction goes on.
func TestTLSLostSegment(t *testing.T) {
	keys := keyLog(t, "kgo-tls13.keylog", nil)
	full := runCapture(t, "kgo-tls13.pcap", keys, nil)
	var reqs, resps []Frame
	for _, f := range full.frames {
		if f.Conn.ID == 0 && f.Dir == ToServer {
			reqs = append(reqs, f)
		}
		if f.Conn.ID == 0 && f.Dir == ToClient {
			resps = append(resps, f)
		}
	}
	if len(reqs) < 2 || reqs[1].FirstPacket != reqs[1].LastPacket {
		t.Fatalf("connection 0: %s", frameList(reqs))
	}
	lost := reqs[1].LastPacket
	h := runCapture(t, "kgo-tls13.pcap", keys, func(n int) bool { return n == lost })
	var got [2]int
	for _, f := range h.frames {
		if f.Conn.ID == 0 {
			got[f.Dir]++
		}
	}
	if got[ToServer] != 1 || got[ToClient] != len(resps) {
		t.Errorf("connection 0: %d requests and %d responses, want 1 and %d", got[ToServer], got[ToClient], len(resps))
	}
	if len(h.notices) != 1 || h.notices[0].Kind != NoticeGap || h.notices[0].Dir != ToServer ||
		!strings.Contains(h.notices[0].Msg, "TLS records after a loss cannot be decrypted") {
		t.Errorf("notices: %s", h.noticeText())
	}
	// The lost request and the ones after it in its direction are gone; nothing else.
	if len(h.frames) != len(full.frames)-(len(reqs)-1) {
		t.Errorf("%d frames, want %d", len(h.frames), len(full.frames)-(len(reqs)-1))
	}
}
