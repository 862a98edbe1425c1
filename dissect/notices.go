package dissect

import (
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/reassembly"
)

// Under a filter that chooses messages (--errors, --api, -Y, ...), a notice (bytes lost, a
// port taken as Kafka, TLS) is shown only when its connection shows a message: beside those
// messages it matters, and among the few a filter keeps, the notices of every other connection
// drown them. A connection's notices are held until it shows its first message, shown just
// before it, and the later ones as they come; those of a connection that ends with no message
// shown are counted as left out (Pipeline.NoticesLeftOut). --stream alone chooses a
// connection, not messages: its notices are shown as they come.

// MaxHeldNotices is how many notices a connection holds before its first message shown; the
// later ones are counted and dropped, so that a connection of lost bytes and no frame does
// not hold memory without bound.
const MaxHeldNotices = 16

// heldNotices are the notices of the connections that have shown no message yet.
type heldNotices struct {
	byStream map[int][]reassembly.Notice
	// shown holds the connections that have shown a message, until they end.
	shown map[int]bool
	// unshownPorts are the ports, per file (Seen.Files when it was read), whose detection
	// notices were all left out: the port is reported once, by any connection on it, so it
	// counts once.
	unshownPorts map[[2]int]bool
	// leftOut counts the notices left out with their connections; crowded, those dropped
	// beyond MaxHeldNotices.
	leftOut, crowded int
}

// NoticesLeftOut says how many notices a filter left out: quiet, those of connections that
// showed no message; crowded, those beyond the first MaxHeldNotices of a connection before its
// first message shown.
func (p *Pipeline) NoticesLeftOut() (quiet, crowded int) {
	if p.sel.held == nil {
		return 0, 0
	}
	return p.sel.held.leftOut + len(p.sel.held.unshownPorts), p.sel.held.crowded
}

// holdsNotices reports whether the filter chooses messages by more than their connection, so
// that notices wait for their connection's messages.
func (f *filter) holdsNotices() bool {
	s := f.sel
	s.Stream = -1
	return s.Filters()
}

// notice shows a notice, or holds it until its connection shows a message.
func (p *Pipeline) notice(n reassembly.Notice) {
	if p.sel.filter != nil && !p.sel.filter.streamOK(n.Conn.ID) {
		return
	}
	h := p.sel.held
	if h == nil || h.shown[n.Conn.ID] {
		p.showNotice(n)
		return
	}
	if n.Kind == reassembly.NoticeDetected && p.sel.detected[n.Conn.Server.Port()] {
		return // the port is reported already
	}
	if len(h.byStream[n.Conn.ID]) >= MaxHeldNotices {
		h.crowded++
		return
	}
	h.byStream[n.Conn.ID] = append(h.byStream[n.Conn.ID], n)
}

// showNotice shows a notice; a port taken as Kafka is reported once per file.
func (p *Pipeline) showNotice(n reassembly.Notice) {
	if n.Kind == reassembly.NoticeDetected {
		port := n.Conn.Server.Port()
		if p.sel.detected[port] {
			return
		}
		p.sel.detected[port] = true
		if p.sel.held != nil {
			delete(p.sel.held.unshownPorts, [2]int{p.seen.Files, int(port)})
		}
	}
	if p.full() {
		return
	}
	src, dst := endpoints(n.Conn, n.Dir)
	p.shown.notices++
	p.written()
	shown := &model.Notice{Frame: n.Packet, Time: n.Time, Stream: n.Conn.ID, Src: src, Dst: dst, Text: n.Msg}
	if p.cfg.OnNotice != nil {
		p.cfg.OnNotice(shown)
	}
	p.wrote(p.out.Notice(shown))
}

// showingStream is told that a connection shows a message: the notices it held come first.
func (p *Pipeline) showingStream(stream int) {
	h := p.sel.held
	if h == nil || h.shown[stream] {
		return
	}
	h.shown[stream] = true
	held := h.byStream[stream]
	delete(h.byStream, stream)
	for _, n := range held {
		p.showNotice(n)
	}
}

// closedNotices forgets a connection that ended; the notices it held were left out.
func (p *Pipeline) closedNotices(stream int) {
	h := p.sel.held
	if h == nil {
		return
	}
	for _, n := range h.byStream[stream] {
		switch {
		case p.full():
			// The run stops at its limit of messages: nothing is left out by the filter.
		case n.Kind != reassembly.NoticeDetected:
			h.leftOut++
		case !p.sel.detected[n.Conn.Server.Port()]:
			h.unshownPorts[[2]int{p.seen.Files, int(n.Conn.Server.Port())}] = true
		}
	}
	delete(h.byStream, stream)
	delete(h.shown, stream)
}
