package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/reassembly"
)

// runCounts is what a run read and found, so that a run that shows no message can say why:
// the user must be able to tell "no Kafka here" from "kdissect failed".
type runCounts struct {
	files, packets, tcp int
	// conns counts the TCP connections per server port (the port a connection's first packet,
	// or its SYN, went to); tls counts those that carry TLS kdissect could not decrypt.
	conns, tls map[uint16]int
	// decoded counts the Kafka messages decoded, before the filters; shown those shown.
	decoded, shown int
}

func newRunCounts() *runCounts {
	return &runCounts{conns: map[uint16]int{}, tls: map[uint16]int{}}
}

// event counts what a decoder found.
func (c *runCounts) event(ev event) {
	switch ev.kind {
	case evStart:
		c.conns[ev.conn.Server.Port()]++
	case evEntry:
		c.decoded++
	case evNotice:
		if ev.notice.Kind == reassembly.NoticeTLS { // TLS notices are about what was not decrypted
			c.tls[ev.conn.Server.Port()]++
		}
	}
}

// explain says, when no message was shown, what was read and why nothing matched; "" when
// messages were shown. ports are the Kafka ports -p named (none: detection); filtered says
// whether a filter was given.
func (c *runCounts) explain(ports []string, filtered bool) string {
	if c.shown > 0 {
		return ""
	}
	files := "1 file"
	if c.files != 1 {
		files = fmt.Sprintf("%d files", c.files)
	}
	conns := 0
	for _, n := range c.conns {
		conns += n
	}
	var why []string
	switch {
	case c.decoded > 0 && filtered:
		why = append(why, fmt.Sprintf("the filters excluded all %d Kafka messages", c.decoded))
	case c.decoded > 0:
		why = append(why, fmt.Sprintf("%d Kafka messages were decoded but none shown", c.decoded))
	case len(ports) > 0 && conns == 0:
		why = append(why, fmt.Sprintf("no TCP connection to the ports -p names (%s)", strings.Join(ports, ",")))
	case len(ports) > 0:
		why = append(why, fmt.Sprintf("no Kafka message on the ports -p names (%s)", strings.Join(ports, ",")))
	default:
		why = append(why, "no Kafka request seen on any port")
	}
	for _, p := range sortedPorts(c.tls) {
		why = append(why, fmt.Sprintf("TLS seen on port %d (%d connections): try -p %d --tls-keylog FILE", p, c.tls[p], p))
	}
	return fmt.Sprintf("no Kafka message shown: read %d packets (%d TCP) in %s, %d TCP connections%s; %s",
		c.packets, c.tcp, files, conns, portSummary(c.conns), strings.Join(why, "; "))
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
	word := "port"
	if len(ports) > 1 {
		word = "ports"
	}
	return fmt.Sprintf(" to %s %s", word, strings.Join(parts, ", "))
}

func sortedPorts(m map[uint16]int) []uint16 {
	ps := make([]uint16, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// read adds the counts of one capture file.
func (c *runCounts) read(st capture.Stats) {
	c.files++
	c.packets += st.Packets
	c.tcp += st.TCP
}
