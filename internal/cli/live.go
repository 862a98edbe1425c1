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
	// Always, when not nil, writes the output to files of periods and keeps a flight recorder.
	Always *AlwaysOn
	// Stats are the analyses of --stats (Analyses), whose fields the codec keeps; Findings,
	// the doctor of --findings (NewFindings), likewise.
	Stats    analysis.Set
	Findings *Findings
}

// Run captures through a pipeline of cfg (its Limit, Flush, Stop and Warn are set here),
// showing each message in format f as it completes, then the statistics and the findings on
// stdout and the counts on stderr. Its result is the exit status.
func (l Live) Run(cmd *Command, cfg dissect.Config, f render.Format, stdout, stderr io.Writer) int {
	// From here on, Ctrl-C and SIGTERM end the capture cleanly (a signal that comes while the
	// socket is set up waits).
	interrupts := CatchInterrupts()
	defer interrupts.Release()

	lopt := capture.LiveOptions{Ports: l.Ports.Ranges(), Warn: func(err error) { fmt.Fprintf(stderr, "kdissect: %v\n", err) }}
	var save *capture.SaveFile
	if l.Write != "" {
		save = capture.NewSaveFile(l.Write)
		lopt.Save = save
	}
	on := l.Always.tap(&lopt)
	r, failed := openLive(cmd, stderr, l.Iface, lopt)
	if r == nil {
		if save != nil {
			save.Close()
		}
		return failed
	}
	cfg.Out = on.start(l.Iface, cfg.Out, stderr)
	fmt.Fprintf(stderr, "kdissect: capturing on %s (Kafka on TCP %s); stops after %s\n", l.Iface, l.Ports, StopsAfter(l.Count, l.Duration, "Ctrl-C"))

	stop := sync.OnceFunc(r.Stop)
	interrupts.Then(stop)
	if l.Duration > 0 {
		t := time.AfterFunc(l.Duration, stop)
		defer t.Stop()
	}

	cfg.Limit, cfg.Flush, cfg.Stop = l.Count, true, stop
	defer TuneGC(cfg.Codec.Shallow, len(cfg.Codec.Keep) > 0, false, f.HeapLimit)() // else the heap doubles what it holds, for days
	stats := l.Stats
	if stats != nil {
		cfg.Stats = stats
	}
	cfg.Warn = func(err error) { fmt.Fprintf(stderr, "kdissect: %v\n", err) }
	l.Findings.Feed(&cfg)
	p, err := dissect.New(cfg)
	if err != nil {
		on.abandon(cfg.Out)
		return cmd.UsageError(stderr, "%v", err)
	}
	_, readErr := p.Read(r, l.Iface)
	status := ExitOK
	if readErr != nil {
		fmt.Fprintf(stderr, "kdissect: %v\n", readErr)
		status = ExitFailure
	}
	st, err := closeLive(r)
	if err != nil {
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
	on.close()
	if writeErr == nil {
		writeErr = l.found(f, paged, stdout)
	}
	ks, _ := r.KernelStats()
	shown, _ := p.Shown()
	fmt.Fprintf(stderr, "kdissect: %s, %s shown; %s received by filter, %d dropped by kernel\n",
		captured(st), plural.Count(shown, "Kafka message"), plural.Count(ks.Received, "packet"), ks.Dropped)
	noticesLeftOut(p, "", stderr)
	idleFlushed(p, "", stderr)
	if save != nil && status == ExitOK {
		fmt.Fprintf(stderr, "kdissect: wrote %s to %s\n", plural.Count(st.Packets, "packet"), l.Write)
	}
	if writeErr != nil {
		return cmd.Failed(stderr, "writing output: %v", writeErr)
	}
	return status
}

// found writes what the run found after the messages, in format f: the statistics (unless
// paged: the output's page shows them) and the findings.
func (l Live) found(f render.Format, paged bool, stdout io.Writer) error {
	if l.Stats != nil && !paged {
		if err := f.WriteStats(stdout, l.Stats.Tables(), TableWidth(stdout)); err != nil {
			return err
		}
	}
	return l.Findings.Write(f, stdout, l.Iface)
}

// openLive opens the live capture of iface (for Live and Serve). When it cannot, it says why
// on stderr and returns nil and the exit status.
func openLive(cmd *Command, stderr io.Writer, iface string, opt capture.LiveOptions) (*capture.Reader, int) {
	r, err := capture.OpenLive(iface, opt)
	if err != nil {
		return nil, liveFailed(cmd, stderr, pipeInstead(err, iface))
	}
	return r, ExitOK
}

// pipeInstead adds to the error of a system without live capture the pipeline that does it
// there: a capture tool writing to kdissect's standard input.
func pipeInstead(err error, iface string) error {
	if !errors.Is(err, capture.ErrLiveUnsupported) {
		return err
	}
	return fmt.Errorf("%w; here, pipe a capture tool into kdissect, which dissects it as it arrives: tcpdump -i %s -U -w - 'tcp port 9092' | kdissect -p 9092 - (on Windows: dumpcap -i %s -w - -f 'tcp port 9092' | kdissect -p 9092 -)", err, iface, iface)
}

// closeLive closes a live capture, returning its counts.
func closeLive(r *capture.Reader) (capture.Stats, error) {
	st := r.Stats()
	return st, r.Close()
}

// captured says what a live capture has seen: "N packets captured (M TCP)".
func captured(st capture.Stats) string {
	return fmt.Sprintf("%s captured (%d TCP)", plural.Count(st.Packets, "packet"), st.TCP)
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
