package reassembly

import (
	"strings"
	"testing"
)

// probe appends a TCP keep-alive probe from one side: the sequence number one below the next
// byte, with no data or the one byte given (a byte already acknowledged, or any byte: RFC 1122
// lets the probe carry "one garbage octet").
func (b *builder) probe(toServer bool, data []byte) {
	s := tcpSeg{toServer: toServer, seq: b.cseq - 1, ack: b.sseq, flags: "A", data: data}
	if !toServer {
		s.seq, s.ack = b.sseq-1, b.cseq
	}
	b.segs = append(b.segs, s)
}

// ack appends a segment with no data from one side, acknowledging everything the other sent:
// the answer to a keep-alive probe, or an ordinary ACK.
func (b *builder) ack(toServer bool) {
	s := tcpSeg{toServer: toServer, seq: b.cseq, ack: b.sseq, flags: "A"}
	if !toServer {
		s.seq, s.ack = b.sseq, b.cseq
	}
	b.segs = append(b.segs, s)
}

// Keep-alive probes, and the ACKs that answer them, are no data, no loss and no
// retransmission: they change neither the frames nor the notices, whether the connection's
// start was captured or the capture starts at a probe (a quiet connection, captured while
// idle).
func TestAssemblerKeepAlive(t *testing.T) {
	req, resp := tframe('K', 20, 1), tframe('K', 60, 2)
	const synced = "dir 0 25 bytes at 0 packets 4-4; dir 1 65 bytes at 0 packets 5-5; " +
		"dir 0 25 bytes at 25 packets 12-12; dir 1 65 bytes at 65 packets 13-13"
	for _, tc := range []struct {
		name string
		// build adds the connection's segments; want lists its frames, notices the texts of
		// its notices in order.
		build   func(b *builder)
		want    string
		notices []string
	}{{
		name:  "probes with no data",
		build: probing(req, resp, nil, nil),
		want:  synced,
	}, {
		name:  "probes with the byte acknowledged",
		build: probing(req, resp, req[len(req)-1:], resp[len(resp)-1:]),
		want:  synced,
	}, {
		name:  "probes with another byte",
		build: probing(req, resp, []byte{0}, []byte{0}),
		want:  synced,
	}, {
		name:  "capture starts at the client's probe",
		build: startsAtProbe(req, resp, true),
		want:  "dir 0 25 bytes at 0 packets 3-3; dir 1 65 bytes at 0 packets 4-4",
	}, {
		name:  "capture starts at the broker's probe",
		build: startsAtProbe(req, resp, false),
		want:  "dir 0 25 bytes at 0 packets 3-3; dir 1 65 bytes at 0 packets 4-4",
	}, {
		name: "capture starts at probes both ways, several",
		build: func(b *builder) {
			for range 3 {
				b.probe(true, nil)
				b.ack(false)
				b.probe(false, nil)
				b.ack(true)
			}
			b.send(true, req)
			b.send(false, resp)
		},
		want: "dir 0 25 bytes at 0 packets 13-13; dir 1 65 bytes at 0 packets 14-14",
	}, {
		// A probe with a byte cannot be told from a segment of one byte of data: the capture
		// starts mid-stream there, and the byte is skipped, as any bytes before the first frame
		// found are.
		name: "capture starts at a probe with a byte",
		build: func(b *builder) {
			b.probe(true, []byte{0})
			b.ack(false)
			b.send(true, req)
			b.send(false, resp)
		},
		want:    "dir 0 25 bytes at 1 packets 3-3; dir 1 65 bytes at 0 packets 4-4",
		notices: []string{"1 byte at stream offset 0 skipped: no Kafka frame starts in it"},
	}, {
		// Not a probe: an ACK, then data further on. The bytes between were lost, and the
		// data that follows them is not held back waiting for them.
		name: "capture starts at an ACK, bytes lost after it",
		build: func(b *builder) {
			b.ack(true)
			b.cseq += 10
			b.send(true, req)
			b.send(false, resp)
		},
		want:    "dir 0 25 bytes at 10 packets 2-2; dir 1 65 bytes at 0 packets 3-3",
		notices: []string{"10 bytes lost (not captured) at stream offset 0"},
	}, {
		name: "capture starts at an ACK",
		build: func(b *builder) {
			b.ack(true)
			b.ack(false)
			b.send(true, req)
			b.send(false, resp)
		},
		want: "dir 0 25 bytes at 0 packets 3-3; dir 1 65 bytes at 0 packets 4-4",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synced := strings.HasPrefix(tc.name, "probes")
			b := newBuilder(1000, 9000, synced)
			tc.build(b)
			b.fin()
			for _, lent := range []bool{false, true} {
				h := run(t, Options{ReuseFrames: lent}, b.segs)
				if got := frameList(h.frames); got != tc.want {
					t.Errorf("lent %v: frames %s\nwant   %s", lent, got, tc.want)
				}
				var got []string
				for _, n := range h.notices {
					got = append(got, n.Msg)
				}
				if strings.Join(got, "\n") != strings.Join(tc.notices, "\n") {
					t.Errorf("lent %v: notices %s\nwant %q", lent, h.noticeText(), tc.notices)
				}
			}
		})
	}
}

// probing builds a connection that exchanges req and resp, is probed twice by the client (with
// the data client) and once by the broker (with server), each probe answered, then exchanges
// them again.
func probing(req, resp, client, server []byte) func(b *builder) {
	return func(b *builder) {
		b.send(true, req)
		b.send(false, resp)
		for range 2 {
			b.probe(true, client)
			b.ack(false)
		}
		b.probe(false, server)
		b.ack(true)
		b.send(true, req)
		b.send(false, resp)
	}
}

// startsAtProbe builds a capture that starts at a keep-alive probe from the client (or the
// broker) and its answer, before a request and its response.
func startsAtProbe(req, resp []byte, client bool) func(b *builder) {
	return func(b *builder) {
		b.probe(client, nil)
		b.ack(!client)
		b.send(true, req)
		b.send(false, resp)
	}
}

// A keep-alive probe lies behind the stream, so gopacket holds nothing back for it: it calls
// for no flush (Assembler.gapWait), which visits every open connection.
func TestAssemblerKeepAliveNoFlush(t *testing.T) {
	req := tframe('K', 20, 1)
	b := newBuilder(1000, 9000, true)
	b.send(true, req)
	b.ack(false)
	b.probe(true, nil)
	b.ack(false)
	b.probe(true, req[len(req)-1:])
	a := New(&sink{}, Options{IsServerPort: func(p uint16) bool { return p == 9092 }})
	for i, s := range b.segs {
		a.Add(segment(t, i+1, s))
		if a.gapWait {
			t.Errorf("packet %d (seq %d, %d bytes) waits for a flush", i+1, s.seq, len(s.data))
		}
	}
	a.Close()
}
