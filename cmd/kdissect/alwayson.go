package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/filter"
	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/render"
)

// alwaysOnOptions are live's flags for a capture that runs for days: files of periods and the
// flight recorder.
type alwaysOnOptions struct {
	rotation
	dir                   string
	ring                  cli.Size
	saveMax               int
	saveOn                string
	saveBefore, saveAfter time.Duration
	expr                  *filter.Filter
}

func (a *alwaysOnOptions) register(fs *flag.FlagSet) {
	fs.StringVarP(&a.dir, "output", "o", "", "write the output to files in this directory (one that exists, or a name ending in /): one file for the run, or one per period with --rotate or --rotate-size; the flight recorder's files go there too")
	a.rotation.register(fs)
	fs.Var(&a.ring, "ring", "flight recorder: keep the last SIZE of captured packets in memory (64MB), for --save-on")
	fs.StringVar(&a.saveOn, "save-on", "", "flight recorder: when a pair shown matches this expression (as -Y's: 'len(errors) > 0', 'latency_ms > 500'), save the ring's packets around it to a pcapng file in -o DIR/")
	fs.DurationVar(&a.saveBefore, "save-before", 10*time.Second, "flight recorder: how much of the capture before the match a saved file holds")
	fs.DurationVar(&a.saveAfter, "save-after", 5*time.Second, "flight recorder: how much of the capture after the match a saved file holds (it is written then)")
	fs.IntVar(&a.saveMax, "save-max", 10, "flight recorder: save at most this many files in any hour (0: no limit)")
}

// build checks the flags and returns what they ask, or nil when they ask for none of it;
// write is -w.
func (a *alwaysOnOptions) build(c *cli.Common, write string, stderr io.Writer) (*cli.AlwaysOn, error) {
	rotates := a.rotates()
	switch {
	case a.given() && a.dir == "" && write == "":
		return nil, fmt.Errorf("--rotate, --rotate-size, --keep and --keep-size write files in a directory: give -o DIR/ or -w DIR/")
	case (a.keep > 0 || a.keepSize > 0) && !rotates:
		return nil, fmt.Errorf("--keep and --keep-size go with --rotate or --rotate-size")
	case (a.ring > 0) != (a.saveOn != ""):
		return nil, fmt.Errorf("--ring SIZE and --save-on EXPR go together: the ring is saved when a pair matches")
	case a.ring > 0 && a.dir == "":
		return nil, fmt.Errorf("--save-on saves files in a directory: give -o DIR/")
	}
	if a.dir == "" && !rotates {
		return nil, nil
	}
	on := &cli.AlwaysOn{Keep: a.keep, KeepSize: int64(a.keepSize), Ring: int64(a.ring),
		SaveBefore: a.saveBefore, SaveAfter: a.saveAfter, SaveMax: a.saveMax}
	on.Rotate.Every, on.Rotate.Size = a.every, int64(a.size)
	if a.saveOn != "" {
		var err error
		if a.expr, err = filter.Compile(a.saveOn); err != nil {
			return nil, fmt.Errorf("--save-on: %v", err)
		}
		on.SaveOn = a.expr
	}
	if a.dir != "" {
		var err error
		if on.Dir, err = directory(a.dir); err != nil {
			return nil, fmt.Errorf("-o: %v", err)
		}
		f, err := c.LookupFormat()
		if err != nil {
			return nil, err
		}
		c.ToFile = true
		on.Ext = f.Ext
		on.New = func(w io.Writer) render.Renderer {
			_, r, _ := c.Output(w, stderr) // the format was checked above: Output cannot fail
			return r
		}
		if f.Empty {
			on.New = nil // --format none with the flight recorder: no files of messages
		}
	}
	if write != "" && rotates {
		var err error
		if on.Packets, err = directory(write); err != nil {
			return nil, fmt.Errorf("-w: %v", err)
		}
	}
	return on, nil
}

// rotation is the flags of files of periods, live's and those of a capture read from a pipe.
type rotation struct {
	every          time.Duration
	size, keepSize cli.Size
	keep           int
}

func (r *rotation) register(fs *flag.FlagSet) {
	fs.DurationVar(&r.every, "rotate", 0, "with -o DIR/: begin a new file every period this long (30s, 1h), at multiples of it from midnight UTC")
	fs.Var(&r.size, "rotate-size", "with -o DIR/: begin a new file once one has this many bytes (100MB, 1GiB)")
	fs.IntVar(&r.keep, "keep", 0, "with --rotate or --rotate-size: keep only the newest N files of each kind, deleting the oldest")
	fs.Var(&r.keepSize, "keep-size", "with --rotate or --rotate-size: keep only the newest files that together take at most this many bytes")
}

// rotates reports whether files of periods are asked for; given, whether any of the flags is.
func (r *rotation) rotates() bool { return r.every > 0 || r.size > 0 }
func (r *rotation) given() bool   { return r.rotates() || r.keep > 0 || r.keepSize > 0 }

// directory returns the path of a directory that exists, making one for a name that ends in /.
func directory(path string) (string, error) {
	if st, err := os.Stat(path); err == nil {
		if !st.IsDir() {
			return "", fmt.Errorf("%s is not a directory: files of periods go to a directory (DIR/)", path)
		}
		return path, nil
	}
	if !strings.HasSuffix(path, "/") {
		return "", fmt.Errorf("no directory %s (a name ending in / makes one)", path)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return "", err
	}
	return path, nil
}

// readsBodies reports whether --save-on reads the messages' bodies: they must be decoded in
// full, and their trees kept until the pair is decided.
func (a *alwaysOnOptions) readsBodies() bool { return a.expr != nil && a.expr.ReadsBodies() }

// needs adds what --save-on reads to what the format needs.
func (a *alwaysOnOptions) needs(n render.Needs) render.Needs {
	if a.expr != nil {
		n.Facts = true
		n.Tree = n.Tree || a.expr.ReadsBodies()
	}
	return n
}

// rotating sets the capture command's files of periods (--rotate, --rotate-size), which are
// for a capture that arrives as it is made: a pipe's output (-o DIR/) and the packets it
// brings (-w DIR/) go to them instead of one file each.
func (o *captureOptions) rotating(files []string, stdin io.Reader, stderr io.Writer) error {
	if name := fileAmong(files, stdin); name != "" {
		return fmt.Errorf("--rotate, --rotate-size, --keep and --keep-size are for captures that arrive as they are made (kdissect live, or a pipe: tcpdump -U -w - ... | kdissect --rotate 1h -o DIR/ -): %s is a file (without them, -o DIR/ writes one file per capture)", name)
	}
	a := alwaysOnOptions{rotation: o.rotation, dir: o.OutPath}
	always, err := a.build(&o.Common, o.Write, stderr)
	if err != nil {
		return err
	}
	if o.OutPath != "" && always.New == nil {
		return fmt.Errorf("--format %s writes no file to rotate", o.Format)
	}
	if always.Packets != "" {
		o.Write = "" // the packets go to the files of periods, every one as it is read
	}
	o.Always, o.OutPath = always, ""
	return nil
}

// fileAmong returns the first of files that is read whole, not as it arrives ("" when every
// one is a pipe or a FIFO).
func fileAmong(files []string, stdin io.Reader) string {
	for _, name := range files {
		switch {
		case name == "-" && !capture.IsStream(stdin):
			return "stdin (-)"
		case name != "-" && !capture.IsStreamName(name):
			return name
		}
	}
	return ""
}
