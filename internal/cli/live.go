package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/render"
)

// Live is a live capture's run ("kdissect live"): on Iface, of the Kafka Ports, until Ctrl-C,
// SIGTERM, Count messages or Duration; the packets captured also go to the pcapng file Write.
type Live struct {
	Iface    string
	Ports    *capture.Ports
	Count    int
	Duration time.Duration
	Write    string
	// Stats are the analyses of --stats (Analyses), whose fields the codec keeps.
	Stats analysis.Set
}

// Run captures through a pipeline of cfg (its Limit, Flush, Stop and Warn are set here),
// showing each message in format f as it completes, then the statistics on stdout and the
// counts on stderr. Its result is the exit status.
func (l Live) Run(cmd *Command, cfg dissect.Config, f render.Format, stdout, stderr io.Writer) int {
	// From here on, Ctrl-C and SIGTERM end the capture cleanly (a signal that comes while the
	// socket is set up waits).
	interrupts := CatchInterrupts()
	defer interrupts.Release()

	lopt := capture.LiveOptions{Ports: l.Ports.Ranges()}
	var save *capture.SaveFile
	if l.Write != "" {
		save = capture.NewSaveFile(l.Write)
		lopt.Save = save
	}
	r, err := capture.OpenLive(l.Iface, lopt)
	if err != nil {
		if save != nil {
			save.Close()
		}
		return liveFailed(cmd, stderr, err)
	}
	fmt.Fprintf(stderr, "kdissect: capturing on %s (Kafka on TCP %s); stops after %s\n", l.Iface, l.Ports, StopsAfter(l.Count, l.Duration, "Ctrl-C"))

	stop := sync.OnceFunc(r.Stop)
	interrupts.Then(stop)
	if l.Duration > 0 {
		t := time.AfterFunc(l.Duration, stop)
		defer t.Stop()
	}

	cfg.Limit, cfg.Flush, cfg.Stop = l.Count, true, stop
	stats := l.Stats
	if stats != nil {
		cfg.Stats = stats
	}
	cfg.Warn = func(err error) { fmt.Fprintf(stderr, "kdissect: %v\n", err) }
	p, err := dissect.New(cfg)
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	_, readErr := p.Read(r, l.Iface)
	status := ExitOK
	if readErr != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", readErr)
		status = ExitFailure
	}
	st := r.Stats()
	if err := r.Close(); err != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", err)
		status = ExitFailure
	}
	if save != nil {
		if err := save.Close(); err != nil {
			fmt.Fprintf(stderr, "kdissect: %v\n", err)
			status = ExitFailure
		}
	}
	paged := stats != nil && TablesOnPage(cfg.Out, stats)
	writeErr := p.Close()
	if stats != nil && !paged && writeErr == nil {
		writeErr = f.WriteStats(stdout, stats.Tables(), TableWidth(stdout))
	}
	ks, _ := r.KernelStats()
	shown, _ := p.Shown()
	fmt.Fprintf(stderr, "kdissect: %s captured (%d TCP), %s shown; %s received by filter, %d dropped by kernel\n",
		plural.Count(st.Packets, "packet"), st.TCP, plural.Count(shown, "Kafka message"), plural.Count(ks.Received, "packet"), ks.Dropped)
	noticesLeftOut(p, "", stderr)
	if save != nil && status == ExitOK {
		fmt.Fprintf(stderr, "kdissect: wrote %s to %s\n", plural.Count(st.Packets, "packet"), l.Write)
	}
	if writeErr != nil {
		return cmd.Failed(stderr, "writing output: %v", writeErr)
	}
	return status
}

// liveFailed says why a live capture could not start; its result is the exit status. An
// interface that does not exist, or a system without live capture, is a usage error (2); a
// missing privilege is not (1), and says how to grant it without sudo's PATH, which may not
// find a binary in ~/go/bin.
func liveFailed(cmd *Command, stderr io.Writer, err error) int {
	if errors.Is(err, capture.ErrNoInterface) || errors.Is(err, capture.ErrLiveUnsupported) {
		return cmd.UsageError(stderr, "%v", err)
	}
	if errors.Is(err, capture.ErrPermission) {
		name := cmd.prog.Name
		return cmd.Failed(stderr, "%v. Grant it once to the binary:\n  %s\nor run it as root by its full path: sudo $(command -v %s)%s ...",
			err, SetcapCommand(name), name, strings.TrimPrefix(cmd.Path(), name))
	}
	return cmd.Failed(stderr, "%v", err)
}

// SetcapCommand is the command that grants the program named what live capture needs, once,
// so that it runs without root.
func SetcapCommand(name string) string {
	return "sudo setcap cap_net_raw,cap_net_admin=eip $(command -v " + name + ")"
}
