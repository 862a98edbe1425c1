package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/kdissect/kdissect/internal/testutil"
)

// netns makes a network namespace with its loopback interface up, removed at the end of the
// test: traffic replayed there is the only traffic a capture in it sees. It skips the test
// without root, ip or tcpreplay.
func netns(t *testing.T) string {
	t.Helper()
	testutil.NeedRoot(t)
	for _, tool := range []string{"ip", "tcpreplay"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found (apt-get install -y iproute2 tcpreplay)", tool)
		}
	}
	name := fmt.Sprintf("kdissect-test-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
	return name
}

// replay sends a capture of pcaps/ on the namespace's loopback interface, loops times, each
// time with other addresses (new connections), at pps packets a second.
func replay(t *testing.T, ns, capture string, loops, pps int) {
	replayOn(t, ns, "lo", capture, loops, pps)
}

// replayOn replays on an interface of the namespace.
func replayOn(t *testing.T, ns, iface, capture string, loops, pps int) {
	t.Helper()
	args := []string{"netns", "exec", ns, "tcpreplay", "-q", "-i", iface, "--pps", fmt.Sprint(pps), "--loop", fmt.Sprint(loops)}
	if loops > 1 {
		args = append(args, "--unique-ip")
	}
	out, err := exec.Command("ip", append(args, filepath.Join("..", "..", "pcaps", capture))...).CombinedOutput()
	if err != nil {
		t.Fatalf("tcpreplay %s: %v: %s", capture, err, out)
	}
}

// startLiveIn starts kdissect live on an interface of a namespace.
func startLiveIn(t *testing.T, bin, ns, iface string, args ...string) *liveProcess {
	t.Helper()
	wrapper := filepath.Join(t.TempDir(), "kdissect-in-ns")
	script := fmt.Sprintf("#!/bin/sh\nexec ip netns exec %s %s \"$@\"\n", ns, bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return startLive(t, wrapper, iface, args...)
}

// waitFor waits until the process has said want on stderr; after timeout it fails.
func (lp *liveProcess) waitFor(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(lp.stderr.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("kdissect live did not say %q within %v:\n%s", want, timeout, lp.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLiveFlightRecorder replays thousands of messages with one error response among them
// (sarama's JoinGroup answered MEMBER_ID_REQUIRED) to kdissect live --ring --save-on: exactly
// one pcapng file is saved, its comment names the pair, and kdissect reads back from it the
// failing pair and the messages around it.
func TestLiveFlightRecorder(t *testing.T) {
	ns := netns(t)
	bin := kdissectBinary(t)
	dir := t.TempDir()
	lp := startLiveIn(t, bin, ns, "lo", "--format", "none", "--ring", "16MB", "--save-on", "len(errors) > 0",
		"--save-before", "1h", "--save-after", "1s", "-o", dir+"/")
	replay(t, ns, "kgo-produce-fetch.pcap", 40, 4000) // 40 × 42 messages
	replay(t, ns, "sarama-produce-consume.pcap", 1, 4000)
	replay(t, ns, "kafkago-produce-consume.pcap", 10, 4000) // 10 × 64; no errors
	lp.waitFor(t, "saved the ring to", 60*time.Second)
	if err := lp.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := lp.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, lp.stderr)
	}
	t.Logf("stderr:\n%s", lp.stderr)
	if !strings.Contains(lp.stderr.String(), "saved 1 file") || !strings.Contains(lp.stderr.String(), "0 dropped by kernel") {
		t.Errorf("stderr does not say one file saved and no packet dropped")
	}
	saved, err := filepath.Glob(filepath.Join(dir, "*.saved.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	all, _ := os.ReadDir(dir)
	if len(saved) != 1 || len(all) != 1 {
		t.Fatalf("saved %q; the directory holds %d entries; want one file", saved, len(all))
	}

	f, err := os.Open(saved[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatal(err)
	}
	comment := r.SectionInfo().Comment
	if !strings.Contains(comment, `--save-on "len(errors) > 0" matched the JoinGroup response v8`) || !strings.Contains(comment, "correlation id 3,") {
		t.Errorf("comment %q does not name the JoinGroup response", comment)
	}
	packets := 0
	for {
		if _, _, err := r.ReadPacketData(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		packets++
	}

	// Read back: the failing pair, paired, and its context: the messages replayed before it
	// (--save-before 1h: all the ring holds).
	out, errOut, code := kdissect(t, "--format", "json", "--errors", saved[0])
	if code != 0 {
		t.Fatalf("reading %s back: exit %d: %s", saved[0], code, errOut)
	}
	var pair []string
	for _, m := range parseLines(t, out) {
		if m["kind"] == "request" || m["kind"] == "response" {
			rf, _ := m["request_frame"].(float64)
			pair = append(pair, fmt.Sprintf("%v %v corr %v paired %v", m["api_name"], m["kind"], m["correlation_id"], rf > 0 || m["kind"] == "request"))
		}
	}
	if want := []string{"JoinGroup request corr 3 paired true", "JoinGroup response corr 3 paired true"}; !slices.Equal(pair, want) ||
		!strings.Contains(out, "MEMBER_ID_REQUIRED") {
		t.Errorf("the pairs with errors read back: %q; want %q, with MEMBER_ID_REQUIRED", pair, want)
	}
	out, errOut, code = kdissect(t, "--format", "summary", saved[0])
	if code != 0 {
		t.Fatalf("reading %s back: exit %d: %s", saved[0], code, errOut)
	}
	if n := strings.Count(out, "kdissect-producer"); n < 40 {
		t.Errorf("%d packets read back, %d messages of the replay before the error; want its 40 loops", packets, n)
	}
}

// TestLiveInterfaceFlap: the interface captured on goes down and up again; kdissect live says
// so, waits, and captures what comes after, without exiting.
func TestLiveInterfaceFlap(t *testing.T) {
	ns := netns(t)
	bin := kdissectBinary(t)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", append([]string{"netns", "exec", ns, "ip"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip %q: %v: %s", args, err, out)
		}
	}
	ip("link", "add", "v0", "type", "veth", "peer", "name", "v1")
	ip("link", "set", "v0", "up")
	ip("link", "set", "v1", "up")
	lp := startLiveIn(t, bin, ns, "v0", "--format", "json")
	ip("link", "set", "v0", "down")
	lp.waitFor(t, "waiting for it to come back", 30*time.Second)
	ip("link", "set", "v0", "up")
	lp.waitFor(t, "capturing on v0 again", 30*time.Second)
	replayOn(t, ns, "v1", "kgo-produce-fetch.pcap", 1, 1000)
	out, _, _ := kdissect(t, "--format", "json", filepath.Join("..", "..", "pcaps", "kgo-produce-fetch.pcap"))
	want := len(messagesOf(t, out))
	// Let the capture read what was replayed (a connection's last message may show only at
	// the end: then this waits its five seconds).
	for deadline := time.Now().Add(5 * time.Second); len(messagesOf(t, lp.stdout.String())) < want && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if err := lp.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := lp.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, lp.stderr)
	}
	if got := len(messagesOf(t, lp.stdout.String())); got != want {
		t.Errorf("%d messages after the interface came back, want the capture's %d:\n%s", got, want, lp.stderr)
	}
}

// TestLiveFullDisk writes rotating JSON files to a file system too small for them (a tmpfs of
// 256 KB): kdissect live says that a file is left out, goes on capturing, and leaves only
// complete files, each of whole JSON lines, and no temporary one.
func TestLiveFullDisk(t *testing.T) {
	ns := netns(t)
	bin := kdissectBinary(t)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	lp := startLiveIn(t, bin, ns, "lo", "--format", "json", "--rotate-size", "100KB", "-o", dir)
	replay(t, ns, "kgo-produce-fetch.pcap", 20, 4000)
	lp.waitFor(t, "capture goes on", 30*time.Second)
	if err := lp.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := lp.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, lp.stderr)
	}
	t.Logf("stderr:\n%s", lp.stderr)
	if !strings.Contains(lp.stderr.String(), "no space left on device") {
		t.Errorf("stderr does not say the disk is full")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".jsonl") || strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s left in the directory", e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 || b[len(b)-1] != '\n' {
			t.Errorf("%s does not end with a whole line", e.Name())
		}
		parseLines(t, string(b)) // fails on a line cut short
		files++
	}
	if files == 0 {
		t.Errorf("no file written")
	}
}

// TestLiveHangup: SIGHUP closes the current file and begins the next: two of them, then
// SIGINT, leave three complete files, which hold every message.
func TestLiveHangup(t *testing.T) {
	ns := netns(t)
	bin := kdissectBinary(t)
	dir := t.TempDir()
	lp := startLiveIn(t, bin, ns, "lo", "--format", "json", "-o", dir)
	files := func() int {
		m, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		return len(m)
	}
	for i := 1; i <= 2; i++ {
		replay(t, ns, "kgo-produce-fetch.pcap", 1, 2000)
		if err := lp.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); files() < i; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no file %d after SIGHUP %d:\n%s", i, i, lp.stderr)
			}
		}
	}
	if err := lp.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := lp.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, lp.stderr)
	}
	entries, _ := os.ReadDir(dir)
	if n := files(); n != 3 || len(entries) != 3 {
		t.Fatalf("%d files, %d entries in the directory; want 3 files", n, len(entries))
	}
	// Every message replayed is in one of the files.
	out, _, _ := kdissect(t, "--format", "json", filepath.Join("..", "..", "pcaps", "kgo-produce-fetch.pcap"))
	want, got := 2*len(messagesOf(t, out)), 0
	m, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, f := range m {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got += len(messagesOf(t, string(b)))
	}
	if got != want {
		t.Errorf("the files hold %d messages; %d were replayed", got, want)
	}
}
