package capture

import (
	"fmt"
	"strconv"
	"strings"
)

// Ports is a set of TCP ports.
type Ports struct{ bits [1 << 16 / 64]uint64 }

// ParsePorts reads ports as a user lists them: each spec is a comma list of ports ("9092")
// and inclusive ranges ("9093-9095").
func ParsePorts(specs []string) (*Ports, error) {
	ps := &Ports{}
	for _, spec := range specs {
		for _, s := range strings.Split(spec, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			lo, hi, isRange := strings.Cut(s, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.ParseUint(lo, 10, 16)
			b, err2 := strconv.ParseUint(hi, 10, 16)
			if err1 != nil || err2 != nil || a == 0 || b < a {
				return nil, fmt.Errorf("bad port or range %q", s)
			}
			for p := a; p <= b; p++ {
				ps.bits[p/64] |= 1 << (p % 64)
			}
		}
	}
	return ps, nil
}

// Has reports whether port is in the set.
func (ps *Ports) Has(port uint16) bool { return ps.bits[port/64]&(1<<(port%64)) != 0 }

// Ranges returns the set as the fewest ranges, in order.
func (ps *Ports) Ranges() []PortRange {
	var rs []PortRange
	for p := 1; p <= 65535; p++ {
		if !ps.Has(uint16(p)) {
			continue
		}
		if n := len(rs); n > 0 && int(rs[n-1].Hi) == p-1 {
			rs[n-1].Hi = uint16(p)
		} else {
			rs = append(rs, PortRange{Lo: uint16(p), Hi: uint16(p)})
		}
	}
	return rs
}

// String lists the set for a user: "port 9092", "ports 9092,9093-9095".
func (ps *Ports) String() string {
	rs := ps.Ranges()
	parts := make([]string, len(rs))
	for i, r := range rs {
		if r.Lo == r.Hi {
			parts[i] = fmt.Sprint(r.Lo)
		} else {
			parts[i] = fmt.Sprintf("%d-%d", r.Lo, r.Hi)
		}
	}
	s := strings.Join(parts, ",")
	if len(rs) == 1 && rs[0].Lo == rs[0].Hi {
		return "port " + s
	}
	return "ports " + s
}
