package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// keepAliveConfig makes the kernel probe a connection after a second without traffic, and
// every second after that: Kafka clients and brokers turn keep-alive on (Go's net package
// after 15 s by default), so a long capture of a quiet connection holds the probes.
var keepAliveConfig = net.KeepAliveConfig{Enable: true, Idle: time.Second, Interval: time.Second, Count: 9}

// keepAliveIdle is how long the client stays quiet between requests: long enough for two
// probes from each end of each connection.
const keepAliveIdle = 2500 * time.Millisecond

// kgoKeepAlive: one broker on 9092 whose accepted connections, and a franz-go client whose
// dialled ones, send TCP keep-alive probes. The client produces, stays idle while both ends
// probe, produces again, and stays idle again. Linux probes carry no data; their sequence
// number is one below the next byte. Beside the capture, file's name with "-idle-start" holds
// its packets from the first probe on: a capture started on quiet connections, which begins
// with a probe. Both are for dissect's TestKeepAlive, not pcaps/.
func kgoKeepAlive(ctx context.Context, file string) error {
	const topic = "kdissect-keepalive"
	ports := []int{9092}
	listen := func(network, addr string) (net.Listener, error) {
		lc := net.ListenConfig{KeepAliveConfig: keepAliveConfig}
		return lc.Listen(context.Background(), network, addr)
	}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic), kfake.ListenFn(listen))
	if err != nil {
		return err
	}
	defer c.Close()

	err = withCapture(ctx, file, ports, func(ctx context.Context) error {
		dialer := &net.Dialer{KeepAliveConfig: keepAliveConfig}
		cl, err := kgo.NewClient(kgoOpts(seeds, "kdissect-keepalive", kgo.DefaultProduceTopic(topic),
			kgo.Dialer(dialer.DialContext), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
		if err != nil {
			return err
		}
		defer cl.Close()
		for i := range 2 {
			r := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "after %d idle periods", i), Timestamp: fixedTime}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				return fmt.Errorf("produce: %w", err)
			}
			select {
			case <-time.After(keepAliveIdle):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return cutAtFirstProbe(ctx, file)
}

// cutAtFirstProbe writes the packets of file from its first keep-alive probe on, as tshark
// finds the probes (tcp.analysis.keep_alive), beside it with "-idle-start" in its name. It
// fails if file has no probe with a request after it.
func cutAtFirstProbe(ctx context.Context, file string) error {
	out, err := exec.CommandContext(ctx, "tshark", "-r", file, "-n", "-d", "tcp.port==9092,kafka",
		"-Y", "tcp.analysis.keep_alive || kafka.request_key", "-T", "fields",
		"-e", "frame.number", "-e", "tcp.analysis.keep_alive").Output()
	if err != nil {
		return fmt.Errorf("tshark -r %s: %w", file, err)
	}
	probe, requestAfter := 0, false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		num, isProbe, _ := strings.Cut(line, "\t")
		switch {
		case isProbe != "" && probe == 0:
			probe, _ = strconv.Atoi(num)
		case isProbe == "" && probe != 0:
			requestAfter = true
		}
	}
	if probe == 0 || !requestAfter {
		return fmt.Errorf("%s: no keep-alive probe with a request after it (tshark: %q)", file, out)
	}
	ext := filepath.Ext(file)
	cut := strings.TrimSuffix(file, ext) + "-idle-start" + ext
	// editcap -r keeps the packets of a range; the end is past any capture gen makes.
	keep := fmt.Sprintf("%d-%d", probe, 1<<30)
	if out, err := exec.CommandContext(ctx, "editcap", "-r", file, cut, keep).CombinedOutput(); err != nil {
		return fmt.Errorf("editcap: %w: %s", err, out)
	}
	return nil
}
