//go:build linux

package capture

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"golang.org/x/net/bpf"
)

// Ring and timing of a live capture. A TPACKET_V3 block is handed to us
// when it is full or blockTimeout after its first packet, which bounds how
// late a quiet connection's packets show up; pollTimeout bounds how long
// Stop waits.
const (
	liveBlockSize = 1 << 20 // holds the largest packet the kernel hands over (64 KiB with GSO)
	// 32 MiB of ring: the kernel fills its blocks in turn, so all of them become resident
	// memory. At 64 MiB a live summary peaked at 116 MB; at 32 MiB, 81 to 94 MB, and it kept
	// up with 80 MB/s of Fetch and Produce traffic on loopback without a drop (kbench gen
	// -rate 0 -with 'kdissect live ...').
	liveNumBlocks    = 32
	liveBlockTimeout = 20 * time.Millisecond
	livePollTimeout  = 100 * time.Millisecond
)

// ARPHRD_* device types whose frames start with an Ethernet header.
const (
	arphrdEther    = 1
	arphrdLoopback = 772
)

// liveSource reads packets from an AF_PACKET ring.
type liveSource struct {
	name string
	tp   *afpacket.TPacket
	lt   layers.LinkType
	ng   *pcapgo.NgWriter
	warn func(error)
	// bind, sockType and filter make the socket again after the interface went away.
	bind     string
	sockType afpacket.OptSocketType
	filter   []bpf.RawInstruction
	// before counts what the sockets closed before this one received and dropped.
	before  KernelStats
	started time.Time
	stopped atomic.Bool
	stats   KernelStats
	closed  bool
}

func openLive(iface string, opt LiveOptions) (*Reader, error) {
	spec := filterSpec{ports: opt.Ports, snaplen: MaxCaptureLength}
	bind, sockType, lt, err := liveDevice(iface, &spec)
	if err != nil {
		return nil, err
	}
	filter, err := spec.assemble(iface)
	if err != nil {
		return nil, err
	}
	s := &liveSource{name: iface, lt: lt, warn: opt.Warn, bind: bind, sockType: sockType, filter: filter}
	if err := s.open(); err != nil {
		return nil, err
	}
	s.started = time.Now()
	if opt.Save != nil {
		if s.ng, err = saveWriter(opt.Save, iface, spec, lt); err != nil {
			s.tp.Close()
			return nil, err
		}
	}
	return &Reader{name: iface, src: s, closer: s, streaming: true, tap: opt.Tap}, nil
}

// liveDevice says what to bind the socket of a capture on iface to ("" for every interface),
// its type and the link type of what it reads; it sets the link of spec and which of the
// packets sent it drops.
func liveDevice(iface string, spec *filterSpec) (bind string, sockType afpacket.OptSocketType, lt layers.LinkType, err error) {
	sockType, lt = afpacket.SocketDgram, layers.LinkTypeRaw
	if iface == "any" {
		// Drop the sent copies on the loopback interfaces only: elsewhere
		// a packet the host sends is seen once.
		ifs, err := net.Interfaces()
		if err != nil {
			return "", 0, 0, fmt.Errorf("listing interfaces: %w", err)
		}
		for _, i := range ifs {
			if i.Flags&net.FlagLoopback != 0 {
				spec.dropOutgoing = true
				spec.outIfindex = append(spec.outIfindex, uint32(i.Index))
			}
		}
	} else {
		ifc, err := net.InterfaceByName(iface)
		if err != nil {
			return "", 0, 0, noInterface(iface)
		}
		bind = ifc.Name
		spec.dropOutgoing = ifc.Flags&net.FlagLoopback != 0
		switch deviceType(ifc.Name) {
		case arphrdEther, arphrdLoopback:
			sockType, lt = afpacket.SocketRaw, layers.LinkTypeEthernet
		}
	}
	spec.link = filterIP
	if lt == layers.LinkTypeEthernet {
		spec.link = filterEthernet
	}
	return bind, sockType, lt, nil
}

// assemble builds the kernel filter of s. With too many port ranges for the kernel, it keeps
// all TCP there (and s says so) and lets the reassembly drop the other ports.
func (s *filterSpec) assemble(iface string) ([]bpf.RawInstruction, error) {
	prog, err := s.build()
	if err != nil {
		s.ports = nil
		if prog, err = s.build(); err != nil {
			return nil, err
		}
	}
	filter, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("capturing on %s: filter: %w", iface, err)
	}
	return filter, nil
}

// saveWriter starts the pcapng copy of a capture on iface, written to w; its header is
// written at once, so that a file that cannot be written fails now.
func saveWriter(w io.Writer, iface string, spec filterSpec, lt layers.LinkType) (*pcapgo.NgWriter, error) {
	ng, err := pcapgo.NewNgWriterInterface(w, pcapgo.NgInterface{
		Name:                iface,
		Filter:              spec.String(),
		OS:                  runtime.GOOS,
		LinkType:            lt,
		SnapLength:          spec.snaplen,
		TimestampResolution: 9,
	}, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{
		Hardware:    runtime.GOARCH,
		OS:          runtime.GOOS,
		Application: "kdissect",
	}})
	if err == nil {
		err = ng.Flush()
	}
	if err != nil {
		return nil, fmt.Errorf("writing the capture: %w", err)
	}
	return ng, nil
}

// open makes the packet socket and its ring, and sets the filter.
func (s *liveSource) open() error {
	tp, err := afpacket.NewTPacket(
		afpacket.OptInterface(s.bind),
		s.sockType,
		afpacket.TPacketVersion3,
		afpacket.OptFrameSize(afpacket.DefaultFrameSize),
		afpacket.OptBlockSize(liveBlockSize),
		afpacket.OptNumBlocks(liveNumBlocks),
		afpacket.OptBlockTimeout(liveBlockTimeout),
		afpacket.OptPollTimeout(livePollTimeout),
	)
	if err != nil {
		return liveError(s.name, "AF_PACKET socket", err)
	}
	s.tp = tp
	if err := s.attach(s.filter); err != nil {
		tp.Close()
		return liveError(s.name, "attaching the filter", err)
	}
	return nil
}

// reopen waits for the interface to come back after its socket failed (the interface went
// down or away), and captures on it again; it returns io.EOF if Stop is called meanwhile.
func (s *liveSource) reopen(cause error) error {
	s.updateStats()
	s.before.Received += s.stats.Received
	s.before.Dropped += s.stats.Dropped
	s.stats = KernelStats{}
	s.tp.Close()
	if s.warn != nil {
		s.warn(fmt.Errorf("capturing on %s: %v (the interface went down?); waiting for it to come back", s.name, cause))
	}
	for !s.stopped.Load() {
		time.Sleep(livePollTimeout)
		if ifc, err := net.InterfaceByName(s.bind); s.bind != "" && (err != nil || ifc.Flags&net.FlagUp == 0) {
			continue
		}
		if err := s.open(); err == nil {
			if s.warn != nil {
				s.warn(fmt.Errorf("capturing on %s again", s.name))
			}
			return nil
		}
	}
	s.tp = nil
	return io.EOF
}

// attach sets the kernel filter. The socket has received packets since it
// was bound, unfiltered: as libpcap does, a filter that rejects everything
// goes first, the ring is drained, and only then the real filter is set, so
// that the capture holds only packets that pass it.
func (s *liveSource) attach(filter []bpf.RawInstruction) error {
	reject, err := bpf.Assemble([]bpf.Instruction{bpf.RetConstant{Val: 0}})
	if err != nil {
		return err
	}
	if err := s.tp.SetBPF(reject); err != nil {
		return err
	}
	for {
		_, _, err := s.tp.ZeroCopyReadPacketData()
		if errors.Is(err, afpacket.ErrTimeout) {
			break
		}
		if err != nil {
			return err
		}
	}
	if err := s.tp.InitSocketStats(); err != nil {
		return err
	}
	return s.tp.SetBPF(filter)
}

// deviceType reads the ARPHRD_* type of an interface from sysfs; 0 if it
// cannot be read.
func deviceType(name string) int {
	b, err := os.ReadFile("/sys/class/net/" + name + "/type")
	if err != nil {
		return 0
	}
	var t int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d", &t); err != nil {
		return 0
	}
	return t
}

func (s *liveSource) read() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	for {
		if s.stopped.Load() {
			return nil, gopacket.CaptureInfo{}, 0, io.EOF
		}
		data, ci, err := s.tp.ZeroCopyReadPacketData()
		if errors.Is(err, afpacket.ErrTimeout) {
			// Quiet: a good time to get what was captured onto the disk.
			if s.ng != nil {
				if err := s.ng.Flush(); err != nil {
					return nil, gopacket.CaptureInfo{}, 0, fmt.Errorf("writing the capture: %w", err)
				}
			}
			continue
		}
		if err != nil {
			if err := s.reopen(err); err != nil {
				return nil, gopacket.CaptureInfo{}, 0, err
			}
			continue
		}
		ci.AncillaryData = nil
		if s.ng != nil {
			w := ci
			w.InterfaceIndex = 0 // the file's one interface
			if err := s.ng.WritePacket(w, data); err != nil {
				return nil, gopacket.CaptureInfo{}, 0, fmt.Errorf("writing the capture: %w", err)
			}
		}
		return data, ci, s.lt, nil
	}
}

func (s *liveSource) stop() { s.stopped.Store(true) }

func (s *liveSource) kernelStats() KernelStats {
	if !s.closed {
		s.updateStats()
	}
	return KernelStats{Received: s.before.Received + s.stats.Received, Dropped: s.before.Dropped + s.stats.Dropped}
}

// updateStats adds the socket's counters since the last call (reading them
// resets them).
func (s *liveSource) updateStats() {
	if s.tp == nil {
		return
	}
	v2, v3, err := s.tp.SocketStats()
	if err != nil {
		return
	}
	// afpacket accumulates; only the counters of the version in use move.
	s.stats = KernelStats{
		Received: uint64(v2.Packets() + v3.Packets()),
		Dropped:  uint64(v2.Drops() + v3.Drops()),
	}
}

// Close ends the capture: it writes the kernel's counters into the pcapng
// file, flushes it and releases the socket and its ring.
func (s *liveSource) Close() error {
	if s.closed {
		return nil
	}
	s.stop()
	s.updateStats()
	s.closed = true
	var err error
	if s.ng != nil {
		now := time.Now()
		err = s.ng.WriteInterfaceStats(0, pcapgo.NgInterfaceStatistics{
			LastUpdate:      now,
			StartTime:       s.started,
			EndTime:         now,
			PacketsReceived: s.before.Received + s.stats.Received,
			PacketsDropped:  s.before.Dropped + s.stats.Dropped,
		})
		if ferr := s.ng.Flush(); err == nil {
			err = ferr
		}
		if err != nil {
			err = fmt.Errorf("writing the capture: %w", err)
		}
	}
	if s.tp != nil {
		s.tp.Close()
	}
	return err
}
