package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The capture command on a pipe. dissect's TestFollowPipe shows that each message is shown as
// its packet arrives; these tests show the command around it: how a run on a pipe stops, and
// what it says.

// pipeRun runs kdissect with args, stdin an os.Pipe that gets data and stays open unless
// closeIt; it fails the test if the run does not end within 10 s.
func pipeRun(t *testing.T, data []byte, closeIt bool, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	go func() {
		pw.Write(data)
		if closeIt {
			pw.Close()
		}
	}()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(args, pr, &out, &errOut) }()
	select {
	case code = <-done:
	case <-time.After(time.Minute): // a guard against a hang, not a bound
		t.Fatalf("kdissect %s on a pipe: still running after a minute", strings.Join(args, " "))
	}
	return out.String(), errOut.String(), code
}

func readCapture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "pcaps", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPipeCount: -c 3 on a pipe that never ends stops after three messages, with the counts
// live ends with; -c serves files too.
func TestPipeCount(t *testing.T) {
	data := readCapture(t, "kgo-produce-fetch.pcap")
	out, errOut, code := pipeRun(t, data, false, "-c", "3", "--format", "summary", "-p", "9092", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	fileOut, fileErr, fileCode := kdissectStdin(t, nil, "-c", "3", "--format", "summary", "-p", "9092", filepath.Join("..", "..", "pcaps", "kgo-produce-fetch.pcap"))
	if fileCode != 0 || fileErr != "" {
		t.Fatalf("the file with -c 3: exit %d: %s", fileCode, fileErr)
	}
	if lines := strings.Count(out, "\n"); lines != 3 || out != fileOut {
		t.Errorf("from the pipe (%d lines):\n%s\nfrom the file:\n%s", lines, out, fileOut)
	}
	for _, want := range []string{"reading a capture from a pipe as it arrives; stops after 3 messages or its end or Ctrl-C", "TCP), 3 Kafka messages shown"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestPipeDuration: --duration stops a pipe that stays open.
func TestPipeDuration(t *testing.T) {
	data := readCapture(t, "kgo-produce-fetch.pcap")
	start := time.Now()
	out, errOut, code := pipeRun(t, data, false, "--duration", "500ms", "--format", "json", "-p", "9092", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("stopped after %v, before --duration", d)
	}
	if n := strings.Count(out, "\n"); n != 42 || !strings.Contains(errOut, "99 packets read (99 TCP), 42 Kafka messages shown") {
		t.Errorf("%d lines; stderr:\n%s", n, errOut)
	}
}

// TestPipeStats: --stats on a pipe prints the tables once the writer closes it, as for the
// file.
func TestPipeStats(t *testing.T) {
	name := "kgo-admin.pcapng"
	out, errOut, code := pipeRun(t, readCapture(t, name), true, "--stats", "--format", "none", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want, _, _ := kdissectStdin(t, nil, "--stats", "--format", "none", filepath.Join("..", "..", "pcaps", name))
	if out != want || !strings.Contains(out, "Messages per API and version") {
		t.Errorf("from the pipe:\n%s\nfrom the file:\n%s", out, want)
	}
}

// TestPipeCut: a pipe that closes inside a packet ends as a file cut there does: what came
// before is shown, the message names the last packet, and the exit status is 1.
func TestPipeCut(t *testing.T) {
	data := readCapture(t, "kgo-produce-fetch.pcap")
	cut := data[:len(data)-10]
	path := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(path, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := pipeRun(t, cut, true, "--format", "summary", "-p", "9092", "-")
	fileOut, fileErr, fileCode := kdissectStdin(t, nil, "--format", "summary", "-p", "9092", path)
	if code != 1 || fileCode != 1 {
		t.Errorf("exit %d from the pipe, %d from the file, want 1", code, fileCode)
	}
	if !strings.Contains(errOut, "kdissect: stdin: truncated after packet 98: unexpected EOF") ||
		!strings.Contains(fileErr, "truncated after packet 98") {
		t.Errorf("stderr from the pipe:\n%s\nfrom the file:\n%s", errOut, fileErr)
	}
	if out != fileOut {
		t.Errorf("from the pipe:\n%s\nfrom the file:\n%s", out, fileOut)
	}
}

// TestPipeSignal: Ctrl-C (SIGINT) ends a run on a pipe whose writer is quiet, with exit status
// 0 and live's counts, as it ends a live capture; the messages that came are shown before.
func TestPipeSignal(t *testing.T) {
	bin := kdissectBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "--format", "summary", "-p", "9092", "-")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			stdout, stderr := newWatchedBuffer("\x00"), newWatchedBuffer("\x00")
			cmd.Stdout, cmd.Stderr = stdout, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					<-exited
				}
			}()
			if _, err := stdin.Write(readCapture(t, "kgo-produce-fetch.pcap")); err != nil {
				t.Fatal(err)
			}
			// Every message of the capture is shown while the pipe is open.
			deadline := time.Now().Add(time.Minute) // a guard against a hang, not a bound
			for strings.Count(stdout.String(), "\n") < 42 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := strings.Count(stdout.String(), "\n"); n != 42 {
				t.Fatalf("%d of 42 messages shown while the pipe is open:\n%s\n%s", n, stdout, stderr)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("after %v: %v\n%s", sig, err, stderr)
				}
			case <-time.After(time.Minute):
				t.Fatalf("still running a minute after %v:\n%s", sig, stderr)
			}
			// The packets after the last message (ACKs, FINs) may come after the signal.
			if !regexp.MustCompile(`kdissect: ([0-9]+) packets read \(([0-9]+) TCP\), 42 Kafka messages shown\n$`).MatchString(stderr.String()) {
				t.Errorf("no counts on stderr:\n%s", stderr)
			}
			if n := strings.Count(stdout.String(), "\n"); n != 42 {
				t.Errorf("%d lines shown, want 42:\n%s", n, stdout)
			}
		})
	}
}

// TestPipeFindings: --findings on a pipe prints the findings when the run ends (the writer
// closes the pipe, -c), after the messages, as for the file; so does the doctor command.
func TestPipeFindings(t *testing.T) {
	name := "kgo-produce-retry.pcap"
	file := filepath.Join("..", "..", "pcaps", name)
	for _, tc := range []struct {
		desc   string
		closed bool
		args   []string
		want   string // in the output
	}{
		{"closed", true, []string{"--format", "summary", "--findings"}, "producer-retries"},
		{"count", false, []string{"-c", "15", "--format", "summary", "--findings"}, "REQUEST_TIMED_OUT"},
		{"json", true, []string{"--format", "json", "--findings"}, `"kind":"finding"`},
		{"doctor", true, []string{"doctor"}, "producer-retries"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			out, errOut, code := pipeRun(t, readCapture(t, name), tc.closed, append(tc.args, "-")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			want, fileErr, fileCode := kdissectStdin(t, nil, append(tc.args, file)...)
			if fileCode != 0 {
				t.Fatalf("the file: exit %d: %s", fileCode, fileErr)
			}
			if out != want || !strings.Contains(out, tc.want) {
				t.Errorf("from the pipe:\n%s\nfrom the file:\n%s", out, want)
			}
		})
	}
}
