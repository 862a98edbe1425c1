package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/internal/cli"
	"github.com/kdissect/kdissect/internal/testutil"
)

// loopback is the name of the loopback interface.
func loopback(t *testing.T) string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			return i.Name
		}
	}
	t.Skip("no loopback interface")
	return ""
}

// kdissectBinary builds the command into a test directory that every user may enter, so that
// it can also run with dropped privileges.
func kdissectBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "kdissect")
	out, err := exec.Command(goTool(), "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// watchedBuffer collects a subprocess's output and says when a string has appeared in it.
type watchedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func newWatchedBuffer(want string) *watchedBuffer {
	return &watchedBuffer{want: want, seen: make(chan struct{})}
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// liveProcess is a running "kdissect live".
type liveProcess struct {
	cmd    *exec.Cmd
	stdout *watchedBuffer
	stderr *watchedBuffer
	exited chan error
}

// startLive starts kdissect live with args and waits until it says it is capturing.
func startLive(t *testing.T, bin, iface string, args ...string) *liveProcess {
	t.Helper()
	lp := &liveProcess{
		cmd:    exec.Command(bin, append([]string{"live", "-i", iface}, args...)...),
		stdout: newWatchedBuffer("\x00"),
		stderr: newWatchedBuffer("capturing on " + iface),
		exited: make(chan error, 1),
	}
	lp.cmd.Stdout, lp.cmd.Stderr = lp.stdout, lp.stderr
	if err := lp.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { lp.exited <- lp.cmd.Wait() }()
	t.Cleanup(func() {
		if lp.cmd.ProcessState == nil {
			lp.cmd.Process.Kill()
			<-lp.exited
		}
	})
	select {
	case <-lp.stderr.seen:
	case err := <-lp.exited:
		t.Fatalf("kdissect live exited before capturing: %v\n%s", err, lp.stderr)
	case <-time.After(15 * time.Second):
		t.Fatalf("kdissect live did not say it was capturing within 15s:\n%s", lp.stderr)
	}
	return lp
}

// wait waits for the process to exit on its own and returns its exit status; after timeout it
// kills the process and fails.
func (lp *liveProcess) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case err := <-lp.exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(timeout):
		lp.cmd.Process.Kill()
		<-lp.exited
		t.Fatalf("kdissect live still running after %v; killed. stderr:\n%s", timeout, lp.stderr)
		return -1
	}
}

// newKfake starts a one-broker kfake cluster on 127.0.0.1, on a port the system picks. Its
// connections send no TCP keep-alive probes (see noKeepAlive).
func newKfake(t *testing.T, topic string) (*kfake.Cluster, string, int) {
	t.Helper()
	listen := func(network, addr string) (net.Listener, error) {
		lc := net.ListenConfig{KeepAlive: -1}
		return lc.Listen(context.Background(), network, addr)
	}
	c, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.SeedTopics(1, topic),
		kfake.GroupMinSessionTimeout(time.Second),
		kfake.ListenFn(listen),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(p)
	return c, addr, port
}

// noKeepAlive dials without TCP keep-alive. Go probes a connection after 15 s without
// traffic, so a run slowed down by a loaded machine would capture probes and a quick one none:
// the captures of the live tests are the same either way without them. kdissect's handling of
// probes is tested on captures that hold them (dissect.TestKeepAlive).
func noKeepAlive() kgo.Opt {
	d := &net.Dialer{KeepAlive: -1}
	return kgo.Dialer(d.DialContext)
}

// liveMsg is what the live and file outputs must agree on.
type liveMsg struct {
	frame, stream int
	kind          string
	api, version  int
	corr          int
}

func messagesOf(t *testing.T, out string) []liveMsg {
	t.Helper()
	var msgs []liveMsg
	for _, m := range parseLines(t, out) {
		kind, _ := m["kind"].(string)
		if kind != "request" && kind != "response" {
			continue
		}
		num := func(k string) int {
			f, ok := m[k].(float64)
			if !ok {
				return -1
			}
			return int(f)
		}
		msgs = append(msgs, liveMsg{frame: num("frame"), stream: num("stream"), kind: kind,
			api: num("api_key"), version: num("api_version"), corr: num("correlation_id")})
	}
	return msgs
}

// TestLiveCapture runs "kdissect live -i lo" as root against a kfake broker while a franz-go
// client produces, consumes as a group member and commits; kdissect stops by itself after N
// messages. Every message must come once, every response paired, and the pcapng file it wrote
// must dissect to the same messages.
func TestLiveCapture(t *testing.T) {
	testutil.NeedRoot(t)
	lo := loopback(t)
	bin := kdissectBinary(t)
	const (
		topic = "kdissect-live"
		group = "kdissect-live-group"
		count = 150 // messages; the client keeps fetching and heartbeating until kdissect is done
	)
	_, addr, port := newKfake(t, topic)
	dir := t.TempDir()
	pcapng := filepath.Join(dir, "out.pcapng")
	lp := startLive(t, bin, lo, "-p", strconv.Itoa(port), "-c", strconv.Itoa(count), "--format", "json", "-w", pcapng)

	// Guards against a hang, not bounds: a loaded machine has made the test take 42 s.
	const guard = 3 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	opts := []kgo.Opt{
		kgo.SeedBrokers(addr),
		kgo.FetchMaxWait(100 * time.Millisecond),
		kgo.RetryTimeout(10 * time.Second),
		noKeepAlive(),
	}
	prod, err := kgo.NewClient(append(opts, kgo.ClientID("live-producer"), kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var recs []*kgo.Record
	for i := range 3 {
		recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "live record %d", i)})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}

	cons, err := kgo.NewClient(append(opts, kgo.ClientID("live-consumer"),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(3*time.Second),
		kgo.HeartbeatInterval(200*time.Millisecond),
		kgo.DisableAutoCommit(),
	)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := 0
	for got < len(recs) {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", got, len(recs), err)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			t.Fatalf("fetch: %v", errs[0].Err)
		}
		got += len(fs.Records())
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	// Keep the member fetching and heartbeating until kdissect has its count.
	pollCtx, stopPolling := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for pollCtx.Err() == nil {
			cons.PollFetches(pollCtx)
		}
	}()
	code := lp.wait(t, guard)
	stopPolling()
	<-polled
	errOut := lp.stderr.String()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	t.Logf("stderr:\n%s", errOut)
	for _, want := range []string{"packets captured", "dropped by kernel", "wrote"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}

	live := messagesOf(t, lp.stdout.String())
	if len(live) != count {
		t.Fatalf("%d messages, want %d (-c)", len(live), count)
	}
	type once struct {
		stream, corr int
		kind         string
	}
	seen := map[once]int{}
	requests, responses := map[string]int{}, map[string]int{}
	for _, m := range parseLines(t, lp.stdout.String()) {
		kind, _ := m["kind"].(string)
		if kind == "notice" {
			t.Errorf("notice: %v", m)
			continue
		}
		name, _ := m["api_name"].(string)
		k := once{int(m["stream"].(float64)), int(m["correlation_id"].(float64)), kind}
		if seen[k]++; seen[k] > 1 {
			t.Errorf("%s %s stream %d correlation id %d seen twice", name, kind, k.stream, k.corr)
		}
		if w, _ := m["warnings"].([]any); len(w) > 0 {
			t.Errorf("packet %v %s %s: warnings %v", m["frame"], name, kind, w)
		}
		switch kind {
		case "request":
			requests[name]++
		case "response":
			responses[name]++
			if rf, _ := m["request_frame"].(float64); rf <= 0 {
				t.Errorf("packet %v: %s response not paired with its request", m["frame"], name)
			}
		}
	}
	for _, api := range []string{"ApiVersions", "Metadata", "Produce", "FindCoordinator", "JoinGroup",
		"SyncGroup", "OffsetFetch", "Fetch", "OffsetCommit", "Heartbeat"} {
		if requests[api] == 0 || responses[api] == 0 {
			t.Errorf("%s: %d requests, %d responses; want both", api, requests[api], responses[api])
		}
	}
	t.Logf("requests %v", requests)

	// The packets were captured once each: the loopback's sent copies were dropped. A sent
	// copy is the received one byte for byte; segments that only look alike (a window update
	// after an ACK, a retransmission) differ in their window or their TCP timestamps.
	r, err := capture.Open(pcapng)
	if err != nil {
		t.Fatal(err)
	}
	segs := map[string]int{}
	for {
		seg, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		tcp := seg.TCP
		if first, ok := segs[string(seg.Raw)]; ok {
			t.Errorf("packet %d repeats packet %d byte for byte (ports %d -> %d, seq %d, ack %d, %d bytes)",
				seg.Num, first, tcp.SrcPort, tcp.DstPort, tcp.Seq, tcp.Ack, len(tcp.Payload))
		} else {
			segs[string(seg.Raw)] = seg.Num
		}
		if int(tcp.SrcPort) != port && int(tcp.DstPort) != port {
			t.Errorf("packet %d: ports %d -> %d passed the filter", seg.Num, tcp.SrcPort, tcp.DstPort)
		}
	}
	packets := r.Stats().Packets
	r.Close()
	if !strings.Contains(errOut, fmt.Sprintf("wrote %d packets", packets)) {
		t.Errorf("the pcapng holds %d packets; stderr says otherwise", packets)
	}

	// The file dissects to the same messages, in the same packets.
	out, fileErr, code := kdissect(t, "--format", "json", "-p", strconv.Itoa(port), pcapng)
	if code != 0 {
		t.Fatalf("dissecting %s: exit %d: %s", pcapng, code, fileErr)
	}
	file := messagesOf(t, out)
	if len(file) < len(live) {
		t.Fatalf("the file gives %d messages, live gave %d", len(file), len(live))
	}
	for i := range live {
		if live[i] != file[i] {
			t.Fatalf("message %d: live %+v, file %+v", i, live[i], file[i])
		}
	}

	// tshark reads the file back and finds Kafka in it.
	if _, err := exec.LookPath("tshark"); err == nil {
		out, err := exec.Command("tshark", "-r", pcapng, "-n", "-d", fmt.Sprintf("tcp.port==%d,kafka", port),
			"-T", "fields", "-e", "frame.number", "-e", "kafka.correlation_id").Output()
		if err != nil {
			t.Fatalf("tshark -r %s: %v", pcapng, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		withKafka := 0
		for _, l := range lines {
			if f := strings.Split(l, "\t"); len(f) == 2 && f[1] != "" {
				withKafka++
			}
		}
		if len(lines) != packets || withKafka == 0 {
			t.Errorf("tshark reads %d packets (%d with Kafka) from the pcapng; kdissect wrote %d", len(lines), withKafka, packets)
		}
	}
}

// TestLiveSignalAndDuration: SIGINT stops a capture with exit status 0 and the packet counts;
// so does --duration.
func TestLiveSignalAndDuration(t *testing.T) {
	testutil.NeedRoot(t)
	lo := loopback(t)
	bin := kdissectBinary(t)
	_, addr, port := newKfake(t, "kdissect-signal")
	ping := func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("SIGINT", func(t *testing.T) {
		lp := startLive(t, bin, lo, "-p", strconv.Itoa(port), "--format", "summary")
		ping()
		// The summary line of the response shows before the capture ends: output is flushed
		// after each message.
		deadline := time.Now().Add(time.Minute) // a guard against a hang, not a bound
		for !strings.Contains(lp.stdout.String(), "Response") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !strings.Contains(lp.stdout.String(), "Response") {
			t.Errorf("no response shown while capturing; stdout:\n%s", lp.stdout)
		}
		if err := lp.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code := lp.wait(t, 10*time.Second); code != 0 {
			t.Fatalf("exit %d after SIGINT:\n%s", code, lp.stderr)
		}
		if !strings.Contains(lp.stderr.String(), "dropped by kernel") {
			t.Errorf("no counts on stderr:\n%s", lp.stderr)
		}
	})

	t.Run("SIGTERM", func(t *testing.T) {
		lp := startLive(t, bin, lo, "-p", strconv.Itoa(port))
		if err := lp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := lp.wait(t, 10*time.Second); code != 0 {
			t.Fatalf("exit %d after SIGTERM:\n%s", code, lp.stderr)
		}
	})

	t.Run("duration", func(t *testing.T) {
		start := time.Now()
		lp := startLive(t, bin, lo, "-p", strconv.Itoa(port), "--duration", "1s", "--format", "json")
		ping()
		if code := lp.wait(t, 15*time.Second); code != 0 {
			t.Fatalf("exit %d:\n%s", code, lp.stderr)
		}
		if d := time.Since(start); d < time.Second {
			t.Errorf("stopped after %v, before --duration", d)
		}
		if len(messagesOf(t, lp.stdout.String())) == 0 {
			t.Errorf("no messages:\n%s", lp.stderr)
		}
	})
}

// TestLivePermission: without CAP_NET_RAW, kdissect live and serve --live say how to grant it
// to the binary (setcap), or to run it as root by its full path, not a bare sudo (whose PATH
// may not find kdissect); exit 1, since the command line is right. Run as root, the test drops
// to nobody for the subprocess.
func TestLivePermission(t *testing.T) {
	testutil.NeedRoot(t)
	bin := kdissectBinary(t)
	for _, args := range [][]string{{"live", "-i", loopback(t)}, {"serve", "--live", "-i", loopback(t), "--listen", "127.0.0.1:0"}} {
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitFailure {
			t.Errorf("%q as nobody: %v, want exit status 1; stderr:\n%s", args, err, stderr.String())
		}
		for _, want := range []string{"no permission to capture", cli.SetcapCommand("kdissect"), "sudo $(command -v kdissect) " + args[0] + " ..."} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("%q: stderr lacks %q:\n%s", args, want, stderr.String())
			}
		}
	}
}

// TestLiveUnknownInterface: a wrong interface name lists the real ones, sorted, as the message
// for a missing -i lists them, and points to --help as every usage error does; no root needed.
func TestLiveUnknownInterface(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("live capture needs Linux")
	}
	_, errOut, code := kdissect(t, "live", "-i", "kdissect-nosuch0")
	if code != 2 || !strings.Contains(errOut, "Run 'kdissect live --help' for usage.") {
		t.Errorf("exit %d, stderr %q: want 2 and the pointer to --help", code, errOut)
	}
	_, noIface, _ := kdissect(t, "live", "-p", "9092")
	list := func(s string) string { // the names listed, after the last colon of the first line
		first, _, _ := strings.Cut(s, "\n")
		_, names, _ := strings.Cut(first[strings.LastIndex(first, ":")-1:], ": ")
		return strings.TrimSuffix(names, ")")
	}
	if a, b := list(errOut), list(noIface); a != b || !strings.HasSuffix(a, ", any") {
		t.Errorf("the two messages list the interfaces differently:\n%q\n%q", a, b)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if !strings.Contains(errOut, i.Name) {
			t.Errorf("the message does not list %s: %s", i.Name, errOut)
		}
	}
	if !strings.Contains(errOut, "lo") {
		t.Errorf("the message does not list lo: %s", errOut)
	}
}
