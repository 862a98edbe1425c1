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
// Every broker port a scenario listens on must be in pcaps.Ports
// (pcaps/ports.go), the ports the tests take as Kafka.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// scenario makes one capture file.
type scenario struct {
	file string
	run  func(ctx context.Context, file string) error
	// godebug, if set, is the GODEBUG setting the scenario needs from
	// the start of the process (a cpu.* one, read only at start-up): gen
	// runs the scenario in a child process of its own with it.
	godebug string
	// dir, if set, is the folder (from the repository root) the capture is written to instead
	// of -out: a capture for one package's tests rather than one of pcaps/.
	dir string
}

var scenarios = []scenario{
	{file: "kgo-produce-fetch.pcap", run: kgoProduceFetch},
	{file: "kgo-group-3brokers.pcap", run: kgoGroup3Brokers},
	{file: "sarama-produce-consume.pcap", run: saramaProduceConsume},
	{file: "kgo-midstream.pcap", run: kgoMidstream},
	{file: "kgo-admin.pcapng", run: kgoAdmin},
	{file: "kafkago-produce-consume.pcap", run: kafkagoProduceConsume},

	// Records and compression.
	{file: "kgo-codecs.pcap", run: kgoCodecs},
	{file: "sarama-codecs.pcap", run: saramaCodecs},
	{file: "kgo-transactions.pcap", run: kgoTransactions},
	// Display filters and export: acks=0, large frames, session timeouts.
	{file: "kgo-filters.pcap", run: kgoFilters},
	// SASL in the clear.
	{file: "kgo-sasl-plain.pcap", run: kgoSASLPlain},
	{file: "kgo-sasl-scram.pcap", run: kgoSASLScram},
	// Ports other than 9092.
	{file: "kgo-odd-ports.pcap", run: kgoOddPorts},
	// TLS, each with a .keylog file beside it.
	{file: "kgo-tls12.pcap", run: kgoTLS12AES128},
	{file: "kgo-tls12-aes256.pcap", run: kgoTLS12AES256},
	{file: "kgo-tls12-chacha.pcap", run: kgoTLS12ChaCha},
	{file: "kgo-tls13.pcap", run: kgoTLS13},
	// Go picks ChaCha20 in TLS 1.3 only when it believes the CPU has no
	// AES instructions; GODEBUG=cpu.aes=off makes it believe so.
	{file: "kgo-tls13-chacha.pcap", run: kgoTLS13ChaCha, godebug: "cpu.aes=off"},
	{file: "kgo-sasl-ssl-scram.pcap", run: kgoSASLSSLScram},
	{file: "kgo-tls-twin-plain.pcap", run: kgoTLSTwinPlain},
	// Fetch sessions (KIP-227), and topic ids named only later in the capture.
	{file: "kgo-fetch-session.pcap", run: kgoFetchSession},
	{file: "kgo-late-metadata.pcap", run: kgoLateMetadata},
	// A consumer that falls behind: consumer lag and end-to-end latency.
	{file: "kgo-lag.pcap", run: kgoLag},
	// The conversation-level answers: transactions v1 with a group's offsets, a member that
	// joins late (classic and KIP-848), an idempotent producer's retry.
	{file: "kgo-txn-groups.pcap", run: kgoTxnGroups},
	{file: "kgo-group-late-joiner.pcap", run: kgoGroupLateJoiner},
	{file: "kgo-produce-retry.pcap", run: kgoProduceRetry},
	{file: "kgo-group-848.pcap", run: kgoGroupNextGen},
	// The doctor's group and consumer findings, one capture each.
	{file: "kgo-member-removed.pcap", run: kgoMemberRemoved},
	{file: "kgo-rebalance-storm.pcap", run: kgoRebalanceStorm},
	{file: "kgo-rebalance-slow.pcap", run: kgoRebalanceSlow},
	{file: "kgo-partitions-unowned.pcap", run: kgoPartitionsUnowned},
	{file: "kgo-lag-growing.pcap", run: kgoLagGrowing},
	{file: "kgo-consumer-stalled.pcap", run: kgoConsumerStalled},
	// kdissect doctor's findings of brokers and clients (doctor_*.go).
	{file: "kgo-latency-stall.pcap", run: kgoLatencyStall},
	{file: "kgo-broker-outlier.pcap", run: kgoBrokerOutlier},
	{file: "kgo-small-batches.pcap", run: kgoSmallBatches},
	{file: "kgo-throttled.pcap", run: kgoThrottled},
	{file: "kgo-churn.pcap", run: kgoChurn},
	{file: "kgo-metadata-storm.pcap", run: kgoMetadataStorm},
	{file: "kgo-capture-loss.pcap", run: kgoCaptureLoss},
	{file: "kgo-unanswered.pcap", run: kgoUnanswered},

	// TCP keep-alive probes, for dissect's tests (keepalive.go).
	{file: "keepalive.pcap", run: kgoKeepAlive, dir: "dissect/testdata"},
}

// scenarioTimeout bounds one scenario, clients and capture included.
const scenarioTimeout = 60 * time.Second

func main() {
	out := flag.String("out", "pcaps", "folder to write the captures to")
	only := flag.String("only", "", "comma-separated file names to regenerate (default: all)")
	child := flag.Bool("child", false, "internal: run the -only scenario in this process, quietly (see scenario.godebug)")
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
		if s.dir != "" {
			file = filepath.Join(s.dir, s.file)
		}
		start := time.Now()
		run := runScenario
		if s.godebug != "" && !*child {
			run = runChild
		}
		if err := run(s, file); err != nil {
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
		if !*child {
			fmt.Printf("%-30s %7d bytes  %v\n", s.file, st.Size(), time.Since(start).Round(time.Millisecond))
		}
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

// runChild runs s in a new gen process whose environment has
// GODEBUG=s.godebug, and waits for it.
func runChild(s scenario, file string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-child", "-out", filepath.Dir(file), "-only", s.file)
	cmd.Env = append(os.Environ(), "GODEBUG="+s.godebug)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("gen child with GODEBUG=%s: %w", s.godebug, err)
	}
	return nil
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
