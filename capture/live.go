package capture

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"syscall"
)

// LiveOptions tune a live capture.
type LiveOptions struct {
	// Ports are the Kafka broker ports. The kernel keeps only TCP segments
	// from or to one of them; with no ports it keeps every TCP segment.
	Ports []PortRange
	// Save, if not nil, receives every packet the kernel filter kept, as a
	// pcapng file, while the capture runs. Close flushes it.
	Save io.Writer
	// Tap, if not nil, is shown every packet the kernel filter kept, as it is read, before
	// the Reader returns it (the flight recorder's ring, rotating pcapng files).
	Tap Tap
	// Warn, if not nil, is told when the interface goes away (down, or deleted) and when the
	// capture, which waits for it, starts again.
	Warn func(error)
}

// KernelStats are the counters of a live capture's socket.
type KernelStats struct {
	// Received counts the packets the kernel filter kept, Dropped those of
	// them that were lost because the capture did not keep up.
	Received, Dropped uint64
}

// ErrPermission is wrapped by the error of OpenLive when the process may not
// open a packet socket.
var ErrPermission = errors.New("no permission to capture")

// ErrNoInterface is wrapped by the error of OpenLive for an interface that
// does not exist.
var ErrNoInterface = errors.New("no such interface")

// ErrLiveUnsupported is wrapped by the error of OpenLive on systems other
// than Linux.
var ErrLiveUnsupported = errors.New("live capture needs Linux")

// OpenLive starts capturing on the named network interface, or on every
// interface with "any". The Reader it returns gives the interface's TCP
// segments with Next, as for a file, numbered from 1; Next blocks until a
// packet arrives, and returns io.EOF once Stop has been called. Close stops
// the capture, flushes opt.Save and releases the socket.
//
// On Linux, OpenLive uses an AF_PACKET socket with a TPACKET_V3 ring
// (gopacket's afpacket, no libpcap) and a classic BPF program that keeps
// only TCP to or from opt.Ports. On loopback interfaces, which show every
// packet twice (sent and received), the sent copies are dropped in the
// kernel, as libpcap does. Ethernet and loopback interfaces are captured
// with their Ethernet header; "any" and other interfaces are captured in
// cooked mode, from the IP header (link type raw IP).
func OpenLive(iface string, opt LiveOptions) (*Reader, error) {
	return openLive(iface, opt)
}

// Stop makes Next return io.EOF instead of waiting for more packets, or
// reading more of a file: a Next that waits for a live capture's next
// packet, or for a pipe's writer, returns soon (a live capture's within
// 100 ms). It may be called from any goroutine, more than once.
func (r *Reader) Stop() {
	r.stopped.Store(true)
	if r.pipe != nil {
		r.pipe.stop()
	}
	if s, ok := r.src.(interface{ stop() }); ok {
		s.stop()
	}
}

// KernelStats returns the counters of a live capture's socket, up to now
// or, after Close, up to the end of the capture. ok is false for files.
func (r *Reader) KernelStats() (stats KernelStats, ok bool) {
	if s, ok := r.src.(interface{ kernelStats() KernelStats }); ok {
		return s.kernelStats(), true
	}
	return KernelStats{}, false
}

// liveError explains why a packet socket on iface could not be set up; a missing privilege
// is ErrPermission (what to do about it is the command line's to say).
func liveError(iface, what string, err error) error {
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		return fmt.Errorf("%w on %s (%s: %v): live capture needs root or the CAP_NET_RAW capability",
			ErrPermission, iface, what, err)
	}
	return fmt.Errorf("capturing on %s: %s: %w", iface, what, err)
}

// noInterface is the error for an interface that does not exist: it lists
// those that do.
func noInterface(name string) error {
	names := Interfaces()
	return fmt.Errorf("%w %q; the interfaces here are: %s", ErrNoInterface, name, strings.Join(names, ", "))
}

// Interfaces names the interfaces OpenLive can capture on, sorted, then "any": every message
// that lists them lists them alike.
func Interfaces() []string {
	var names []string
	ifs, err := net.Interfaces()
	if err == nil {
		for _, i := range ifs {
			names = append(names, i.Name)
		}
	}
	sort.Strings(names)
	return append(names, "any")
}

// SaveFile is a file for LiveOptions.Save that is created at its first
// write: only once the capture has started, so that a capture that cannot
// start leaves an existing file alone.
type SaveFile struct {
	name string
	f    *os.File
}

// NewSaveFile returns the file to be created under name.
func NewSaveFile(name string) *SaveFile { return &SaveFile{name: name} }

func (l *SaveFile) Write(p []byte) (int, error) {
	if l.f == nil {
		f, err := os.Create(l.name)
		if err != nil {
			return 0, err
		}
		l.f = f
	}
	return l.f.Write(p)
}

// Close closes the file, if it was created.
func (l *SaveFile) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}
