package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
	"github.com/kdissect/kdissect/serve"
)

// Serve is the run of "kdissect serve": the workshop page of captures, of uploads, or of a
// live capture, over HTTP, until Ctrl-C, SIGTERM or Duration.
type Serve struct {
	Common
	Select dissect.Selection
	KeyLog string
	// Ports are -p's specs (live: 9092 when none); Listen is the address served on, Token what
	// every request must carry ("random": one is made).
	Ports  []string
	Listen string
	Token  string
	// Live captures on Iface, each page keeping Keep messages; MaxUpload bounds an upload
	// (0: no uploads).
	Live      bool
	Iface     string
	Keep      int
	MaxUpload int64
	Duration  time.Duration
}

// Run serves the captures files (read before the page is served), or the live capture; its
// result is the exit status.
func (o *Serve) Run(cmd *Command, files []string, stdin io.Reader, stderr io.Writer) int {
	s, status := o.setup(cmd, stderr)
	if s == nil {
		return status
	}
	if len(files) > 0 {
		if status := s.readFiles(cmd, files, stdin, stderr); status != ExitOK {
			return status
		}
	}
	// Said before listening, so that it is said even when the address cannot be had.
	if !s.loopback {
		fmt.Fprintf(stderr, "kdissect: warning: serving on %s, not on loopback: the captured traffic is visible to anyone who can reach this address", o.Listen)
		if o.Token == "" {
			fmt.Fprint(stderr, " (--token random keeps it to those given the URL)")
		}
		fmt.Fprintln(stderr)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	page := pageURLs(s.host, ln.Addr(), o.Token)
	hs := s.srv.HTTPServer()
	stopped, stop, release := o.stopper()
	defer release()

	finish := func() int { return ExitOK }
	if o.Live {
		if finish, status = s.startLive(cmd, o.Iface, stopped, stderr); finish == nil {
			ln.Close()
			return status
		}
		fmt.Fprintf(stderr, "kdissect: capturing on %s (Kafka on TCP %s); serving the live page on %s\n", o.Iface, s.ports, page)
	} else {
		fmt.Fprintf(stderr, "kdissect: serving %s on %s\n", plural.Count(s.srv.Messages(), "message"), page)
	}
	status = s.serveUntil(hs, ln, stopped)
	stop()
	if finish() != ExitOK {
		status = ExitFailure
	}
	s.srv.Close()
	hs.Close()
	return status
}

// serveUntil serves the page on ln until stopped is closed or the server fails; its result is
// the exit status.
func (s *serving) serveUntil(hs *http.Server, ln net.Listener, stopped <-chan struct{}) int {
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case <-stopped:
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			s.warn(err)
			return ExitFailure
		}
	}
	return ExitOK
}

// serving is what a run of Serve has set up before it serves: the server, and what its
// pipelines are made of.
type serving struct {
	o        *Serve
	srv      *serve.Server
	codec    *codec.Codec
	plan     dissect.Plan
	ports    *capture.Ports
	keys     *tlsdec.KeyLog
	host     string // of --listen
	loopback bool
	warn     func(error)
	// stats are the analyses whose tables the page of the captures read shows.
	stats analysis.Set
}

// setup checks the options and makes the server; when it cannot, it says why on stderr and
// returns nil and the exit status.
func (o *Serve) setup(cmd *Command, stderr io.Writer) (*serving, int) {
	fail := func(format string, a ...any) int { return cmd.UsageError(stderr, format, a...) }
	if o.Live && len(o.Ports) == 0 {
		o.Ports = []string{"9092"}
	}
	ports, err := capture.ParsePorts(o.Ports)
	if err != nil {
		return nil, fail("%v", err)
	}
	if o.Token == "random" {
		b := make([]byte, 16)
		rand.Read(b)
		o.Token = hex.EncodeToString(b)
	}
	needs := serve.Needs()
	// The page of captures shows the tables of --stats, always, and every page the doctor's
	// findings; the analyses and the doctor are made before the codec, which keeps the fields
	// they read.
	stats := Analyses(true)
	doc := doctor.New()
	c, plan, err := o.CodecPlan(stderr, o.Select, &needs, append(stats.Reads(), doc.Reads()...))
	if err != nil {
		return nil, cmd.Report(stderr, err)
	}
	if err := o.Select.Check(c); err != nil {
		return nil, fail("%v", err)
	}
	keys, err := KeyLog(o.KeyLog, o.Live, stderr)
	if err != nil {
		return nil, cmd.Failed(stderr, "%v", err)
	}
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, fail("--listen %s: %v", o.Listen, err)
	}
	maxUpload := o.MaxUpload
	if maxUpload == 0 {
		maxUpload = -1
	}
	s := &serving{o: o, codec: c, plan: plan, ports: ports, keys: keys, host: host, loopback: serve.Loopback(host),
		warn: func(err error) { fmt.Fprintf(stderr, "kdissect: %v\n", err) }, stats: stats}
	cfg := serve.Config{Codec: c, Select: o.Select, MaxMessages: o.MaxMessages, Keep: o.Keep, MaxUpload: maxUpload,
		MaxBytes: o.MaxBytes, Token: o.Token, Warn: s.warn, Doctor: doc}
	if s.loopback {
		cfg.Hosts = []string{"localhost"}
	}
	s.srv = serve.New(cfg, o.Live)
	return s, ExitOK
}

// config is the configuration of a pipeline into the server's page; live, it shows each
// message as it completes.
func (s *serving) config(live bool) dissect.Config {
	cfg := dissect.Config{Codec: s.codec, Out: s.srv.Renderer(), Plan: s.plan, Select: s.o.Select, IsServerPort: s.ports.Has,
		Keys: s.keys, Warn: s.warn}
	if live {
		cfg.Flush = true
	} else {
		cfg.Detect = len(s.o.Ports) == 0
	}
	return cfg
}

// readFiles dissects the files into the server before it serves them; its result is the exit
// status.
func (s *serving) readFiles(cmd *Command, files []string, stdin io.Reader, stderr io.Writer) int {
	cfg := s.config(false)
	cfg.Stats = s.stats
	run := newRunner(&cfg, stdin, nil, nil)
	var err error
	if run.p, err = dissect.New(cfg); err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	status := ExitOK
	run.files(files, func(err error) { status = cmd.Failed(stderr, "%v", err) })
	TablesOnPage(s.srv.Renderer(), s.stats)
	run.p.Close()
	return status
}

// stopper is what ends the serving: stopped is closed by stop, on Ctrl-C or SIGTERM, or after
// o.Duration. release stops listening for the signals.
func (o *Serve) stopper() (stopped <-chan struct{}, stop func(), release func()) {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	stop = sync.OnceFunc(func() { close(done) })
	var t *time.Timer
	if o.Duration > 0 {
		t = time.AfterFunc(o.Duration, stop)
	}
	go func() {
		select {
		case <-signals:
			stop()
		case <-done:
		}
	}()
	release = func() {
		if t != nil {
			t.Stop()
		}
		signal.Stop(signals)
	}
	return done, stop, release
}

// startLive starts capturing on iface into the server's page until stopped is closed. finish
// waits for the capture to end and says what it captured; its result is the exit status. When
// the capture cannot start, startLive says why and returns a nil finish and the exit status.
func (s *serving) startLive(cmd *Command, iface string, stopped <-chan struct{}, stderr io.Writer) (finish func() int, status int) {
	r, status := openLive(cmd, stderr, iface, capture.LiveOptions{Ports: s.ports.Ranges()})
	if r == nil {
		return nil, status
	}
	p, err := dissect.New(s.config(true))
	if err != nil {
		r.Close()
		return nil, cmd.UsageError(stderr, "%v", err)
	}
	done := make(chan struct{})
	var readErr error // set before done is closed
	go func() {
		defer close(done)
		_, readErr = p.Read(r, iface)
		p.Close()
		s.srv.Close()
	}()
	go func() { <-stopped; r.Stop() }()
	return func() int {
		<-done
		status := ExitOK
		if readErr != nil {
			s.warn(readErr)
			status = ExitFailure
		}
		st, _ := closeLive(r)
		fmt.Fprintf(stderr, "kdissect: %s\n", captured(st))
		return status
	}, ExitOK
}

// pageURLs says where the page is: one URL, or for a server listening on every address, one a
// line for each address of the machine (a room needs one it can reach; [::] is none).
func pageURLs(host string, addr net.Addr, token string) string {
	bound, port, _ := net.SplitHostPort(addr.String())
	var ifaces []netip.Addr
	if nets, err := net.InterfaceAddrs(); err == nil {
		for _, n := range nets {
			if p, err := netip.ParsePrefix(n.String()); err == nil {
				ifaces = append(ifaces, p.Addr())
			}
		}
	}
	hosts := serve.Hosts(host, ifaces)
	if len(hosts) == 0 {
		hosts = []string{bound}
	}
	var urls []string
	for _, h := range hosts {
		u := "http://" + net.JoinHostPort(h, port) + "/"
		if token != "" {
			u += "?token=" + url.QueryEscape(token)
		}
		urls = append(urls, u)
	}
	if len(urls) == 1 {
		return urls[0]
	}
	return "each address of this machine:\n  " + strings.Join(urls, "\n  ")
}
