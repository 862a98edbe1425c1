// Command gen regenerates the captures in kdissect's pcaps/ folder.
//
// For each scenario it starts an in-process kfake cluster on fixed loopback
// ports, captures those ports with tcpdump (converting to pcapng with
// editcap for .pcapng files), drives real Kafka clients against the
// cluster, and stops everything. It must run as root, from the repository
// root:
//
//	sudo go run ./pcaps/gen -out pcaps
//
// Scenarios run one after another, so several of them can use port 9092.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// scenario makes one capture file.
type scenario struct {
	file string
	run  func(ctx context.Context, file string) error
}

var scenarios = []scenario{
	{"kgo-produce-fetch.pcap", kgoProduceFetch},
	{"kgo-group-3brokers.pcap", kgoGroup3Brokers},
	{"sarama-produce-consume.pcap", saramaProduceConsume},
	{"kgo-midstream.pcap", kgoMidstream},
	{"kgo-admin.pcapng", kgoAdmin},
	{"kafkago-produce-consume.pcap", kafkagoProduceConsume},
}

// scenarioTimeout bounds one scenario, clients and capture included.
const scenarioTimeout = 60 * time.Second

func main() {
	out := flag.String("out", "pcaps", "folder to write the captures to")
	only := flag.String("only", "", "comma-separated file names to regenerate (default: all)")
	flag.Parse()

	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "gen: capturing on the loopback interface needs root: sudo go run ./pcaps/gen -out pcaps")
		os.Exit(1)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	want := map[string]bool{}
	for _, f := range strings.Split(*only, ",") {
		if f != "" {
			want[f] = true
		}
	}

	failed := 0
	for _, s := range scenarios {
		if len(want) > 0 && !want[s.file] {
			continue
		}
		file := filepath.Join(*out, s.file)
		start := time.Now()
		if err := runScenario(s, file); err != nil {
			fmt.Fprintf(os.Stderr, "gen: %s: %v\n", s.file, err)
			failed++
			continue
		}
		st, err := os.Stat(file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gen: %s: %v\n", s.file, err)
			failed++
			continue
		}
		fmt.Printf("%-30s %7d bytes  %v\n", s.file, st.Size(), time.Since(start).Round(time.Millisecond))
	}
	if failed > 0 {
		os.Exit(1)
	}
}

func runScenario(s scenario, file string) error {
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.run(ctx, file) }()
	select {
	case err := <-done:
		return err
	case <-time.After(scenarioTimeout + 15*time.Second):
		// A client that ignores its context would hang us; give up.
		return fmt.Errorf("did not finish within %v", scenarioTimeout)
	}
}

// newCluster starts a kfake cluster with one broker per port on 127.0.0.1
// and returns it with its seed addresses.
func newCluster(ports []int, opts ...kfake.Opt) (*kfake.Cluster, []string, error) {
	opts = append([]kfake.Opt{
		kfake.Ports(ports...),
		kfake.ClusterID("kdissect-test-cluster"),
	}, opts...)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("kfake on ports %v: %w", ports, err)
	}
	return c, c.ListenAddrs(), nil
}

// fixedTime is the timestamp given to every produced record, so that the
// record bytes do not change from one run to the next.
var fixedTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// groupSessionTimeout is the session timeout group members ask for; the
// clusters allow it with kfakeShortSessions.
const groupSessionTimeout = 3 * time.Second

// kfakeShortSessions lets group members use groupSessionTimeout, shorter
// than kfake's default minimum of 6s.
func kfakeShortSessions() kfake.Opt { return kfake.GroupMinSessionTimeout(time.Second) }
