package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testutil"
)

// TestLiveFindings: --findings on kdissect live prints the findings after the messages when
// the capture stops (Ctrl-C), the same as kdissect doctor finds in the packets it wrote (-w).
// A Metadata request for a topic the broker does not have gets an error, which is a finding.
func TestLiveFindings(t *testing.T) {
	testutil.NeedRoot(t)
	lo := loopback(t)
	bin := kdissectBinary(t)
	_, addr, port := newKfake(t, "kdissect-findings")
	pcapng := filepath.Join(t.TempDir(), "out.pcapng")
	lp := startLive(t, bin, lo, "-p", strconv.Itoa(port), "--format", "json", "--findings", "-w", pcapng)

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	topic := kmsg.NewMetadataRequestTopic()
	topic.Topic = kmsg.StringPtr("no-such-topic")
	req.Topics = append(req.Topics, topic)
	if _, err := req.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(lp.stdout.String(), "UNKNOWN_TOPIC_OR_PARTITION") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := lp.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := lp.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGINT:\n%s", code, lp.stderr)
	}

	var live []string
	for _, l := range lines(lp.stdout.String()) {
		switch {
		case strings.HasPrefix(l, `{"kind":"finding"`):
			live = append(live, l)
		case len(live) > 0:
			t.Errorf("a line after the findings: %s", l)
		}
	}
	out, errOut, code := kdissect(t, "doctor", "--format", "json", "-p", strconv.Itoa(port), pcapng)
	if code != 0 {
		t.Fatalf("doctor %s: exit %d: %s", pcapng, code, errOut)
	}
	if got, want := strings.Join(live, "\n"), strings.TrimSuffix(out, "\n"); got != want || !strings.Contains(got, "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("live --findings:\n%s\ndoctor on the packets written:\n%s", got, want)
	}
}
