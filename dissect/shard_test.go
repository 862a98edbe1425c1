package dissect

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/pcaps"

	"github.com/gopacket/gopacket/layers"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// TestShardOfSymmetric: both directions of a connection go to the same shard, and the
// connections of a capture are spread over the shards.
func TestShardOfSymmetric(t *testing.T) {
	const n = 3
	byConn := map[string]int{}
	used := map[int]bool{}
	eachSegment(t, "kgo-group-3brokers.pcap", func(seg *capture.Segment) {
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
	})
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

// TestWorkersWriteOnEveryCore: with several workers, JSON lines and diagrams are written by
// encoders on the writers' goroutines, every message shown, and the output is the bytes one
// goroutine writes, whatever the times shown, the selection, the limit, frames outside the
// heap or several files; headings that count from the previous message (-t d) are written by
// the renderer alone.
func TestWorkersWriteOnEveryCore(t *testing.T) {
	one := []string{pcapPath("kgo-group-3brokers.pcap")}
	two := []string{pcapPath("kgo-produce-fetch.pcap"), pcapPath("kgo-fetch-session.pcap")}
	cases := []struct {
		name     string
		run      testRun
		files    []string
		parallel bool
	}{
		{"json", testRun{format: "json"}, one, true},
		{"json files", testRun{format: "json"}, two, true},
		{"json errors", testRun{format: "json", sel: func(s *Selection) { s.Errors = true }}, two, true},
		{"json -Y", testRun{format: "json", sel: func(s *Selection) { s.Expr = "resp.ErrorCode != 0" }}, two, true},
		{"json limit", testRun{format: "json", limit: 9}, one, true},
		{"json spilled", testRun{format: "json", spill: 64, noCut: true}, two, true},
		{"json big", testRun{format: "json", noCut: true, big: 200, held: 64 << 10}, two, true},
		{"json big to a file", testRun{format: "json", big: 200}, two, true},
		{"json big spilled", testRun{format: "json", spill: 64, noCut: true, big: 100, held: 1 << 10}, two, true},
		{"diagram", testRun{format: "diagram", hex: true}, one, true},
		{"diagram files", testRun{format: "diagram"}, two, true},
		{"diagram big", testRun{format: "diagram", hex: true, big: 200, held: 64 << 10}, two, true},
		{"diagram big to a file", testRun{format: "diagram", big: 100}, one, true},
		{"diagram -t r", testRun{format: "diagram", time: render.TimeRel}, two, true},
		{"diagram -t e", testRun{format: "diagram", time: render.TimeEpoch}, one, true},
		{"diagram -t a stats", testRun{format: "diagram", time: render.TimeAbs, stats: true}, one, true},
		{"diagram -t d", testRun{format: "diagram", time: render.TimeDelta}, two, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.run
			r.ports = pcaps.Ports
			want, wantErr, _, _ := runFiles(t, r.withWorkers(1, 0), tc.files)
			for _, c := range []struct{ workers, perRound int }{{2, 0}, {3, 7}} {
				got, errOut, shown, encoded := runFiles(t, r.withWorkers(c.workers, c.perRound), tc.files)
				if got != want || errOut != wantErr {
					a, b := clip(got, want)
					t.Errorf("%d workers, %d per round: output differs from one worker's:\n got %s\nwant %s\nstderr %q, want %q", c.workers, c.perRound, a, b, errOut, wantErr)
				}
				if tc.parallel && (shown == 0 || encoded != shown) || !tc.parallel && encoded != 0 {
					t.Errorf("%d workers: %d messages encoded on the writers, %d shown (on the writers: %v)", c.workers, encoded, shown, tc.parallel)
				}
			}
		})
	}
}

// runFiles runs files through the pipeline of r as kdissect does (each file named to the
// renderer when there are several) and returns the output, statistics after the messages,
// the warnings, how many messages were shown and how many of them encoders wrote.
func runFiles(t *testing.T, r testRun, files []string) (stdout, stderr string, shown, encoded int) {
	var n atomic.Int64
	var out render.Renderer
	r.wrap = func(o render.Renderer) render.Renderer {
		out = &countedParallel{o.(render.Parallel), &n}
		return out
	}
	var w, errW bytes.Buffer
	extra := Config{Limit: r.limit}
	var stats analysis.Set
	if r.stats {
		stats = analysis.Registered()
		extra.Stats = stats
	}
	p, f := r.pipeline(t, &w, &errW, extra)
	for _, f := range files {
		if p.Stopped() {
			break
		}
		if len(files) > 1 {
			if err := out.(render.FileStarter).File(filepath.Base(f)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := p.File(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if stats != nil {
		if f.Stats == nil && !f.Silent {
			w.WriteString("\n")
		}
		if err := f.WriteStats(&w, stats.Tables(), 0); err != nil {
			t.Fatal(err)
		}
	}
	shown, _ = p.Shown()
	return w.String(), errW.String(), shown, int(n.Load())
}

// countedParallel is a renderer that writes on several goroutines and counts the messages its
// encoders write.
type countedParallel struct {
	render.Parallel
	encoded *atomic.Int64
}

func (c *countedParallel) Encoder() render.Encoder {
	e := c.Parallel.Encoder()
	if e == nil {
		return nil
	}
	return countedEncoder{e, c.encoded}
}

func (c *countedParallel) SetStart(t time.Time) {
	if s, ok := c.Parallel.(render.StartSetter); ok {
		s.SetStart(t)
	}
}

func (c *countedParallel) File(name string) error {
	return c.Parallel.(render.FileStarter).File(name)
}

type countedEncoder struct {
	render.Encoder
	n *atomic.Int64
}

func (c countedEncoder) WriteMessage(w io.Writer, e *model.Entry) error {
	c.n.Add(1)
	return c.Encoder.WriteMessage(w, e)
}

// TestWritersFull: batches handed over wait for the writers up to batchesPerWriter each, twice
// as many while the next to be written out is a big message, and none once the pieces made
// ahead hold more than the bound.
func TestWritersFull(t *testing.T) {
	small, big := &writeJob{}, &writeJob{big: &bigOut{}}
	for _, c := range []struct {
		name   string
		head   *writeJob
		queued int
		ahead  int64
		want   bool
	}{
		{"few small", small, batchesPerWriter*2 - 1, 0, false},
		{"enough small", small, batchesPerWriter * 2, 0, true},
		{"as many behind a big one", big, batchesPerWriter * 2, 0, false},
		{"twice as many behind a big one", big, batchesPerWriter * 4, 0, true},
		{"pieces ahead over the bound", big, 1, 1 << 20, true},
	} {
		w := &writers{n: 2, held: 1 << 10}
		w.queue = append(w.queue, c.head)
		for range c.queued - 1 {
			w.queue = append(w.queue, small)
		}
		w.ahead.Store(c.ahead)
		if got := w.full(); got != c.want {
			t.Errorf("%s: full() = %v; want %v", c.name, got, c.want)
		}
	}
}

// TestRoundSegment: a segment copied into a round and made again from the copy has the
// reader's packet number, time, addresses, ports, sequence numbers, flags and payload; its TCP
// options are dropped (nothing after the reader reads them).
func TestRoundSegment(t *testing.T) {
	var rd round
	var want []capture.Segment
	var payloads [][]byte
	type tcpHead struct {
		src, dst                layers.TCPPort
		seq, ack                uint32
		syn, ackf, fin, rst, ps bool
		window                  uint16
	}
	var heads []tcpHead
	withOptions := 0
	eachSegment(t, "kgo-produce-fetch.pcap", func(seg *capture.Segment) {
		if len(seg.TCP.Options) > 0 {
			withOptions++
		}
		rd.add(seg)
		want = append(want, *seg)
		heads = append(heads, tcpHead{seg.TCP.SrcPort, seg.TCP.DstPort, seg.TCP.Seq, seg.TCP.Ack, seg.TCP.SYN, seg.TCP.ACK, seg.TCP.FIN, seg.TCP.RST, seg.TCP.PSH, seg.TCP.Window})
		payloads = append(payloads, bytes.Clone(seg.TCP.Payload))
	})
	if withOptions == 0 {
		t.Fatal("no segment with TCP options: the capture does not test dropping them")
	}
	for i := range want {
		var seg capture.Segment
		var tcp layers.TCP
		if !rd.segment(i, &seg, &tcp) {
			t.Fatalf("segment %d: its copy does not decode", i)
		}
		w := want[i]
		if seg.Num != w.Num || !seg.Info.Timestamp.Equal(w.Info.Timestamp) || seg.Info.CaptureLength != w.Info.CaptureLength ||
			seg.Info.Length != w.Info.Length || seg.Net != w.Net || seg.Missing != w.Missing || seg.Truncated != w.Truncated {
			t.Errorf("segment %d: made again as %+v, want %+v", i, seg, w)
		}
		if got := (tcpHead{tcp.SrcPort, tcp.DstPort, tcp.Seq, tcp.Ack, tcp.SYN, tcp.ACK, tcp.FIN, tcp.RST, tcp.PSH, tcp.Window}); got != heads[i] {
			t.Errorf("segment %d: TCP header made again as %+v, want %+v", i, got, heads[i])
		}
		if !bytes.Equal(tcp.Payload, payloads[i]) || len(tcp.Options) != 0 || len(tcp.Contents) != 20 {
			t.Errorf("segment %d: payload %d bytes (want %d), %d options, header %d bytes", i, len(tcp.Payload), len(payloads[i]), len(tcp.Options), len(tcp.Contents))
		}
	}
}

// eachSegment gives f each TCP segment of a capture in pcaps/, in order; a segment is valid
// until f returns.
func eachSegment(t *testing.T, name string, f func(*capture.Segment)) {
	t.Helper()
	eachSegmentIn(t, pcapPath(name), f)
}

// eachSegmentIn is eachSegment for the capture file at path.
func eachSegmentIn(t *testing.T, path string, f func(*capture.Segment)) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		seg, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		f(seg)
	}
}
