package dissect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/reassembly"
)

// Seen is what a pipeline has read and found, shown or not, so that a run that shows no
// message can say why: the user must be able to tell "no Kafka here" from "it failed".
type Seen struct {
	// Files, Packets and TCP count the capture files read (File, Read), their packets,
	// and those that carried TCP.
	Files, Packets, TCP int
	// Conns counts the TCP connections per server port (the port the connection's first
	// packet, or its SYN, went to); TLS counts those of them whose TLS was not decrypted, and
	// NoSecrets those of these that were not for want of their secrets in the key log given.
	Conns, TLS, NoSecrets map[uint16]int
	// Decoded counts the Kafka messages decoded, before the filters.
	Decoded int
	// Idle counts the Kafka connections flushed and forgotten for being idle
	// (reassembly.Conn.Idle).
	Idle int
	// Streamed names the captures read as they arrived (from a pipe or FIFO).
	Streamed []string
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
	case evClose:
		if ev.conn.Idle {
			s.Idle++
		}
	case evNotice:
		if ev.notice.Kind == reassembly.NoticeTLS { // TLS notices are about what was not decrypted
			if s.TLS == nil {
				s.TLS = map[uint16]int{}
			}
			s.TLS[ev.conn.Server.Port()]++
			if ev.notice.NoSecrets {
				if s.NoSecrets == nil {
					s.NoSecrets = map[uint16]int{}
				}
				s.NoSecrets[ev.conn.Server.Port()]++
			}
		}
	}
}

// Explain says, when no message was shown, what was read and why nothing matched; "" when
// messages were shown. ports are the Kafka ports named (-p; none: detection); filtered says
// whether a filter was given.
func (c Seen) Explain(shown int, ports []string, filtered bool) string {
	if shown > 0 {
		return ""
	}
	conns := 0
	for _, n := range c.Conns {
		conns += n
	}
	var why []string
	switch {
	case c.Decoded > 0 && filtered:
		why = append(why, "the filters excluded all "+plural.Count(c.Decoded, "Kafka message"))
	case c.Decoded > 0:
		why = append(why, plural.Count(c.Decoded, "Kafka message")+" decoded, none shown")
	case len(ports) > 0 && conns == 0:
		why = append(why, fmt.Sprintf("no TCP connection to the ports -p names (%s)", strings.Join(ports, ",")))
	case len(ports) > 0:
		why = append(why, fmt.Sprintf("no Kafka message on the ports -p names (%s)", strings.Join(ports, ",")))
	default:
		why = append(why, "no Kafka request seen on any port")
	}
	for _, p := range sortedPorts(c.TLS) {
		why = append(why, c.tlsHint(p))
	}
	return fmt.Sprintf("no Kafka message shown: read %s (%d TCP) in %s, %d TCP %s%s; %s",
		plural.Count(c.Packets, "packet"), c.TCP, plural.Count(c.Files, "file"), conns, plural.Noun(conns, "connection"), portSummary(c.Conns), strings.Join(why, "; "))
}

// tlsHint says what to do about the TLS connections to port that were not decrypted: give a
// key log, or (when the one given has none of their secrets) give the right one.
func (c Seen) tlsHint(port uint16) string {
	n, missed := c.TLS[port], c.NoSecrets[port]
	seen := fmt.Sprintf("TLS seen on port %d (%s)", port, plural.Count(n, "connection"))
	switch {
	case missed == 0:
		return fmt.Sprintf("%s: try -p %d --tls-keylog FILE", seen, port)
	case missed == n:
		return seen + ": the key log given has no keys for " + plural.Pick(n, "this session", "these sessions")
	}
	return fmt.Sprintf("%s: the key log given has no keys for %d of these sessions", seen, missed)
}

// portSummary lists the server ports of the connections, the busiest first, at most 8.
func portSummary(conns map[uint16]int) string {
	if len(conns) == 0 {
		return ""
	}
	ports := sortedPorts(conns)
	slices.SortStableFunc(ports, func(a, b uint16) int { return conns[b] - conns[a] })
	var parts []string
	for i, p := range ports {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("%d more", len(ports)-8))
			break
		}
		parts = append(parts, fmt.Sprint(p))
	}
	return fmt.Sprintf(" to %s %s", plural.Noun(len(ports), "port"), strings.Join(parts, ", "))
}

func sortedPorts(m map[uint16]int) []uint16 {
	ps := make([]uint16, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}
