package main

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/pcaps"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestGoldenExplain pins --explain: a flexible request built with kmsg (compact strings, a
// tagged field), a classic one built by hand (int16 and int32 prefixes, nulls), and a whole
// capture (records with zigzag varints, batch attribute bits, ApiVersions' header v0). Beside
// the goldens, the parts a teacher points at are asserted by their text.
func TestGoldenExplain(t *testing.T) {
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 12
	fetch.ReplicaID, fetch.MaxWaitMillis, fetch.MinBytes, fetch.MaxBytes = -1, 500, 1, 52428800
	fetch.SessionEpoch = -1
	topic := kmsg.NewFetchRequestTopic()
	topic.Topic = "events"
	part := kmsg.NewFetchRequestTopicPartition()
	part.FetchOffset, part.LogStartOffset, part.PartitionMaxBytes = 42, -1, 1048576
	topic.Partitions = append(topic.Partitions, part)
	fetch.Topics = append(fetch.Topics, topic)
	fetch.Rack = "rack-a"
	cluster := "kdissect-cluster"
	fetch.ClusterID = &cluster
	fetchFrame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("sarama-adm")).AppendRequest(nil, fetch, 3)

	// Metadata v8 (header v1): a null client id, null topics (all of them), three bools.
	metadata, err := hex.DecodeString("00000011" + "0003" + "0008" + "00000005" + "ffff" + "ffffffff" + "01" + "00" + "00")
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		golden string
		args   []string
		input  []byte
		want   []string
	}{
		{"explain-fetch-v12-request.diagram", []string{"decode", "--explain"}, fetchFrame, []string{
			"request header v2: Fetch v12 is flexible (flexible versions 12+), so the header ends in a tagged section",
			"0x000a int16 10 → 10 bytes",
			"0x07 uvarint 7 → length 6",
			"0x01 uvarint 1 → 1 tagged field",
			"0x11 uvarint 17 → length 16",
		}},
		{"explain-metadata-v8-request.diagram", []string{"decode", "--explain"}, metadata, []string{
			"request header v1: Metadata v8 is not flexible (flexible versions 9+)",
			"0xffff int16 -1 → null",
			"0xffffffff int32 -1 → null",
		}},
		{"kgo-produce-fetch.pcap.explain", []string{"--explain", "-p", pcaps.Ports, filepath.Join("..", "..", "pcaps", "kgo-produce-fetch.pcap")}, nil, []string{
			"response header v0: ApiVersions responses always use v0",
			"0x00 uvarint 0 → null",
			"0x4c → zigzag 76 → 38",
			"0x0c varint → zigzag 12 → 6 → 6 bytes",
			"bit 4             isTransactional = 0",
		}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			out, errOut, code := kdissectStdin(t, tt.input, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in:\n%s", w, out)
				}
			}
			golden(t, tt.golden, []byte(out))
		})
	}
}

// TestExplainPage: the --explain excerpts of docs/explain.md are the goldens' rows, so they
// stay what the code writes.
func TestExplainPage(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "explain.md"))
	if err != nil {
		t.Fatal(err)
	}
	section, ok := strings.CutPrefix(string(page), "# How values are encoded (`--explain`)")
	if !ok {
		t.Fatal("docs/explain.md is not the --explain page")
	}
	rows := map[string]bool{}
	for _, name := range []string{"explain-fetch-v12-request.diagram", "kgo-produce-fetch.pcap.explain"} {
		g, err := os.ReadFile(filepath.Join("testdata", "golden", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(g), "\n") {
			rows[l] = true
		}
	}
	blocks := strings.Split(section, "```")
	n := 0
	for i := 1; i < len(blocks); i += 2 { // the insides of the code blocks
		for _, l := range strings.Split(strings.Trim(blocks[i], "\n"), "\n") {
			if l == "…" {
				continue
			}
			n++
			if !rows[l] {
				t.Errorf("docs/explain.md: row not in the goldens: %q", l)
			}
		}
	}
	if n < 40 {
		t.Errorf("only %d rows in the excerpts of docs/explain.md", n)
	}
}
