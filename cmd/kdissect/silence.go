package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kdissect/kdissect/dissect"
)

// explain says, when no message was shown, what was read and why nothing matched; "" when
// messages were shown. ports are the Kafka ports -p named (none: detection); filtered says
// whether a filter was given.
func explain(c dissect.Seen, shown int, ports []string, filtered bool) string {
	if shown > 0 {
		return ""
	}
	files := "1 file"
	if c.Files != 1 {
		files = fmt.Sprintf("%d files", c.Files)
	}
	conns := 0
	for _, n := range c.Conns {
		conns += n
	}
	var why []string
	switch {
	case c.Decoded > 0 && filtered:
		why = append(why, fmt.Sprintf("the filters excluded all %d Kafka messages", c.Decoded))
	case c.Decoded > 0:
		why = append(why, fmt.Sprintf("%d Kafka messages were decoded but none shown", c.Decoded))
	case len(ports) > 0 && conns == 0:
		why = append(why, fmt.Sprintf("no TCP connection to the ports -p names (%s)", strings.Join(ports, ",")))
	case len(ports) > 0:
		why = append(why, fmt.Sprintf("no Kafka message on the ports -p names (%s)", strings.Join(ports, ",")))
	default:
		why = append(why, "no Kafka request seen on any port")
	}
	for _, p := range sortedPorts(c.TLS) {
		why = append(why, fmt.Sprintf("TLS seen on port %d (%d connections): try -p %d --tls-keylog FILE", p, c.TLS[p], p))
	}
	return fmt.Sprintf("no Kafka message shown: read %d packets (%d TCP) in %s, %d TCP connections%s; %s",
		c.Packets, c.TCP, files, conns, portSummary(c.Conns), strings.Join(why, "; "))
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
