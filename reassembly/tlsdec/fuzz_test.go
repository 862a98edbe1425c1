package tlsdec

import (
	"crypto/tls"
	"testing"
)

// FuzzTLSRecords feeds arbitrary bytes to the record parser and, as the two directions of a
// connection, to a Conn whose key log holds the secrets of the seed sessions, so that the
// inputs derived from them reach the handshake parsers and the decryption: no panic, records
// within their input, plaintext only from records that authenticated.
func FuzzTLSRecords(f *testing.F) {
	keys := NewKeyLog()
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		s := runSession(f, sessionOptions{client: &tls.Config{MaxVersion: v, ServerName: "fuzz.example"}, server: &tls.Config{},
			clientMsgs: [][]byte{[]byte("\x00\x00\x00\x05hello")}, serverMsgs: [][]byte{[]byte("\x00\x00\x00\x02ok")}})
		keys.Parse(bytesReader(s.keyLog))
		var sides [2][]byte
		for _, c := range s.chunks {
			sides[c.side] = append(sides[c.side], c.data...)
		}
		f.Add(append(sides[0], sides[1]...), uint32(len(sides[0])), uint8(0))
		f.Add(append(sides[0], sides[1]...), uint32(len(sides[0])), uint8(13))
	}
	f.Add([]byte{22, 3, 1, 0, 5, 1, 0, 0, 1, 0}, uint32(10), uint8(1))
	f.Add([]byte{23, 3, 3, 0xff, 0xff}, uint32(0), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, split uint32, step uint8) {
		for b := data; ; {
			r, n, err := ParseRecord(b)
			if err != nil || n == 0 {
				break
			}
			if n > len(b) || n != RecordHeaderLen+len(r.Payload) || len(r.Payload) > MaxRecordLen {
				t.Fatalf("record of %d bytes from %d", n, len(b))
			}
			b = b[n:]
		}
		cut := int(split % uint32(len(data)+1))
		sides := [2][]byte{data[:cut], data[cut:]}
		var fed [2]int64
		c := NewConn(keys, Handler{
			Data: func(side int, d []byte, end int64) {
				if end > fed[side] || len(d) > 1<<14+256 {
					t.Fatalf("plaintext of %d bytes ending at %d after %d fed", len(d), end, fed[side])
				}
			},
		})
		size := int(step)%64 + 1
		for sides[0] != nil || sides[1] != nil {
			for s := range 2 {
				if len(sides[s]) == 0 {
					sides[s] = nil
					continue
				}
				n := min(size, len(sides[s]))
				fed[s] += int64(n)
				c.Feed(s, sides[s][:n])
				sides[s] = sides[s][n:]
			}
		}
		c.Close()
		if st := c.State(); st == Failed && c.Err() == nil {
			t.Fatal("failed without an error")
		}
	})
}
