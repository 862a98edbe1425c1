package dissect

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/pcaps"

	"github.com/kdissect/kdissect/capture"
)

// TestShardOfSymmetric: both directions of a connection go to the same shard, and the
// connections of a capture are spread over the shards.
func TestShardOfSymmetric(t *testing.T) {
	r, err := capture.Open("../pcaps/kgo-group-3brokers.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const n = 3
	byConn := map[string]int{}
	used := map[int]bool{}
	for {
		seg, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		w := shardOf(seg, n)
		if w < 0 || w >= n {
			t.Fatalf("shard %d of %d", w, n)
		}
		// The connection, the same whichever way the segment goes.
		a := fmt.Sprintf("%v:%d", seg.Net.Src(), seg.TCP.SrcPort)
		b := fmt.Sprintf("%v:%d", seg.Net.Dst(), seg.TCP.DstPort)
		k := min(a, b) + " " + max(a, b)
		if prev, ok := byConn[k]; ok && prev != w {
			t.Fatalf("packet %d of connection %s: shard %d, earlier packets went to %d", seg.Num, k, w, prev)
		}
		byConn[k] = w
		used[w] = true
	}
	if len(byConn) < 4 || len(used) < 2 {
		t.Errorf("%d connections over %d shards: want them spread", len(byConn), len(used))
	}
}

// TestWorkersSameOutput: spreading a capture over several assemblers must not change a byte of
// the output, whatever the number of workers and however the capture is cut into rounds: the
// merge restores capture order, connections keep their numbers, topic names learned on one
// connection still name topic ids on another, and the clock flushes where one assembler would.
func TestWorkersSameOutput(t *testing.T) {
	type input struct {
		name string
		run  testRun
		file string
	}
	var inputs []input
	for _, f := range captures(t) {
		if strings.HasPrefix(filepath.Base(f), "other-") {
			continue // no Kafka: nothing to compare
		}
		r := testRun{ports: pcaps.Ports}
		r.keylog = keylogOf(f)
		inputs = append(inputs, input{filepath.Base(f), r, f})
	}
	// Detection on any port, and a capture that lost segments (gaps, resync, flushes).
	inputs = append(inputs, input{"detect", testRun{}, pcapPath("kgo-odd-ports.pcap")})
	pkts := loadPackets(t, pcapPath("kgo-group-3brokers.pcap"))
	rng := rand.New(rand.NewPCG(1, 2))
	var lossy []rpkt
	for _, p := range pkts {
		if len(p.tcp.Payload) > 0 && rng.IntN(12) == 0 {
			continue
		}
		lossy = append(lossy, p)
	}
	inputs = append(inputs, input{"lossy", testRun{ports: pcaps.Ports}, writePcap(t, lossy, linkEthernet, false)})

	formats := []testRun{{format: "summary"}, {format: "json"}, {format: "diagram", hex: true}, {format: "none", stats: true}}
	for _, in := range inputs {
		for _, format := range formats {
			r := in.run
			r.format, r.hex, r.stats = format.format, format.hex, format.stats
			t.Run(fmt.Sprintf("%s %s hex=%v stats=%v", in.name, r.format, r.hex, r.stats), func(t *testing.T) {
				t.Parallel()
				wantOut, wantErr := r.withWorkers(1, 0).mustDissect(t, in.file)
				if !strings.Contains(wantOut, "\n") {
					t.Fatalf("no output to compare: %q", wantOut)
				}
				for _, c := range []struct{ workers, perRound int }{{2, 0}, {3, 1}, {4, 7}, {5, 64}} {
					out, errOut := r.withWorkers(c.workers, c.perRound).mustDissect(t, in.file)
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
