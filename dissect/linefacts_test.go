package dissect

// Tests of the facts on each summary line (issue 17, part 3) on real captures: every expected
// fact is computed here from the JSON tree of an unfiltered run, by rules written for the test.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/pcaps"
)

// summaryLines runs a capture in the summary format and returns its message lines by packet
// and direction ("4 Request").
func summaryLines(t *testing.T, file string) map[string]string {
	t.Helper()
	return summaryLinesOf(t, file, testRun{})
}

// summaryLinesOf is summaryLines for a run with more settings (a selection).
func summaryLinesOf(t *testing.T, file string, r testRun) map[string]string {
	t.Helper()
	r.format, r.ports = "summary", pcaps.Ports
	out, errOut, code := r.dissect(t, file)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", file, code, errOut)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 6 && (f[6] == "Request" || f[6] == "Response") {
			lines[f[0]+" "+f[6]] = l
		}
	}
	return lines
}

func lineOf(t *testing.T, lines map[string]string, m *jsonMsg) string {
	t.Helper()
	kind := "Request"
	if m.Kind == "response" {
		kind = "Response"
	}
	l, ok := lines[strconv.Itoa(m.Frame)+" "+kind]
	if !ok {
		t.Fatalf("no summary line for %s", m)
	}
	return l
}

// field finds the first node named name, depth first.
func field(fs []*jsonField, name string) *jsonField {
	var found *jsonField
	walkFields(fs, func(f *jsonField, _ string) {
		if found == nil && f.Name == name {
			found = f
		}
	})
	return found
}

func TestSummaryLineFacts(t *testing.T) {
	counted := map[string]int{}
	for _, name := range []string{"kgo-transactions.pcap", "kgo-group-3brokers.pcap", "sarama-produce-consume.pcap",
		"kafkago-produce-consume.pcap", "kgo-admin.pcapng", "kgo-sasl-plain.pcap", "kgo-sasl-scram.pcap"} {
		file := pcapPath(name)
		lines := summaryLines(t, file)
		for _, m := range dissectJSON(t, file, testRun{}) {
			if m.Kind != "request" && m.Kind != "response" {
				continue
			}
			line := lineOf(t, lines, m)
			// The stream column, after the time.
			if f := strings.Fields(line); f[2] != strconv.Itoa(m.Stream) {
				t.Errorf("%s: stream column %q, want %d: %s", name, f[2], m.Stream, line)
			}
			var want []string
			switch {
			case m.APIName == "EndTxn" && m.Kind == "request":
				c := field(m.Fields, "Committed")
				want = append(want, map[bool]string{true: "txn commit", false: "txn abort"}[c.Value == true])
			case m.APIName == "FindCoordinator" && m.Kind == "response":
				one := func(fs []*jsonField, key string) string {
					node, _ := intValue(field(fs, "NodeId"))
					host, _ := str(field(fs, "Host"))
					port, _ := intValue(field(fs, "Port"))
					s := fmt.Sprintf("node %d %s:%d", node, host, port)
					if key != "" {
						s = key + ": " + s
					}
					return s
				}
				if arr := field(m.Fields, "Coordinators"); arr != nil {
					var parts []string
					for _, e := range arr.Fields {
						key, _ := str(field(e.Fields, "Key"))
						parts = append(parts, one(e.Fields, key))
					}
					want = append(want, "coordinator "+strings.Join(parts, ", "))
				} else {
					want = append(want, "coordinator "+one(m.Fields, ""))
				}
			case m.APIName == "SaslHandshake" && m.Kind == "request":
				mech, _ := str(field(m.Fields, "Mechanism"))
				want = append(want, "mechanism "+mech)
			case m.APIName == "SaslAuthenticate" && m.Kind == "request":
				if u := field(m.Fields, "user"); u != nil {
					want = append(want, fmt.Sprintf("user %q", u.Value))
				}
				for _, secret := range []string{"password", "proof"} {
					if p := field(m.Fields, secret); p != nil && p.Value != "<redacted>" {
						t.Errorf("%s: %s shown in JSON", name, secret)
					}
				}
			}
			// Records: all of them, and those of control batches apart.
			records, control := 0, 0
			walkFields(m.Fields, func(f *jsonField, _ string) {
				if f.Type != "record_batch" {
					return
				}
				a, _ := intValue(field(f.Fields, "attributes"))
				n := 0
				for _, c := range f.Fields {
					if c.Name == "records" {
						n = len(c.Fields)
					}
				}
				records += n
				if a&0x20 != 0 {
					control += n
				}
			})
			if control > 0 {
				counted["control"]++
				want = append(want, fmt.Sprintf("%d data + %d control records", records-control, control))
			}
			for _, w := range want {
				counted[strings.Fields(w)[0]]++
				if !strings.Contains(line, "  "+w) {
					t.Errorf("%s #%d %s: summary line lacks %q:\n%s", name, m.Frame, m.APIName, w, line)
				}
			}
		}
	}
	// Each kind of fact was met.
	for _, k := range []string{"txn", "coordinator", "mechanism", "user", "control"} {
		if counted[k] == 0 {
			t.Errorf("no %s fact in the captures", k)
		}
	}
}
