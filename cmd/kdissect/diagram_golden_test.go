package main

import (
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/pcaps"
)

// titleLine matches a diagram's title line: "Produce Request v13  correlation_id 1 ...".
var titleLine = regexp.MustCompile(`^(\S+) (Request|Response) v\d+ `)

// TestGoldenDiagramPerAPI pins the diagram of the first message of every API and direction
// present in the captures of pcaps/, gathered in one file.
func TestGoldenDiagramPerAPI(t *testing.T) {
	seen := map[string]string{}
	for _, file := range kafkaCaptures(t) {
		out, errOut, code := kdissect(t, "-p", pcaps.Ports, file)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", file, code, errOut)
		}
		for _, block := range strings.Split(out, "\n\n") {
			lines := strings.SplitN(block, "\n", 3)
			if len(lines) < 3 {
				continue
			}
			m := titleLine.FindStringSubmatch(lines[1])
			if m == nil {
				continue
			}
			key := m[1] + " " + m[2]
			if _, ok := seen[key]; !ok {
				seen[key] = "# " + filepath.Base(file) + "\n" + block + "\n"
			}
		}
	}
	if len(seen) < 40 {
		t.Fatalf("only %d API directions found in pcaps/", len(seen))
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(seen[k])
		b.WriteString("\n")
	}
	golden(t, "diagram-per-api.txt", []byte(b.String()))
}

// TestGoldenDiagramRecords pins the whole diagrams of the captures that exercise records: every
// codec from two client libraries, and transactions with control batches.
func TestGoldenDiagramRecords(t *testing.T) {
	for _, name := range []string{"kgo-codecs.pcap", "sarama-codecs.pcap", "kgo-transactions.pcap"} {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := kdissect(t, "-p", pcaps.Ports, filepath.Join("..", "..", "pcaps", name))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, name+".diagram", []byte(out))
		})
	}
}
