package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kdissect/kdissect/internal/linelog"
)

// capture is a running tcpdump process writing one file.
type capture struct {
	file string // the capture to make
	raw  string // the pcap tcpdump writes: file, or a temporary one
	cmd  *exec.Cmd
	done chan error   // receives the process's exit status once
	log  *linelog.Log // what the process printed on stderr
}

// captureStartTimeout bounds how long we wait for tcpdump to say it is
// listening; captureStopTimeout how long it gets to flush and exit.
const (
	// pcapngComment is the section comment of the .pcapng captures.
	pcapngComment = "kdissect test capture, made by pcaps/gen (tcpdump on lo, converted by editcap)"

	captureStartTimeout = 15 * time.Second
	captureStopTimeout  = 10 * time.Second
	// settle lets the kernel hand the last packets to tcpdump before we
	// ask it to stop; we also wait that long after it starts, as a margin.
	settle = 300 * time.Millisecond
	// captureBufferMiB is the kernel buffer tcpdump asks for. In
	// immediate mode every packet takes a slot as large as the snap length
	// (256 KiB), so the default 2 MiB buffer holds 8 packets and a burst
	// of small ones overflows it.
	captureBufferMiB = 128
)

// droppedRE finds tcpdump's counts of lost packets: "N packets dropped by
// kernel" (and on some systems "by interface").
var droppedRE = regexp.MustCompile(`(\d+) packets? dropped`)

// portFilter returns a capture filter matching TCP traffic on any of ports.
func portFilter(ports []int) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = fmt.Sprintf("tcp port %d", p)
	}
	return strings.Join(parts, " or ")
}

// startCapture starts tcpdump capturing loopback traffic on ports and
// returns once it reports that it is listening. tcpdump writes classic
// pcap; for a file ending in .pcapng it writes a temporary pcap that stop
// converts with editcap. (tshark's dumpcap says it is capturing a few
// hundred milliseconds before it really is, and would miss the first
// packets; tcpdump attaches its filter before it says "listening on".)
func startCapture(file string, ports []int) (*capture, error) {
	raw := file
	if strings.HasSuffix(file, ".pcapng") {
		raw = strings.TrimSuffix(file, ".pcapng") + ".tmp.pcap"
	}
	for _, f := range []string{file, raw} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	// --immediate-mode: get each packet at once, not in blocks that could
	// still sit in the kernel when tcpdump is stopped; -U: write each
	// packet as it arrives; -s 0: whole packets; -B: kernel buffer in KiB
	// (see captureBufferMiB); -Z root: keep root so the file can be
	// written in any folder.
	cmd := exec.Command("tcpdump", "--immediate-mode", "-i", "lo", "-U", "-s", "0",
		"-B", strconv.Itoa(captureBufferMiB*1024), "-Z", "root", "-w", raw, portFilter(ports))
	// If gen dies, tcpdump is told to finish too rather than run on.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT}
	// A pipe is created before the process starts so that nothing it
	// prints is lost.
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	c := &capture{file: file, raw: raw, cmd: cmd, done: make(chan error, 1), log: linelog.New(stderr, "listening on")}
	go func() {
		<-c.log.Done() // read all of stderr before Wait closes the pipe
		c.done <- cmd.Wait()
	}()

	select {
	case <-c.log.Ready():
		time.Sleep(settle)
		return c, nil
	case err := <-c.done:
		return nil, fmt.Errorf("%s exited before listening (%v): %s", cmd.Path, err, c.log.String())
	case <-time.After(captureStartTimeout):
		_ = cmd.Process.Kill()
		<-c.done
		return nil, fmt.Errorf("%s did not start listening within %v: %s", cmd.Path, captureStartTimeout, c.log.String())
	}
}

// stop asks tcpdump to finish (SIGINT, as Ctrl-C would), waits for it
// to write the rest of the file and exit. It fails if packets were lost.
func (c *capture) stop() error {
	time.Sleep(settle)
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return fmt.Errorf("interrupt %s: %w", c.cmd.Path, err)
	}
	select {
	case err := <-c.done:
		if err != nil {
			return fmt.Errorf("%s: %w: %s", c.cmd.Path, err, c.log.String())
		}
	case <-time.After(captureStopTimeout):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s did not exit within %v after SIGINT", c.cmd.Path, captureStopTimeout)
	}
	for _, m := range droppedRE.FindAllStringSubmatch(c.log.String(), -1) {
		if m[1] != "0" {
			return fmt.Errorf("%s lost packets: %s", c.cmd.Path, c.log.String())
		}
	}
	if c.raw == c.file {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), captureStopTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "editcap", "-F", "pcapng", "--capture-comment", pcapngComment, c.raw, c.file).CombinedOutput()
	if err != nil {
		return fmt.Errorf("editcap: %w: %s", err, out)
	}
	return os.Remove(c.raw)
}

// abort ends tcpdump without caring about the file; for error paths.
func (c *capture) abort() {
	_ = c.cmd.Process.Kill()
	<-c.done
	if c.raw != c.file {
		_ = os.Remove(c.raw)
	}
}

// withCapture captures ports into file while fn runs. The capture is
// stopped cleanly when fn succeeds and killed when it fails.
func withCapture(ctx context.Context, file string, ports []int, fn func(context.Context) error) error {
	c, err := startCapture(file, ports)
	if err != nil {
		return err
	}
	if err := fn(ctx); err != nil {
		c.abort()
		return err
	}
	return c.stop()
}
