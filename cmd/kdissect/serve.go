package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/render"
	"github.com/kdissect/kdissect/serve"
)

type serveOptions struct {
	cli.Common
	sel       dissect.Selection
	tls       tlsOptions
	ports     []string
	listen    string
	token     string
	live      bool
	iface     string
	keep      int
	maxUpload int64
	duration  time.Duration
}

func serveFlags() (*flag.FlagSet, *serveOptions) {
	o := &serveOptions{}
	fs := flag.NewFlagSet("kdissect serve", flag.ContinueOnError)
	registerCommon(fs, &o.Common, "html")
	registerSelection(fs, &o.sel)
	o.tls.register(fs)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address to serve the page on; any other than loopback makes the captured traffic visible to the network (a warning says so)")
	fs.StringVar(&o.token, "token", "", "require this token of every request (?token=T in the URL kdissect prints); 'random' makes one")
	fs.BoolVar(&o.live, "live", false, "capture on -i and push each message to the open pages as it completes")
	fs.StringVarP(&o.iface, "interface", "i", "", "live: network interface to capture on (lo, eth0, any)")
	fs.StringSliceVarP(&o.ports, "port", "p", nil, "Kafka broker ports (repeatable, lists and ranges); live: filtered in the kernel (default 9092)")
	fs.IntVar(&o.keep, "keep", serve.DefaultKeep, "live: messages a page keeps; older ones are dropped, and the page says so")
	fs.Int64Var(&o.maxUpload, "max-upload", serve.DefaultMaxUpload, "largest capture that may be dropped onto the page, in bytes (0: no uploads)")
	fs.DurationVar(&o.duration, "duration", 0, "stop serving after this long (30s, 5m; default: until Ctrl-C)")
	cli.HideDefault(fs, "api-key", "correlation-id", "stream")
	// The page shows what these change in the other formats on its own terms.
	for _, name := range []string{"format", "explain", "hex", "stats", "time"} {
		fs.MarkHidden(name)
	}
	return fs, o
}

// runServe is "kdissect serve": the workshop page of captures, or of a live capture, over HTTP.
func runServe(cmd *cli.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, o := serveFlags()
	if status, ok := cmd.Parse(fs, args, stdout, stderr); !ok {
		return status
	}
	fail := func(format string, a ...any) int { return cmd.UsageError(stderr, format, a...) }
	files := fs.Args()
	switch {
	case o.live && len(files) > 0:
		return fail("--live serves a live capture; captures are given without it")
	case o.live && o.iface == "":
		return fail("--live needs an interface: -i INTERFACE (interfaces here: %s)", strings.Join(capture.Interfaces(), ", "))
	case !o.live && o.iface != "":
		return fail("-i goes with --live")
	case !o.live && len(files) == 0 && o.maxUpload == 0:
		return fail("nothing to serve: give captures, --live, or allow uploads (--max-upload)")
	}
	if o.Format != "html" {
		return fail("serve shows the workshop page: --format is html")
	}
	if o.live && len(o.ports) == 0 {
		o.ports = []string{"9092"}
	}
	ports, err := capture.ParsePorts(o.ports)
	if err != nil {
		return fail("%v", err)
	}
	if o.token == "random" {
		b := make([]byte, 16)
		rand.Read(b)
		o.token = hex.EncodeToString(b)
	}
	o.Trees = o.sel.ReadsBodies()
	c, err := o.Codec(stderr)
	if err != nil {
		return cmd.Report(stderr, err)
	}
	if err := o.sel.Check(c); err != nil {
		return fail("%v", err)
	}
	keys, err := cli.KeyLog(o.tls.keylog, o.live, stderr)
	if err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	host, _, err := net.SplitHostPort(o.listen)
	if err != nil {
		return fail("--listen %s: %v", o.listen, err)
	}
	maxUpload := o.maxUpload
	if maxUpload == 0 {
		maxUpload = -1
	}
	warn := func(err error) { fmt.Fprintf(stderr, "kdissect: %v\n", err) }
	cfg := serve.Config{Codec: c, Select: o.sel, MaxMessages: o.MaxMessages, Keep: o.keep, MaxUpload: maxUpload,
		MaxBytes: o.MaxBytes, Token: o.token, Warn: warn}
	loopback := isLoopback(host)
	if loopback {
		cfg.Hosts = []string{"localhost"}
	}
	srv := serve.New(cfg, o.live)
	f, _ := render.LookupFormat("html")

	if len(files) > 0 {
		p, err := dissect.New(dissect.Config{Codec: c, Out: srv.Renderer(), Needs: f.Needs, Select: o.sel, IsServerPort: ports.Has,
			Detect: len(o.ports) == 0, Keys: keys, Warn: warn})
		if err != nil {
			return fail("%v", err)
		}
		status := cli.ExitOK
		p.Files(files, stdin, func(err error) { status = cmd.Failed(stderr, "%v", err) })
		p.Close()
		if status != cli.ExitOK {
			return status
		}
	}

	// Said before listening, so that it is said even when the address cannot be had.
	if !loopback {
		fmt.Fprintf(stderr, "kdissect: warning: serving on %s, not on loopback: the captured traffic is visible to anyone who can reach this address", o.listen)
		if o.token == "" {
			fmt.Fprint(stderr, " (--token random keeps it to those given the URL)")
		}
		fmt.Fprintln(stderr)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	url := "http://" + ln.Addr().String() + "/"
	if o.token != "" {
		url += "?token=" + o.token
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 16 << 10}

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	stopped := make(chan struct{})
	stopOnce := sync.OnceFunc(func() { close(stopped) })
	if o.duration > 0 {
		t := time.AfterFunc(o.duration, stopOnce)
		defer t.Stop()
	}
	go func() {
		select {
		case <-signals:
			stopOnce()
		case <-stopped:
		}
	}()

	status := cli.ExitOK
	var captureDone chan struct{}
	var captureErr error // set before captureDone is closed
	finish := func() {}
	if o.live {
		r, err := capture.OpenLive(o.iface, capture.LiveOptions{Ports: ports.Ranges()})
		if err != nil {
			ln.Close()
			fmt.Fprintf(stderr, "kdissect: %v\n", err)
			return cli.ExitUsage
		}
		p, err := dissect.New(dissect.Config{Codec: c, Out: srv.Renderer(), Needs: f.Needs, Select: o.sel, IsServerPort: ports.Has,
			Keys: keys, Flush: true, Warn: warn})
		if err != nil {
			r.Close()
			ln.Close()
			return fail("%v", err)
		}
		captureDone = make(chan struct{})
		go func() {
			defer close(captureDone)
			_, captureErr = p.Read(r, o.iface)
			p.Close()
			srv.Close()
		}()
		go func() { <-stopped; r.Stop() }()
		finish = func() {
			<-captureDone
			if captureErr != nil {
				warn(captureErr)
				status = cli.ExitFailure
			}
			st := r.Stats()
			r.Close()
			fmt.Fprintf(stderr, "kdissect: %d packets captured (%d TCP)\n", st.Packets, st.TCP)
		}
		fmt.Fprintf(stderr, "kdissect: capturing on %s (Kafka on TCP %s); serving the live page on %s\n", o.iface, ports, url)
	} else {
		fmt.Fprintf(stderr, "kdissect: serving %d messages on %s\n", srv.Messages(), url)
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case <-stopped:
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			warn(err)
			status = cli.ExitFailure
		}
	}
	stopOnce()
	finish()
	srv.Close()
	hs.Close()
	return status
}

// isLoopback reports whether a listen address's host is loopback only ("" and 0.0.0.0 are
// every address).
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
