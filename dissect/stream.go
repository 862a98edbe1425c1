package dissect

import (
	"net/netip"
	"time"

	"github.com/kdissect/kdissect/reassembly"
)

// Stream is a connection whose two directions come as byte streams rather than as packets:
// from a proxy, a pipe, or a program's own socket. Its messages go through the pipeline as a
// capture's do: numbered, paired, filtered, counted and shown as they complete.
type Stream struct {
	p *Pipeline
	s *reassembly.Stream
}

// Stream starts a connection between client and server, whose streams begin at their first
// bytes. It is shown as it is written, so it must not be written while File or Read run.
func (p *Pipeline) Stream(client, server netip.AddrPort) *Stream {
	c := &reassembly.Conn{Client: client, Server: server, SYN: true}
	return &Stream{p: p, s: reassembly.NewStream(p.newDecoder(p.handle), c, p.options())}
}

// Write takes the next bytes the client (reassembly.ToServer) or the server sent, seen at
// position pos (a packet number, or any count that grows along the input) and time t. data is
// not kept after Write returns.
func (s *Stream) Write(d reassembly.Dir, data []byte, pos int, t time.Time) {
	s.p.setStart(t)
	s.s.Write(d, data, pos, t)
}

// Lost reports n bytes of direction d that the input lost before what comes next.
func (s *Stream) Lost(d reassembly.Dir, n int, pos int, t time.Time) { s.s.Lost(d, n, pos, t) }

// Close ends the connection: what is left is decided and shown.
func (s *Stream) Close() { s.s.Close() }
