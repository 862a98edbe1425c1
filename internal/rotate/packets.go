package rotate

import (
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/kdissect/kdissect/capture"
)

// Packets writes the packets of a live capture (it is a capture.Tap) to a pcapng file per
// period.
type Packets struct {
	*rotator
	out *periodPackets
}

// NewPackets begins the first period's file in d at once; iface names the capture's
// interface in the files.
func NewPackets(d *Dir, p Policy, iface string, warn func(error)) *Packets {
	out := &periodPackets{iface: iface}
	return &Packets{rotator: newRotator(d, p, warn, out, time.Now), out: out}
}

type periodPackets struct {
	iface string
	ng    *capture.NgFile // nil: the period writes nothing
}

func (p *periodPackets) start(w io.Writer) {
	p.ng = nil
	if w != nil {
		p.ng = capture.NewNgFile(w, p.iface, "")
	}
}

func (p *periodPackets) end() error {
	if p.ng == nil {
		return nil
	}
	return p.ng.Flush()
}

// Packet writes one packet to the current period's file.
func (p *Packets) Packet(ci gopacket.CaptureInfo, lt layers.LinkType, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out.ng == nil {
		return
	}
	p.check(p.out.ng.Write(ci, lt, data))
}
