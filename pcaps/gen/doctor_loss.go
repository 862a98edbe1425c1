package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoCaptureLoss: one broker on 19404. A franz-go idempotent producer writes 3 batches of 2
// records to one partition, one after another, each answered. The capture is then cut as a
// capture that missed a packet would be: cutProduce removes the segment that carried the
// second Produce request, so that the third batch's sequence numbers follow a batch the
// capture does not hold.
func kgoCaptureLoss(ctx context.Context, file string) error {
	const topic = "kdissect-doctor-loss"
	ports := []int{19404}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic))
	if err != nil {
		return err
	}
	defer c.Close()
	whole := strings.TrimSuffix(file, ".pcap") + ".whole.pcap"
	defer os.Remove(whole)
	err = withCapture(ctx, whole, ports, func(ctx context.Context) error {
		cl, err := kgo.NewClient(kgoOpts(seeds, "kdissect-doctor-loss-producer", kgo.DefaultProduceTopic(topic))...)
		if err != nil {
			return err
		}
		defer cl.Close()
		recs := smallRecords("loss", 6)
		for i := 0; i < len(recs); i += 2 {
			if err := cl.ProduceSync(ctx, recs[i:i+2]...).FirstErr(); err != nil {
				return fmt.Errorf("produce batch %d: %w", i/2+1, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return cutProduce(ctx, whole, file, ports[0], 2)
}

// cutProduce writes to out the capture in, without the packet of the nth Produce request sent
// to port: tshark finds its frame number, editcap leaves it out. The request must fit in one
// packet, as a small one does on loopback.
func cutProduce(ctx context.Context, in, out string, port, nth int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tcp := fmt.Sprintf("tcp.port==%d,kafka", port)
	filter := fmt.Sprintf("tcp.dstport == %d && kafka.api_key == 0", port)
	list, err := exec.CommandContext(ctx, "tshark", "-r", in, "-d", tcp, "-Y", filter,
		"-T", "fields", "-e", "frame.number", "-e", "tcp.len", "-e", "kafka.len").Output()
	if err != nil {
		return fmt.Errorf("tshark on %s: %w", in, err)
	}
	rows := strings.Split(strings.TrimSpace(string(list)), "\n")
	if len(rows) < nth {
		return fmt.Errorf("%s: %d Produce requests, want %d or more", in, len(rows), nth)
	}
	f := strings.Split(rows[nth-1], "\t")
	if len(f) != 3 || f[1] != strconv.Itoa(atoi(f[2])+4) {
		return fmt.Errorf("%s: Produce request %d is not one whole packet (frame, segment and Kafka lengths: %q)", in, nth, rows[nth-1])
	}
	frame := f[0]
	msg, err := exec.CommandContext(ctx, "editcap", in, out, frame).CombinedOutput()
	if err != nil {
		return fmt.Errorf("editcap: %w: %s", err, bytes.TrimSpace(msg))
	}
	return nil
}

// atoi is strconv.Atoi's number, -1 for what is not one.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
