package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dissectWorkers runs the capture command with its flags and a given number of workers and
// segments per round (0: the default).
func dissectWorkers(t *testing.T, workers, perRound int, args ...string) (string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	fs, o := captureFlags(&errOut)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o.workers, o.roundPackets = workers, perRound
	if code := o.dissect(fs.Args(), &out, &errOut); code != 0 {
		t.Fatalf("%v with %d workers: exit %d: %s", args, workers, code, errOut.String())
	}
	return out.String(), errOut.String()
}

// TestWorkersSameOutput: spreading a capture over several assemblers must not change a byte of
// the output, whatever the number of workers and however the capture is cut into rounds: the
// merge restores capture order, connections keep their numbers, topic names learned on one
// connection still name topic ids on another, and the clock flushes where one assembler would.
func TestWorkersSameOutput(t *testing.T) {
	type input struct {
		name string
		args []string
	}
	var inputs []input
	for _, f := range captures(t) {
		if strings.HasPrefix(filepath.Base(f), "other-") {
			continue // no Kafka: nothing to compare
		}
		args := []string{"-p", capturePorts, f}
		if kl := strings.TrimSuffix(strings.TrimSuffix(f, ".gz"), filepath.Ext(strings.TrimSuffix(f, ".gz"))) + ".keylog"; fileExists(kl) {
			args = append([]string{"--tls-keylog", kl}, args...)
		}
		inputs = append(inputs, input{filepath.Base(f), args})
	}
	// Detection on any port, and a capture that lost segments (gaps, resync, flushes).
	inputs = append(inputs, input{"detect", []string{pcapPath("kgo-odd-ports.pcap")}})
	pkts := loadPackets(t, pcapPath("kgo-group-3brokers.pcap"))
	rng := rand.New(rand.NewPCG(1, 2))
	var lossy []rpkt
	for _, p := range pkts {
		if len(p.tcp.Payload) > 0 && rng.IntN(12) == 0 {
			continue
		}
		lossy = append(lossy, p)
	}
	inputs = append(inputs, input{"lossy", []string{"-p", capturePorts, writePcap(t, lossy, linkEthernet, false)}})

	formats := [][]string{{"--format", "summary"}, {"--format", "json"}, {"--format", "diagram", "-x"}, {"--stats", "--format", "none"}}
	for _, in := range inputs {
		for _, format := range formats {
			args := slices.Concat(format, in.args)
			t.Run(in.name+" "+strings.Join(format, " "), func(t *testing.T) {
				t.Parallel()
				wantOut, wantErr := dissectWorkers(t, 1, 0, args...)
				if !strings.Contains(wantOut, "\n") {
					t.Fatalf("no output to compare: %q", wantOut)
				}
				for _, c := range []struct{ workers, perRound int }{{2, 0}, {3, 1}, {4, 7}, {5, 64}} {
					out, errOut := dissectWorkers(t, c.workers, c.perRound, args...)
					if out != wantOut {
						a, b := clip(out, wantOut)
						t.Errorf("%d workers, %d per round: stdout differs from one worker's:\n got %s\nwant %s", c.workers, c.perRound, a, b)
					}
					if errOut != wantErr {
						t.Errorf("%d workers, %d per round: stderr %q, want %q", c.workers, c.perRound, errOut, wantErr)
					}
				}
			})
		}
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// TestWorkersFlag: fewer than one worker is refused, before any output.
func TestWorkersFlag(t *testing.T) {
	for _, n := range []string{"0", "-3"} {
		out, errOut, code := kdissect(t, "--workers", n, pcapPath("kgo-produce-fetch.pcap"))
		if code != 2 || out != "" || !strings.Contains(errOut, "--workers "+n) {
			t.Errorf("--workers %s: exit %d, stdout %q, stderr %q; want exit 2 and an error", n, code, out, errOut)
		}
	}
}
