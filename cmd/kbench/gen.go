package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/internal/linelog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The brokers' ports: the ones kdissect and tshark are told about in run.
var brokerPorts = []int{9092, 9093, 9094}

// brokerPortList is brokerPorts as text, for command lines.
func brokerPortList() []string {
	ports := make([]string, len(brokerPorts))
	for i, p := range brokerPorts {
		ports[i] = strconv.Itoa(p)
	}
	return ports
}

type genOptions struct {
	out     string
	size    int64
	timeout time.Duration
	rate    float64       // MB/s of record values the producers may write together; 0: no limit
	kafka   string        // cap the clients' request versions at this Kafka release's; "": the newest
	backlog int64         // the plain consumers wait for this many bytes of values, then fetch them in big responses; 0: they read from the first record on
	inner   bool          // running inside the namespace
	with    string        // a shell command run in the namespace beside tcpdump, interrupted when the capture ends
	lasting time.Duration // stop after this long, whatever the size (0: at -size)
}

func genMain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kbench gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o genOptions
	size := fs.String("size", "200MB", "stop when the capture reaches this size (B, KB, MB, GB, KiB, MiB, GiB)")
	fs.StringVar(&o.out, "o", "", "the capture file to write (pcap); keep it out of the repository, e.g. /tmp/kbench.pcap")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up if the capture has not reached -size by then")
	fs.Float64Var(&o.rate, "rate", 5, "MB/s of record values all producers write together (0: no limit): lower, the batches are smaller and the consumers keep up; lower it too if tcpdump drops packets")
	fs.StringVar(&o.kafka, "kafka", "", "cap the clients' request versions at those of this Kafka release (e.g. 2.8): older tshark releases know only older versions (default: the newest franz-go speaks)")
	backlog := fs.String("backlog", "0", "the plain consumers start once the producers have written this much of record values, and fetch up to that much in one response (big Fetch responses, as a consumer catching up gets; no consumer groups then); 0: they read from the first record on")
	fs.StringVar(&o.with, "with", "", "also run this shell command in the namespace while the workload runs, started before the clients and interrupted (SIGINT) when tcpdump is, e.g. a live capture to measure: -with 'kdissect live -i lo -p 9092-9094 >/dev/null'")
	fs.DurationVar(&o.lasting, "for", 0, "stop after this long instead of at -size (a workload of a steady length: kbench soak)")
	fs.BoolVar(&o.inner, "inner", false, "internal: run the workload in the current network namespace")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if o.out == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "kbench gen: -o FILE is required, and nothing else")
		fs.Usage()
		return errUsage
	}
	n, err := cli.ParseSize(*size)
	if err != nil {
		fmt.Fprintf(stderr, "kbench gen: -size: %v\n", err)
		return errUsage
	}
	o.size = n
	if *backlog != "0" {
		if o.backlog, err = cli.ParseSize(*backlog); err != nil {
			fmt.Fprintf(stderr, "kbench gen: -backlog: %v\n", err)
			return errUsage
		}
	}
	if o.kafka != "" && kversion.FromString(o.kafka) == nil {
		fmt.Fprintf(stderr, "kbench gen: -kafka %q: not a Kafka release franz-go knows (%s)\n", o.kafka, strings.Join(kversion.VersionStrings(), " "))
		return errUsage
	}
	if o.out, err = filepath.Abs(o.out); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("needs root (network namespace, tcpdump): sudo go run ./cmd/kbench gen -o ...")
	}
	if o.inner {
		return genInner(o, stdout, stderr)
	}
	return genOuter(o, stdout, stderr)
}

// genOuter makes the network namespace, runs kbench gen -inner inside it, and removes it.
func genOuter(o genOptions, stdout, stderr io.Writer) error {
	for _, tool := range []string{"ip", "tcpdump"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found: apt-get install -y iproute2 tcpdump", tool)
		}
	}
	if _, err := exec.LookPath("ethtool"); err != nil {
		fmt.Fprintln(stderr, "kbench gen: ethtool not found; installing it with apt-get")
		if err := runQuiet(5*time.Minute, []string{"DEBIAN_FRONTEND=noninteractive"}, "apt-get", "install", "-y", "ethtool"); err != nil {
			return fmt.Errorf("install ethtool: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	ns := fmt.Sprintf("kbench-%d", os.Getpid())
	if err := runQuiet(30*time.Second, nil, "ip", "netns", "add", ns); err != nil {
		return fmt.Errorf("create network namespace: %w", err)
	}
	defer func() {
		if err := runQuiet(30*time.Second, nil, "ip", "netns", "del", ns); err != nil {
			fmt.Fprintf(stderr, "kbench gen: removing network namespace %s: %v\n", ns, err)
		}
	}()
	in := func(args ...string) []string { return append([]string{"ip", "netns", "exec", ns}, args...) }
	steps := [][]string{
		in("ip", "link", "set", "lo", "mtu", "1500", "up"),
		// Segments no larger than the MTU, as on a real network: no segmentation offload on
		// the way out, no coalescing on the way in.
		in("ethtool", "-K", "lo", "tso", "off", "gso", "off", "gro", "off"),
	}
	for _, s := range steps {
		if err := runQuiet(30*time.Second, nil, s[0], s[1:]...); err != nil {
			return fmt.Errorf("set up the namespace's loopback: %w", err)
		}
	}
	if err := checkLoopback(ns); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "network namespace %s: lo up, MTU 1500, tso/gso/gro off\n", ns)

	self, err := os.Executable()
	if err != nil {
		return err
	}
	args := in(self, "gen", "-inner", "-o", o.out, "-size", strconv.FormatInt(o.size, 10),
		"-timeout", o.timeout.String(), "-rate", strconv.FormatFloat(o.rate, 'f', -1, 64), "-kafka", o.kafka,
		"-backlog", strconv.FormatInt(o.backlog, 10), "-with", o.with, "-for", o.lasting.String())
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// ip netns exec execs kbench itself, which stops tcpdump and its clients on SIGINT.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// The inner run has its own timeout; this one catches a hang beyond it.
	timer := time.AfterFunc(o.timeout+2*time.Minute, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return errors.New("interrupted")
		}
		return fmt.Errorf("generator in the namespace: %w", err)
	}
	return nil
}

// checkLoopback verifies what the namespace's loopback was set to.
func checkLoopback(ns string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	link, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "ip", "link", "show", "lo").CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip link show lo: %v: %s", err, link)
	}
	if !strings.Contains(string(link), "mtu 1500 ") || !strings.Contains(string(link), "UP") {
		return fmt.Errorf("the namespace's lo is not up with MTU 1500: %s", link)
	}
	feat, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "ethtool", "-k", "lo").CombinedOutput()
	if err != nil {
		return fmt.Errorf("ethtool -k lo: %v: %s", err, feat)
	}
	for _, f := range []string{"tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload"} {
		if !regexp.MustCompile(`(?m)^` + f + `: off`).Match(feat) {
			return fmt.Errorf("the namespace's lo still has %s on", f)
		}
	}
	return nil
}

// runQuiet runs a command with a timeout and returns its output with the error.
func runQuiet(timeout time.Duration, env []string, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// genInner runs in the namespace: tcpdump, the cluster, the clients, until the file is big enough.
func genInner(o genOptions, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	start := time.Now()

	td, err := startTcpdump(o.out, brokerPorts)
	if err != nil {
		return err
	}
	defer td.kill()
	var with *exec.Cmd
	if o.with != "" {
		if with, err = startWith(o.with, stdout, stderr); err != nil {
			return err
		}
		defer func() { _ = syscall.Kill(-with.Process.Pid, syscall.SIGKILL) }()
	}
	cluster, err := kfake.NewCluster(
		kfake.Ports(brokerPorts...),
		kfake.ClusterID("kbench-cluster"),
		kfake.SeedTopics(int32(partitionsPerTopic), topics...),
		kfake.GroupMinSessionTimeout(time.Second),
	)
	if err != nil {
		return fmt.Errorf("kfake on ports %v: %w", brokerPorts, err)
	}
	defer cluster.Close()

	wctx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var versions *kversion.Versions
	if o.kafka != "" {
		versions = kversion.FromString(o.kafka)
	}
	w := startWorkload(wctx, cluster.ListenAddrs(), o.rate, versions, o.backlog)
	fmt.Fprintf(stdout, "capturing into %s until it holds %s (timeout %v)\n", o.out, fmtBytes(o.size), o.timeout)
	if err := waitForSize(ctx, o, td, w, start, stdout); err != nil {
		stopWork()
		w.wait(30 * time.Second)
		return err
	}
	// Close the clients while tcpdump still runs, so that the capture holds their goodbyes
	// (LeaveGroup, FIN).
	stopWork()
	if err := w.wait(30 * time.Second); err != nil {
		return err
	}
	cluster.Close()
	if with != nil {
		if err := stopWith(with); err != nil {
			return err
		}
	}
	tdStats, err := td.stop()
	if err != nil {
		return err
	}
	return reportCapture(o.out, tdStats, w, stdout)
}

// startWith starts the -with command line in a shell; its own process group lets SIGINT reach
// what the shell started.
func startWith(line string, stdout, stderr io.Writer) (*exec.Cmd, error) {
	with := exec.Command("sh", "-c", line)
	with.Stdout, with.Stderr = stdout, stderr
	with.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := with.Start(); err != nil {
		return nil, fmt.Errorf("-with: %w", err)
	}
	time.Sleep(time.Second) // a margin for it to start listening
	return with, nil
}

// waitForSize waits until o.out holds o.size bytes, saying how far it is every 5 seconds. It
// fails when ctx ends, the workload fails or tcpdump exits first.
func waitForSize(ctx context.Context, o genOptions, td *tcpdump, w *workload, start time.Time, stdout io.Writer) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	lastReport := time.Now()
	var size int64
	for {
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("timeout after %v: the capture holds %s of %s (left in %s)", o.timeout, fmtBytes(size), fmtBytes(o.size), o.out)
			}
			return errors.New("interrupted")
		case err := <-w.failed:
			return fmt.Errorf("workload: %w", err)
		case <-td.exited:
			return fmt.Errorf("tcpdump exited early (%v): %s", td.waitErr, td.log.String())
		case <-tick.C:
			if st, err := os.Stat(o.out); err == nil {
				size = st.Size()
			}
			if size >= o.size || o.lasting > 0 && time.Since(start) >= o.lasting {
				return nil
			}
			if time.Since(lastReport) >= 5*time.Second {
				lastReport = time.Now()
				fmt.Fprintf(stdout, "  %6.1fs  %s  (%s of record values produced, %d records consumed)\n",
					time.Since(start).Seconds(), fmtBytes(size), fmtBytes(w.valueBytes.Load()), w.consumed.Load())
			}
		}
	}
}

// reportCapture reads the capture back and says what it and the workload hold.
func reportCapture(out, tdStats string, w *workload, stdout io.Writer) error {
	info, err := inspectCapture(out)
	if err != nil {
		return fmt.Errorf("reading back %s: %w", out, err)
	}
	if info.truncated > 0 {
		return fmt.Errorf("%s: %d packets were cut by the snap length", out, info.truncated)
	}
	fmt.Fprintf(stdout, "%s: %s, %d packets (largest %d bytes on the wire), %.1fs of traffic; tcpdump: %s\n",
		out, fmtBytes(info.size), info.packets, info.maxLen, info.duration().Seconds(), tdStats)
	fmt.Fprintf(stdout, "workload: %d producers, %s of record values in %d records produced, %d records consumed\n",
		numProducers, fmtBytes(w.valueBytes.Load()), w.produced.Load(), w.consumed.Load())
	return nil
}

// stopWith interrupts the -with command as tcpdump is, and waits for it.
func stopWith(cmd *exec.Cmd) error {
	time.Sleep(300 * time.Millisecond) // let the last packets reach it
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		// Stopped by the interrupt (the shell, or a command that dies of it) is the end asked for.
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if ws, ok := exit.Sys().(syscall.WaitStatus); ok && (ws.Signaled() && ws.Signal() == syscall.SIGINT || ws.ExitStatus() == 130) {
				return nil
			}
		}
		if err != nil {
			return fmt.Errorf("-with %q: %w", strings.Join(cmd.Args[2:], " "), err)
		}
		return nil
	case <-time.After(tcpdumpStop):
		return fmt.Errorf("-with %q did not exit within %v of SIGINT", strings.Join(cmd.Args[2:], " "), tcpdumpStop)
	}
}

// tcpdump is a running tcpdump writing one file.
type tcpdump struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed once tcpdump has exited and waitErr is set
	waitErr error
	log     *linelog.Log
}

const (
	// tcpdumpBufferKiB is the kernel buffer (-B) tcpdump asks for: a burst of small
	// segments must not overflow it.
	tcpdumpBufferKiB = 512 << 10
	tcpdumpStart     = 15 * time.Second
	tcpdumpStop      = 30 * time.Second
)

func startTcpdump(file string, ports []int) (*tcpdump, error) {
	if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var filter []string
	for _, p := range ports {
		filter = append(filter, fmt.Sprintf("tcp port %d", p))
	}
	// --immediate-mode: hand each packet over at once (with the MTU at 1500 and offloads off
	// libpcap sizes its ring slots by the MTU, so the large -B holds many of them); -s 0:
	// whole packets; -Z root: keep root to write anywhere.
	cmd := exec.Command("tcpdump", "-i", "lo", "--immediate-mode", "-s", "0",
		"-B", strconv.Itoa(tcpdumpBufferKiB), "-Z", "root", "-w", file, strings.Join(filter, " or "))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start tcpdump: %w", err)
	}
	t := &tcpdump{cmd: cmd, exited: make(chan struct{}), log: linelog.New(errPipe, "listening on")}
	go func() {
		<-t.log.Done() // all of stderr is read before Wait closes the pipe
		t.waitErr = cmd.Wait()
		close(t.exited)
	}()
	select {
	case <-t.log.Ready():
		time.Sleep(300 * time.Millisecond) // a margin for the filter to be in place
		return t, nil
	case <-t.exited:
		return nil, fmt.Errorf("tcpdump exited before listening (%v): %s", t.waitErr, t.log.String())
	case <-time.After(tcpdumpStart):
		t.kill()
		return nil, fmt.Errorf("tcpdump did not start listening within %v: %s", tcpdumpStart, t.log.String())
	}
}

// droppedRE finds tcpdump's counts of lost packets ("N packets dropped by kernel", "... by
// interface").
var droppedRE = regexp.MustCompile(`(\d+) packets? dropped by (\w+)`)

// dropped returns what tcpdump's closing report says was lost, and whether it said anything.
func dropped(report string) (lost map[string]int64, found bool) {
	lost = map[string]int64{}
	for _, m := range droppedRE.FindAllStringSubmatch(report, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		lost[m[2]] += n
		found = true
	}
	return lost, found
}

// stop interrupts tcpdump, waits for it, and fails if it lost packets. It returns tcpdump's
// closing report.
func (t *tcpdump) stop() (string, error) {
	time.Sleep(300 * time.Millisecond) // let the last packets reach tcpdump
	if err := t.cmd.Process.Signal(os.Interrupt); err != nil {
		return "", fmt.Errorf("interrupt tcpdump: %w", err)
	}
	select {
	case <-t.exited:
		if t.waitErr != nil {
			return "", fmt.Errorf("tcpdump: %v: %s", t.waitErr, t.log.String())
		}
	case <-time.After(tcpdumpStop):
		t.kill()
		return "", fmt.Errorf("tcpdump did not exit within %v of SIGINT", tcpdumpStop)
	}
	report := t.log.String()
	lost, found := dropped(report)
	if !found {
		return "", fmt.Errorf("tcpdump did not report dropped packets: %s", report)
	}
	for by, n := range lost {
		if n != 0 {
			return "", fmt.Errorf("tcpdump dropped %d packets (by %s); lower -rate: %s", n, by, report)
		}
	}
	var counts []string
	for _, l := range t.log.Lines() {
		if strings.Contains(l, "packets ") {
			counts = append(counts, l)
		}
	}
	return strings.Join(counts, ", "), nil
}

// kill ends tcpdump if it still runs.
func (t *tcpdump) kill() {
	select {
	case <-t.exited:
		return
	default:
	}
	_ = t.cmd.Process.Signal(os.Interrupt)
	select {
	case <-t.exited:
	case <-time.After(tcpdumpStop):
		_ = t.cmd.Process.Kill()
		<-t.exited
	}
}

// fmtBytes writes a byte count in decimal megabytes (or kB, GB) as the MB/s figures use.
func fmtBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
