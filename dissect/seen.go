package dissect

import "github.com/kdissect/kdissect/reassembly"

// Seen is what a pipeline has read and found, shown or not, so that a run that shows no
// message can say why: the user must be able to tell "no Kafka here" from "it failed".
type Seen struct {
	// Files, Packets and TCP count the capture files read (File, FileFrom), their packets,
	// and those that carried TCP.
	Files, Packets, TCP int
	// Conns counts the TCP connections per server port (the port the connection's first
	// packet, or its SYN, went to); TLS counts those of them whose TLS was not decrypted.
	Conns, TLS map[uint16]int
	// Decoded counts the Kafka messages decoded, before the filters.
	Decoded int
}

// Seen returns what the pipeline has read and found so far.
func (p *Pipeline) Seen() Seen { return p.seen }

// event counts what a decoder found.
func (s *Seen) event(ev event) {
	switch ev.kind {
	case evStart:
		if s.Conns == nil {
			s.Conns = map[uint16]int{}
		}
		s.Conns[ev.conn.Server.Port()]++
	case evEntry:
		s.Decoded++
	case evNotice:
		if ev.notice.Kind == reassembly.NoticeTLS { // TLS notices are about what was not decrypted
			if s.TLS == nil {
				s.TLS = map[uint16]int{}
			}
			s.TLS[ev.conn.Server.Port()]++
		}
	}
}
