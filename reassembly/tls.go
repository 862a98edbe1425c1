package reassembly

import (
	"errors"
	"fmt"
	"time"

	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
)

// tlsConn routes the two directions of a connection that starts with TLS through a decryptor.
// The stream's framers (outer) then only count ciphertext offsets, so that the stream's
// arithmetic on sequence numbers holds; the plaintext goes to a framer of its own per
// direction (inner), whose frames count offsets in the decrypted stream. Each plaintext chunk
// is tied to the packet that carried the last byte of its record.
type tlsConn struct {
	dec   *tlsdec.Conn
	keys  *tlsdec.KeyLog
	outer [2]*framer
	inner [2]*framer
	// spans of each side's ciphertext not yet consumed, in the decryptor's offsets.
	spans [2][]span
	fed   [2]int64
	// dead: the side had started as something else than TLS, and is ignored.
	dead     [2]bool
	finished [2]bool
	// desc is "TLS 1.3 TLS_AES_128_GCM_SHA256" once decryption starts.
	desc string
	// noticed: the connection's TLS notice has been given.
	noticed bool
}

// startTLS makes f and its peer the two sides of a TLS connection.
func startTLS(f *framer, keys *tlsdec.KeyLog) *tlsConn {
	t := &tlsConn{keys: keys, outer: [2]*framer{f, f.peer}}
	t.dec = tlsdec.NewConn(keys, tlsdec.Handler{Data: t.data, State: t.state})
	for i, o := range t.outer {
		if o == nil {
			continue
		}
		if o.started && o != f {
			// The other direction began as something else: leave it be, as before.
			t.dead[i] = true
		}
		o.tlsc, o.started = t, true
		o.buf, o.own, o.spans = nil, nil, nil
		in := &framer{check: o.check, maxSize: o.maxSize, maxBuffer: o.maxBuffer, spillOver: o.spillOver, spillDir: o.spillDir, synced: true, started: true, notice: o.notice, pool: o.pool}
		emit := o.emit
		in.emit = func(fr Frame) {
			fr.TLS = t.desc
			emit(fr)
		}
		t.inner[i] = in
	}
	return t
}

func (t *tlsConn) side(f *framer) int {
	if t.outer[1] == f {
		return 1
	}
	return 0
}

// add takes ciphertext of f's direction; spans are stream offsets, from f.base.
func (t *tlsConn) add(f *framer, data []byte, spans []span) {
	s := t.side(f)
	base := f.base
	f.base += int64(len(data))
	if t.dead[s] {
		return
	}
	for _, sp := range spans {
		sp.off = sp.off - base + t.fed[s]
		t.spans[s] = append(t.spans[s], sp)
	}
	t.fed[s] += int64(len(data))
	t.dec.Feed(s, data)
	t.prune(s)
}

// prune drops the spans before the first byte the decryptor still holds.
func (t *tlsConn) prune(s int) {
	keep := t.dec.Pending(s)
	sp := t.spans[s]
	i := 0
	for i+1 < len(sp) && sp[i+1].off <= keep {
		i++
	}
	if i > 0 {
		t.spans[s] = append(sp[:0], sp[i:]...)
	}
}

// at is the packet and time that carried the byte before offset end of side s.
func (t *tlsConn) at(s int, end int64) (int, time.Time) {
	sp := t.spans[s]
	if len(sp) == 0 {
		return 0, time.Time{}
	}
	r := sp[0]
	for _, x := range sp[1:] {
		if x.off >= end {
			break
		}
		r = x
	}
	return r.pkt, r.time
}

func (t *tlsConn) data(s int, plain []byte, end int64) {
	in := t.inner[s]
	if in == nil {
		return
	}
	pkt, tm := t.at(s, end)
	in.write(plain, pkt, tm)
}

func (t *tlsConn) state(st tlsdec.State, s int, end int64) {
	info := t.dec.Info()
	if st == tlsdec.Decrypting {
		t.desc = info.String()
		return
	}
	var msg string
	noSecrets := false
	switch st {
	case tlsdec.NoKeys:
		noSecrets = t.keys.Len() > 0 || t.keys.Following()
		switch {
		case !noSecrets:
			msg = "encrypted; pass --tls-keylog FILE to decrypt"
		case len(info.Missing) == 4:
			msg = fmt.Sprintf("encrypted; the key log has no secrets for this connection (client random %s)", info.ClientRandomHex())
		case len(info.ClientRandom) > 0:
			msg = fmt.Sprintf("encrypted; the key log has no %s for this connection (client random %s)",
				joinLabels(info.Missing), info.ClientRandomHex())
		default:
			msg = "encrypted; the key log has no secrets for this connection"
		}
	case tlsdec.Unsupported:
		msg = "encrypted; kdissect cannot decrypt this version or cipher suite"
	case tlsdec.Failed:
		var de *tlsdec.DecryptError
		if errors.As(t.dec.Err(), &de) {
			msg = "decryption failed: " + de.Error()
		} else {
			msg = "cannot be decrypted: " + t.dec.Err().Error()
		}
	default:
		return
	}
	t.notice(s, end, info.Describe()+": "+msg, noSecrets)
}

func joinLabels(ls []string) string {
	switch len(ls) {
	case 0:
		return "secrets"
	case 1:
		return ls[0]
	}
	s := ls[0]
	for i, l := range ls[1:] {
		if i == len(ls)-2 {
			s += " or " + l
		} else {
			s += ", " + l
		}
	}
	return s
}

// notice gives the connection's TLS notice, once.
func (t *tlsConn) notice(s int, end int64, msg string, noSecrets bool) {
	if t.noticed {
		return
	}
	t.noticed = true
	o := t.outer[s]
	if o == nil {
		o, s = t.outer[1-s], 1-s
	}
	pkt, tm := t.at(s, end)
	o.notice(Notice{Kind: NoticeTLS, Packet: pkt, Time: tm, Msg: msg, NoSecrets: noSecrets})
}

// gap reports n lost bytes of f's direction.
func (t *tlsConn) gap(f *framer, n int, pkt int, tm time.Time) {
	s := t.side(f)
	f.base += int64(n)
	if t.dead[s] {
		return
	}
	before := t.dec.State()
	at := t.fed[s]
	t.dec.Lost(s, n)
	t.spans[s] = append(t.spans[s][:0], span{off: at, pkt: pkt, time: tm})
	if before == tlsdec.Decrypting && t.dec.State() == tlsdec.Decrypting {
		f.notice(Notice{Kind: NoticeGap, Packet: pkt, Time: tm,
			Msg: fmt.Sprintf("%s lost (not captured) at stream offset %d: TLS records after a loss cannot be decrypted, so this direction is not decoded any further", plural.Count(n, "byte"), f.base-int64(n))})
		t.inner[s].finish()
	}
}

// finish ends f's direction; the first call ends the decryption.
func (t *tlsConn) finish(f *framer) {
	s := t.side(f)
	if t.finished[s] {
		return
	}
	t.finished[s] = true
	t.dec.Close()
	if t.dec.State() == tlsdec.Handshake && !t.noticed {
		info := t.dec.Info()
		e := t.fed[s]
		t.notice(s, e, info.Describe()+": encrypted; the TLS handshake is not complete in the capture, so it cannot be decrypted", false)
	}
	if !t.dead[s] {
		t.inner[s].finish()
	}
}
