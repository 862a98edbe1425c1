package cli

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/filter"
	"github.com/kdissect/kdissect/internal/flight"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/internal/rotate"
	"github.com/kdissect/kdissect/render"
)

// AlwaysOn is what a live capture that runs for days writes: its output to a file per period
// in a directory (-o DIR/, --rotate, --rotate-size, --keep, --keep-size), its packets too (-w
// DIR/), and the flight recorder's files (--ring, --save-on).
type AlwaysOn struct {
	// Dir is the output's directory (-o); New makes the format's renderer of each file, Ext
	// ends the files' names.
	Dir string
	New func(w io.Writer) render.Renderer
	Ext string
	// Packets is the directory of the rotating pcapng files (-w DIR/ with a rotation).
	Packets  string
	Rotate   rotate.Policy
	Keep     int
	KeepSize int64
	// Ring is the flight recorder's size in bytes (0: none); SaveOn decides which pairs save it
	// to a file in Dir, SaveBefore and SaveAfter how much, SaveMax how many files an hour.
	Ring                  int64
	SaveOn                *filter.Filter
	SaveBefore, SaveAfter time.Duration
	SaveMax               int
}

// alwaysOn is an AlwaysOn under way. Its methods do nothing on a nil one: Live.Run calls them
// whether or not it is always on.
type alwaysOn struct {
	cfg     *AlwaysOn
	taps    taps
	out     *rotate.Renderer
	packets *rotate.Packets
	rec     *flight.Recorder
	ring    *flight.Ring
	hangups *Hangups
	saved   atomic.Int64
	stderr  io.Writer
}

// taps shows each packet to every tap it holds; it is filled once the capture has opened,
// before its first packet is read.
type taps []capture.Tap

func (ts *taps) Packet(ci gopacket.CaptureInfo, lt layers.LinkType, data []byte) {
	for _, t := range *ts {
		t.Packet(ci, lt, data)
	}
}

// tap begins an AlwaysOn (nil when a is): the packets the capture opened with lopt keeps go to
// its taps, which start fills.
func (a *AlwaysOn) tap(lopt *capture.LiveOptions) *alwaysOn {
	on := a.begin()
	if on != nil {
		lopt.Tap = &on.taps
	}
	return on
}

// begin begins an AlwaysOn (nil when a is) of a capture read from a pipe: its packets go to
// the taps through the pipeline (see pipe).
func (a *AlwaysOn) begin() *alwaysOn {
	if a == nil {
		return nil
	}
	return &alwaysOn{cfg: a}
}

// pipe makes the pipeline of cfg show the taps every packet it reads from the pipe: -w DIR/.
func (on *alwaysOn) pipe(cfg *dissect.Config) {
	if on != nil && on.packets != nil {
		cfg.Tap = &on.taps
	}
}

// start begins the files of a capture on iface whose messages go to out; it returns the
// renderer that takes out's place.
func (on *alwaysOn) start(iface string, out render.Renderer, stderr io.Writer) render.Renderer {
	if on == nil {
		return out
	}
	a := on.cfg
	on.stderr = stderr
	hangups := CatchHangups() // before the first file: a SIGHUP from then on closes it
	warn := func(err error) { fmt.Fprintf(stderr, "kdissect: %v\n", err) }
	host, _ := os.Hostname()
	prefix := rotate.Prefix(host)
	if a.New != nil {
		on.out = rotate.NewRenderer(&rotate.Dir{Path: a.Dir, Prefix: prefix, Ext: a.Ext, Keep: a.Keep, KeepSize: a.KeepSize},
			a.Rotate, a.New, warn)
		out = on.out
	}
	if a.Packets != "" {
		on.packets = rotate.NewPackets(&rotate.Dir{Path: a.Packets, Prefix: prefix, Ext: ".pcapng", Keep: a.Keep, KeepSize: a.KeepSize},
			a.Rotate, iface, warn)
		on.taps = append(on.taps, on.packets)
	}
	if a.Ring > 0 {
		on.ring = flight.NewRing(int(a.Ring))
		on.taps = append(on.taps, on.ring)
		on.rec = flight.NewRecorder(flight.Config{Ring: on.ring, Expr: a.SaveOn, Before: a.SaveBefore, After: a.SaveAfter,
			MaxPerHour: a.SaveMax, Dir: &rotate.Dir{Path: a.Dir, Prefix: prefix, Ext: ".saved.pcapng"}, Iface: iface, Warn: warn,
			Saved: func(path string) {
				on.saved.Add(1)
				fmt.Fprintf(stderr, "kdissect: saved the ring to %s\n", path)
			}}, out)
		out = on.rec
	}
	on.hangups = hangups
	hangups.Serve(on.rotate)
	return out
}

// abandon closes what start made, when the capture does not run after all: out is the
// renderer start returned.
func (on *alwaysOn) abandon(out render.Renderer) {
	if on != nil && on.hangups != nil {
		out.Close()
		on.close()
	}
}

// rotate closes the current files and begins new ones (SIGHUP).
func (on *alwaysOn) rotate() {
	if on.out != nil {
		on.out.Rotate()
	}
	if on.packets != nil {
		on.packets.Rotate()
	}
}

// close closes the packets' last file, once the capture has ended (the pipeline closes the
// renderers), and says what was written. A file that could not be written has been said: the
// capture went on, and its exit status does not change.
func (on *alwaysOn) close() {
	if on == nil {
		return
	}
	on.hangups.Release()
	if on.packets != nil {
		on.packets.Close()
		fmt.Fprintf(on.stderr, "kdissect: wrote %s of packets to %s\n", plural.Count(on.packets.Files(), "file"), on.cfg.Packets)
	}
	if on.out != nil {
		fmt.Fprintf(on.stderr, "kdissect: wrote %s to %s\n", plural.Count(on.out.Files(), "file"), on.cfg.Dir)
	}
	if on.ring != nil {
		fmt.Fprintf(on.stderr, "kdissect: the ring held %s (%d of %d bytes) at the end; saved %s\n",
			plural.Count(on.ring.Len(), "packet"), on.ring.Used(), on.ring.Cap(), plural.Count(int(on.saved.Load()), "file"))
		on.ring.Close()
	}
}
