package main

import (
	"io"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/render"
	"github.com/kdissect/kdissect/serve"
)

// serveOptions are serve's flags: cli.Serve's, and --tls-keylog.
type serveOptions struct {
	cli.Serve
	tls tlsOptions
}

func serveFlags() (*flag.FlagSet, *serveOptions) {
	o := &serveOptions{}
	fs := flag.NewFlagSet("kdissect serve", flag.ContinueOnError)
	registerCommon(fs, &o.Common, render.PageFormat().Name)
	registerSelection(fs, &o.Select)
	registerStats(fs, &o.Select)
	o.tls.register(fs)
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:8080", "address to serve the page on; any other than loopback makes the captured traffic visible to the network (a warning says so)")
	fs.StringVar(&o.Token, "token", "", "require this token of every request (?token=T in the URL kdissect prints); 'random' makes one")
	fs.BoolVar(&o.Live, "live", false, "capture on -i and push each message to the open pages as it completes")
	fs.StringVarP(&o.Iface, "interface", "i", "", "live: network interface to capture on (lo, eth0, any)")
	fs.StringSliceVarP(&o.Ports, "port", "p", nil, "Kafka broker ports (repeatable, lists and ranges); live: filtered in the kernel (default 9092)")
	fs.IntVar(&o.Keep, "keep", serve.DefaultKeep, "live: messages a page keeps; older ones are dropped, and the page says so")
	fs.Int64Var(&o.MaxUpload, "max-upload", serve.DefaultMaxUpload, "largest capture that may be dropped onto the page, in bytes (0: no uploads)")
	fs.DurationVar(&o.Duration, "duration", 0, "stop serving after this long (30s, 5m; default: until Ctrl-C)")
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
	case o.Live && len(files) > 0:
		return fail("--live serves a live capture; captures are given without it")
	case o.Live && o.Iface == "":
		return fail("--live needs an interface: -i INTERFACE (interfaces here: %s)", strings.Join(capture.Interfaces(), ", "))
	case !o.Live && o.Iface != "":
		return fail("-i goes with --live")
	case !o.Live && len(files) == 0 && o.MaxUpload == 0:
		return fail("nothing to serve: give captures, --live, or allow uploads (--max-upload)")
	}
	if page := render.PageFormat(); o.Format != page.Name {
		return fail("serve shows the workshop page: --format is %s", page.Name)
	}
	o.KeyLog = o.tls.keylog
	return o.Run(cmd, files, stdin, stderr)
}
