package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/render"
)

const liveUsage = `Usage: kdissect live -i INTERFACE [flags]

Captures Kafka traffic on a network interface (Linux, AF_PACKET; needs root or
CAP_NET_RAW) and prints each message as it completes. Ctrl-C stops.

Flags:
`

type liveOptions struct {
	common
	sel      dissect.Selection
	tls      tlsOptions
	ports    []string
	iface    string
	count    int
	duration time.Duration
	write    string
}

func liveFlags(stderr io.Writer) (*flag.FlagSet, *liveOptions) {
	o := &liveOptions{}
	fs := flag.NewFlagSet("kdissect live", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, liveUsage)
		fs.PrintDefaults()
	}
	o.register(fs, "summary")
	registerSelection(fs, &o.sel)
	o.tls.register(fs)
	fs.StringVarP(&o.iface, "interface", "i", "", "network interface to capture on (lo, eth0, ...; any: every interface)")
	fs.StringSliceVarP(&o.ports, "port", "p", []string{"9092"}, "Kafka broker ports: repeatable, lists and ranges (9092,9093-9095); filtered in the kernel")
	fs.IntVarP(&o.count, "count", "c", 0, "stop after this many Kafka messages")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (30s, 5m, 1h)")
	fs.StringVarP(&o.write, "write", "w", "", "also write the captured packets to this pcapng file")
	return fs, o
}

// runLive is "kdissect live": capture on an interface until Ctrl-C, SIGTERM, --count or
// --duration, through the same pipeline as files.
func runLive(args []string, stdout, stderr io.Writer) int {
	fs, o := liveFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "kdissect: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return fail("live takes no arguments (got %q); to dissect files: kdissect FILE...", strings.Join(fs.Args(), " "))
	}
	if o.iface == "" {
		return fail("live needs an interface: -i INTERFACE (%s)", interfaceNames())
	}
	if o.count < 0 || o.duration < 0 {
		return fail("--count and --duration cannot be negative")
	}
	isPort, err := parsePorts(o.ports)
	if err != nil {
		return fail("%v", err)
	}
	ranges := portRanges(isPort)
	if len(ranges) == 0 {
		return fail("no ports given")
	}
	c, err := o.codec()
	if err != nil {
		return fail("%v", err)
	}
	keys, err := o.tls.keys(true, stderr)
	if err != nil {
		return fail("%v", err)
	}
	f, inner, err := o.output(stdout)
	if err != nil {
		return fail("%v", err)
	}
	if f.Batch {
		return fail("--format %s writes its output only at the end: live capture shows each message as it completes", f.Name)
	}

	// From here on, Ctrl-C and SIGTERM end the capture cleanly (a signal that comes while the
	// socket is set up waits in the channel).
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	lopt := capture.LiveOptions{Ports: ranges}
	var save *lazyFile
	if o.write != "" {
		save = &lazyFile{name: o.write}
		lopt.Save = save
	}
	r, err := capture.OpenLive(o.iface, lopt)
	if err != nil {
		if save != nil {
			save.Close()
		}
		fmt.Fprintf(stderr, "kdissect: %v\n", err)
		return 2
	}
	var what []string
	if o.count > 0 {
		what = append(what, fmt.Sprintf("%d messages", o.count))
	}
	if o.duration > 0 {
		what = append(what, o.duration.String())
	}
	what = append(what, "Ctrl-C")
	fmt.Fprintf(stderr, "kdissect: capturing on %s (Kafka on TCP %s); stops after %s\n", o.iface, portList(ranges), strings.Join(what, " or "))

	stop := sync.OnceFunc(r.Stop)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-signals:
			stop()
		case <-done:
			return
		}
		// A second Ctrl-C while the capture winds down ends the process at once.
		select {
		case <-signals:
			os.Exit(130)
		case <-done:
		}
	}()
	if o.duration > 0 {
		t := time.AfterFunc(o.duration, stop)
		defer t.Stop()
	}

	out := &liveOutput{Renderer: inner, limit: o.count, stop: stop}
	p, err := dissect.New(dissect.Config{Codec: c, Out: out, Needs: f.Needs, Select: o.sel, IsServerPort: isPort, Keys: keys,
		Warn: func(err error) { fmt.Fprintf(stderr, "kdissect: %v\n", err) }})
	if err != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", err)
		return 2
	}
	_, readErr := p.Read(r, o.iface)
	status := 0
	if readErr != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", readErr)
		status = 1
	}
	st := r.Stats()
	if err := r.Close(); err != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", err)
		status = 1
	}
	if save != nil {
		if err := save.Close(); err != nil {
			fmt.Fprintf(stderr, "kdissect: %v\n", err)
			status = 1
		}
	}
	writeErr := p.Close()
	if stats := p.Stats(); stats != nil && writeErr == nil {
		writeErr = stats.Write(stdout)
	}
	ks, _ := r.KernelStats()
	fmt.Fprintf(stderr, "kdissect: %d packets captured (%d TCP), %d Kafka messages shown; %d packets received by filter, %d dropped by kernel\n",
		st.Packets, st.TCP, out.messages, ks.Received, ks.Dropped)
	if save != nil && status == 0 {
		fmt.Fprintf(stderr, "kdissect: wrote %d packets to %s\n", st.Packets, o.write)
	}
	if writeErr != nil {
		fmt.Fprintf(stderr, "kdissect: writing output: %v\n", writeErr)
		return 1
	}
	return status
}

// lazyFile creates the -w file at the first write: only once the capture has started, so that a
// capture that cannot start leaves an existing file alone.
type lazyFile struct {
	name string
	f    *os.File
}

func (l *lazyFile) Write(p []byte) (int, error) {
	if l.f == nil {
		f, err := os.Create(l.name)
		if err != nil {
			return 0, err
		}
		l.f = f
	}
	return l.f.Write(p)
}

func (l *lazyFile) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// liveOutput flushes the renderer after each message and notice, so that each shows as soon as
// it is complete, and stops the capture after limit messages (0: no limit) or when the output
// cannot be written. Past the limit it shows nothing more, not even what the assembler's final
// flush finds.
type liveOutput struct {
	render.Renderer
	limit, messages int
	stop            func()
}

func (l *liveOutput) full() bool { return l.limit > 0 && l.messages >= l.limit }

func (l *liveOutput) Message(e *render.Entry) error {
	if l.full() {
		return nil
	}
	l.messages++
	err := l.Renderer.Message(e)
	if ferr := l.Renderer.Flush(); err == nil {
		err = ferr
	}
	if l.full() || err != nil {
		l.stop() // enough messages, or nowhere to write them
	}
	return err
}

func (l *liveOutput) Notice(n *render.Notice) error {
	if l.full() {
		return nil
	}
	err := l.Renderer.Notice(n)
	if ferr := l.Renderer.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		l.stop()
	}
	return err
}

// SetStart passes the first packet's time on to renderers that show relative times.
func (l *liveOutput) SetStart(t time.Time) {
	if s, ok := l.Renderer.(interface{ SetStart(time.Time) }); ok {
		s.SetStart(t)
	}
}

// portRanges turns a port membership test into the ranges the kernel filter checks.
func portRanges(isPort func(uint16) bool) []capture.PortRange {
	var rs []capture.PortRange
	for p := 1; p <= 65535; p++ {
		if !isPort(uint16(p)) {
			continue
		}
		if n := len(rs); n > 0 && int(rs[n-1].Hi) == p-1 {
			rs[n-1].Hi = uint16(p)
		} else {
			rs = append(rs, capture.PortRange{Lo: uint16(p), Hi: uint16(p)})
		}
	}
	return rs
}

func portList(rs []capture.PortRange) string {
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

// interfaceNames lists the interfaces there are, for a user who named none or a wrong one.
func interfaceNames() string {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) == 0 {
		return "any"
	}
	names := make([]string, 0, len(ifs)+1)
	for _, i := range ifs {
		names = append(names, i.Name)
	}
	return "interfaces here: " + strings.Join(append(names, "any"), ", ")
}
