package duckdb_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// live is a kdissect live running in a network namespace.
type live struct {
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	exited         chan error
}

// lockedBuffer is a subprocess's output, read while it is written.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// namespace makes a network namespace with its loopback interface up, removed at the end of
// the test; it skips the test without root, ip or tcpreplay.
func namespace(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live capture in a network namespace needs root; CI runs these tests as root")
	}
	for _, tool := range []string{"ip", "tcpreplay"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found (apt-get install -y iproute2 tcpreplay)", tool)
		}
	}
	name := fmt.Sprintf("kdissect-duckdb-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
	return name
}

// startLive starts kdissect live on the namespace's loopback and waits until it captures.
func startLive(t *testing.T, ns string, args ...string) *live {
	t.Helper()
	l := &live{cmd: exec.Command("ip", append([]string{"netns", "exec", ns, kdissect, "live", "-i", "lo"}, args...)...),
		exited: make(chan error, 1)}
	l.cmd.Stdout, l.cmd.Stderr = &l.stdout, &l.stderr
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { l.exited <- l.cmd.Wait() }()
	t.Cleanup(func() {
		if l.cmd.ProcessState == nil {
			l.cmd.Process.Kill()
			<-l.exited
		}
	})
	l.waitFor(t, func() bool { return strings.Contains(l.stderr.String(), "capturing on lo") }, "to capture")
	return l
}

// waitFor waits until cond holds; it fails after a minute, or when the process exits.
func (l *live) waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		select {
		case err := <-l.exited:
			l.exited <- err
			t.Fatalf("kdissect live exited (%v) while waiting %s:\n%s", err, what, l.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("kdissect live: still waiting %s after a minute:\n%s", what, l.stderr.String())
		}
	}
}

// stop interrupts the process and waits for it to exit with status 0.
func (l *live) stop(t *testing.T) {
	t.Helper()
	if err := l.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-l.exited:
		if err != nil {
			t.Fatalf("kdissect live %s: %v\n%s", strings.Join(l.cmd.Args[5:], " "), err, l.stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("kdissect live still running a minute after SIGINT:\n%s", l.stderr.String())
	}
}

// messages counts the request and response lines of JSON output.
func messages(out string) int {
	n := 0
	for _, line := range strings.Split(out, "\n") {
		var m struct{ Kind string }
		if json.Unmarshal([]byte(line), &m) == nil && (m.Kind == "request" || m.Kind == "response") {
			n++
		}
	}
	return n
}

// fleetQuery is the README's DuckDB query over the files of many hosts, with %s where its
// glob ('/data/kafka/*/kafka-*.parquet') is: the host is in each file's name.
func fleetQuery(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const glob = "'/data/kafka/*/kafka-*.parquet'"
	for _, block := range strings.Split(string(readme), "```sql\n")[1:] {
		q, _, _ := strings.Cut(block, "```")
		if strings.Contains(q, "read_parquet("+glob) {
			return strings.TrimSuffix(strings.TrimSpace(strings.Replace(q, glob, "%s", 1)), ";")
		}
	}
	t.Fatal("README.md has no DuckDB query with read_parquet(" + glob + ")")
	return ""
}

// TestLiveRotation replays a capture 40 times over (new connections each time) in a network
// namespace, for about ten seconds, to three kdissect live at once: Parquet files of 2 s
// periods (and their packets, -w), JSON lines on stdout, and Parquet files of which --keep 2
// keeps two. DuckDB reads the first directory's files as one table all along, and never fails
// on a partial file; at the end, their rows are the messages the JSON run showed, with the
// columns of a capture file's Parquet.
func TestLiveRotation(t *testing.T) {
	ns := namespace(t)
	const capture, loops = "kgo-produce-fetch.pcap", 40
	perLoop := messages(string(run(t, "--format", "json", filepath.Join(root, "pcaps", capture))))
	tmp := t.TempDir()
	parquetDir, pcapDir, keptDir := filepath.Join(tmp, "parquet")+"/", filepath.Join(tmp, "pcapng")+"/", filepath.Join(tmp, "kept")+"/"
	rotating := startLive(t, ns, "--format", "parquet", "--rotate", "2s", "-o", parquetDir, "-w", pcapDir)
	jsonRun := startLive(t, ns, "--format", "json")
	kept := startLive(t, ns, "--format", "parquet", "--rotate", "2s", "--keep", "2", "-o", keptDir)

	glob := quote(filepath.Join(parquetDir, "*.parquet"))
	db := open(t)
	done := make(chan struct{})
	var reads int
	var readErrs []error
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if m, _ := filepath.Glob(filepath.Join(parquetDir, "*.parquet")); len(m) == 0 {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			var n int
			if err := db.QueryRow("SELECT count(*) FROM read_parquet(" + glob + ")").Scan(&n); err != nil {
				readErrs = append(readErrs, err)
			}
			reads++
		}
	}()

	out, err := exec.Command("ip", "netns", "exec", ns, "tcpreplay", "-q", "-i", "lo", "--pps", "400",
		"--loop", fmt.Sprint(loops), "--unique-ip", filepath.Join(root, "pcaps", capture)).CombinedOutput()
	if err != nil {
		t.Fatalf("tcpreplay: %v: %s", err, out)
	}
	want := loops * perLoop
	// The last message of a connection may be shown only at the end (when the capture stops):
	// wait until the JSON run shows nothing more for a second; the other runs read the same
	// packets.
	last, still := -1, 0
	jsonRun.waitFor(t, func() bool {
		n := messages(jsonRun.stdout.String())
		if n == last {
			still++
		} else {
			last, still = n, 0
		}
		return n > 0 && still >= 20
	}, "for the JSON run to show every message")
	for _, l := range []*live{rotating, jsonRun, kept} {
		l.stop(t)
	}
	close(done)
	readers.Wait()
	t.Logf("DuckDB read the files %d times while they were written; stderr:\n%s", reads, rotating.stderr.String())
	if len(readErrs) > 0 || reads == 0 {
		t.Errorf("%d reads of %s while kdissect wrote; %d failed, the first: %v", reads, glob, len(readErrs), readErrs)
	}

	files, _ := filepath.Glob(filepath.Join(parquetDir, "*.parquet"))
	entries, _ := os.ReadDir(parquetDir)
	if len(files) < 4 || len(entries) != len(files) {
		t.Errorf("%d Parquet files, %d entries in %s; want 4 or more, and no temporary file left", len(files), len(entries), parquetDir)
	}
	var rows int
	if err := db.QueryRow("SELECT count(*) FROM read_parquet(" + glob + ") WHERE kind IN ('request', 'response')").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if shown := messages(jsonRun.stdout.String()); rows != shown || rows != want {
		t.Errorf("the Parquet files hold %d messages; the JSON run showed %d; %d were replayed", rows, shown, want)
	}
	// The fleet query of the README, over this one host's files: the responses per host and
	// API, and their 99th percentile latency.
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	var responses int
	for _, r := range query(t, db, fmt.Sprintf(fleetQuery(t), glob)) {
		if r[0] != host || r[2] == nil {
			t.Errorf("fleet query row %v: want host %s and a count", r, host)
			continue
		}
		n, _ := r[2].(json.Number).Int64()
		responses += int(n)
	}
	var want2 int
	if err := db.QueryRow("SELECT count(*) FROM read_parquet(" + glob + ") WHERE kind = 'response'").Scan(&want2); err != nil {
		t.Fatal(err)
	}
	if responses != want2 || responses == 0 {
		t.Errorf("the fleet query counts %d responses; the files hold %d", responses, want2)
	}
	// One file holds the columns of any capture file's Parquet.
	fromFile := filepath.Join(tmp, "file.parquet")
	run(t, "--format", "parquet", "-o", fromFile, filepath.Join(root, "pcaps", capture))
	describe := func(file string) string {
		return fmt.Sprint(query(t, db, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet("+quote(file)+"))"))
	}
	if a, b := describe(files[0]), describe(fromFile); a != b {
		t.Errorf("the columns of %s:\n%s\nof a capture file's:\n%s", files[0], a, b)
	}

	pcaps, _ := filepath.Glob(filepath.Join(pcapDir, "*.pcapng"))
	if len(pcaps) < 4 {
		t.Errorf("%d pcapng files in %s, want 4 or more", len(pcaps), pcapDir)
	}
	for _, p := range pcaps {
		run(t, "--format", "none", "--stats", p)
	}

	// --keep 2 leaves 2 of the files it wrote (as many as the first run, give or take one: the
	// two started apart).
	keptFiles, _ := filepath.Glob(filepath.Join(keptDir, "*.parquet"))
	var written int
	if m := regexp.MustCompile(`wrote (\d+) files to`).FindStringSubmatch(kept.stderr.String()); m != nil {
		written, _ = strconv.Atoi(m[1])
	}
	if len(keptFiles) != 2 || written < 4 {
		t.Errorf("--keep 2 left %d of %d files; stderr:\n%s", len(keptFiles), written, kept.stderr.String())
	}
}
