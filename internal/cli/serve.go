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
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/plural"
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
	fail := func(format string, a ...any) int { return cmd.UsageError(stderr, format, a...) }
	if o.Live && len(o.Ports) == 0 {
		o.Ports = []string{"9092"}
	}
	ports, err := capture.ParsePorts(o.Ports)
	if err != nil {
		return fail("%v", err)
	}
	if o.Token == "random" {
		b := make([]byte, 16)
		rand.Read(b)
		o.Token = hex.EncodeToString(b)
	}
	o.Trees = o.Select.ReadsBodies()
	// The page of captures shows the tables of --stats, always.
	stats := Analyses(true)
	o.KeepFields = stats.Keep()
	c, err := o.Codec(stderr)
	if err != nil {
		return cmd.Report(stderr, err)
	}
	if err := o.Select.Check(c); err != nil {
		return fail("%v", err)
	}
	keys, err := KeyLog(o.KeyLog, o.Live, stderr)
	if err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return fail("--listen %s: %v", o.Listen, err)
	}
	maxUpload := o.MaxUpload
	if maxUpload == 0 {
		maxUpload = -1
	}
	warn := func(err error) { fmt.Fprintf(stderr, "kdissect: %v\n", err) }
	cfg := serve.Config{Codec: c, Select: o.Select, MaxMessages: o.MaxMessages, Keep: o.Keep, MaxUpload: maxUpload,
		MaxBytes: o.MaxBytes, Token: o.Token, Warn: warn}
	loopback := serve.Loopback(host)
	if loopback {
		cfg.Hosts = []string{"localhost"}
	}
	srv := serve.New(cfg, o.Live)

	if len(files) > 0 {
		p, err := dissect.New(dissect.Config{Codec: c, Out: srv.Renderer(), Needs: serve.Needs(), Select: o.Select, IsServerPort: ports.Has,
			Detect: len(o.Ports) == 0, Keys: keys, Warn: warn, Stats: stats})
		if err != nil {
			return fail("%v", err)
		}
		status := ExitOK
		p.Files(files, stdin, func(err error) { status = cmd.Failed(stderr, "%v", err) })
		TablesOnPage(srv.Renderer(), stats)
		p.Close()
		if status != ExitOK {
			return status
		}
	}

	// Said before listening, so that it is said even when the address cannot be had.
	if !loopback {
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
	page := pageURLs(host, ln.Addr(), o.Token)
	hs := srv.HTTPServer()

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	stopped := make(chan struct{})
	stopOnce := sync.OnceFunc(func() { close(stopped) })
	if o.Duration > 0 {
		t := time.AfterFunc(o.Duration, stopOnce)
		defer t.Stop()
	}
	go func() {
		select {
		case <-signals:
			stopOnce()
		case <-stopped:
		}
	}()

	status := ExitOK
	var captureDone chan struct{}
	var captureErr error // set before captureDone is closed
	finish := func() {}
	if o.Live {
		r, err := capture.OpenLive(o.Iface, capture.LiveOptions{Ports: ports.Ranges()})
		if err != nil {
			ln.Close()
			return liveFailed(cmd, stderr, err)
		}
		p, err := dissect.New(dissect.Config{Codec: c, Out: srv.Renderer(), Needs: serve.Needs(), Select: o.Select, IsServerPort: ports.Has,
			Keys: keys, Flush: true, Warn: warn})
		if err != nil {
			r.Close()
			ln.Close()
			return fail("%v", err)
		}
		captureDone = make(chan struct{})
		go func() {
			defer close(captureDone)
			_, captureErr = p.Read(r, o.Iface)
			p.Close()
			srv.Close()
		}()
		go func() { <-stopped; r.Stop() }()
		finish = func() {
			<-captureDone
			if captureErr != nil {
				warn(captureErr)
				status = ExitFailure
			}
			st := r.Stats()
			r.Close()
			fmt.Fprintf(stderr, "kdissect: %s captured (%d TCP)\n", plural.Count(st.Packets, "packet"), st.TCP)
		}
		fmt.Fprintf(stderr, "kdissect: capturing on %s (Kafka on TCP %s); serving the live page on %s\n", o.Iface, ports, page)
	} else {
		fmt.Fprintf(stderr, "kdissect: serving %s on %s\n", plural.Count(srv.Messages(), "message"), page)
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case <-stopped:
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			warn(err)
			status = ExitFailure
		}
	}
	stopOnce()
	finish()
	srv.Close()
	hs.Close()
	return status
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
