package dissect

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/pcaps"
)

// messageKeys lists the messages of a JSON run as comparable strings.
func messageKeys(t *testing.T, out string) []string {
	t.Helper()
	var keys []string
	for _, m := range mapLines(t, out) {
		if m["kind"] == "request" || m["kind"] == "response" {
			keys = append(keys, fmt.Sprintf("%v %v %v %v v%v %v", m["frame"], m["stream"], m["kind"], m["api_name"], m["api_version"], m["correlation_id"]))
		}
	}
	return keys
}

// TestDetectFindsTheSameMessages: with no -p, every plaintext capture gives the messages that
// naming its ports gives, and says which ports it took as Kafka and why.
func TestDetectFindsTheSameMessages(t *testing.T) {
	for _, file := range kafkaCaptures(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			named, _, code := testRun{format: "json", ports: pcaps.Ports}.dissect(t, file)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			detected, errOut, code := testRun{format: "json"}.dissect(t, file)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			want, got := messageKeys(t, named), messageKeys(t, detected)
			if len(want) == 0 {
				t.Fatal("no messages with named ports")
			}
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Fatalf("detection found %d messages, naming the ports %d; first difference:\n%s", len(got), len(want), firstDiff(want, got))
			}
			if !strings.Contains(detected, "taken as Kafka") {
				t.Error("no notice says which port was taken as Kafka")
			}
		})
	}
}

// TestDetectOddPorts: Kafka on 36333 and 19092 needs no flag.
func TestDetectOddPorts(t *testing.T) {
	out, _, code := testRun{format: "summary"}.dissect(t, pcapPath("kgo-odd-ports.pcap"))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, port := range []string{"36333", "19092"} {
		if !strings.Contains(out, "port "+port+" taken as Kafka: ApiVersions") {
			t.Errorf("port %s not reported as detected", port)
		}
	}
	if n := strings.Count(out, " answers #"); n < 20 {
		t.Errorf("%d paired responses, want the whole capture's", n)
	}
}

// TestDetectNoFalsePositives: captures of HTTP, TLS, DNS over TCP, PostgreSQL, Redis and SSH
// made with real servers and clients hold no Kafka message, and detection finds none.
func TestDetectNoFalsePositives(t *testing.T) {
	files, _ := filepath.Glob(pcapPath("other-*.pcap"))
	if len(files) < 6 {
		t.Fatalf("expected six other-protocol captures, found %d", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			out, errOut, code := testRun{format: "json"}.dissect(t, file)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if keys := messageKeys(t, out); len(keys) > 0 {
				t.Errorf("%d Kafka messages found in a capture without Kafka: %v", len(keys), keys[:min(3, len(keys))])
			}
			if strings.Contains(out, "taken as Kafka") {
				t.Errorf("a port was taken as Kafka: %s", out)
			}
		})
	}
}

func firstDiff(a, b []string) string {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return "named: " + x + "\ndetected: " + y
		}
	}
	return ""
}

// TestDetectTLSWithKeyLog: with a key log and no -p, TLS connections are opened and decrypted,
// and give the messages that naming the port gives.
func TestDetectTLSWithKeyLog(t *testing.T) {
	file := pcapPath("kgo-tls13.pcap")
	keys := pcapPath("kgo-tls13.keylog")
	named, _, code := testRun{format: "json", ports: "9093", keylog: keys}.dissect(t, file)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	detected, errOut, code := testRun{format: "json", keylog: keys}.dissect(t, file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want, got := messageKeys(t, named), messageKeys(t, detected)
	if len(want) < 30 || strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Fatalf("detection found %d messages, naming the port %d:\n%s", len(got), len(want), firstDiff(want, got))
	}
}

// TestEveryResponsePaired: in captures that hold whole connections, every response is paired
// with its request, every request with a response (but for long polls cut by the end of their
// connection, and Produce requests with acks=0, which get none), and nothing carries a warning.
// In the captures that miss part of a connection, only the responses to requests not captured
// are unpaired.
func TestEveryResponsePaired(t *testing.T) {
	// partial are the captures missing part of a connection, with their unpaired responses:
	// kgo-midstream.pcap starts mid-stream (two responses answer requests sent before it),
	// kgo-capture-loss.pcap lost the packet of one Produce request.
	partial := map[string]int{"kgo-midstream.pcap": 2, "kgo-capture-loss.pcap": 1}
	for _, file := range kafkaCaptures(t) {
		base := filepath.Base(file)
		t.Run(base, func(t *testing.T) {
			out, errOut, code := testRun{format: "json", ports: pcaps.Ports}.dissect(t, file)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			requests, responses, unpaired := 0, 0, 0
			answered := map[float64]bool{}
			lines := mapLines(t, out)
			// kgo-fetch-session.pcap misuses fetch sessions on purpose: the responses whose
			// top-level error is FETCH_SESSION_ID_NOT_FOUND (70) or INVALID_FETCH_SESSION_EPOCH
			// (71), and their requests, are warned about, and only they.
			misused := map[float64]bool{}
			for _, m := range lines {
				if m["api_name"] != "Fetch" || m["kind"] != "response" {
					continue
				}
				for _, f := range m["fields"].([]any) {
					if f := f.(map[string]any); f["name"] == "ErrorCode" && (f["value"] == 70.0 || f["value"] == 71.0) {
						misused[m["frame"].(float64)], misused[m["request_frame"].(float64)] = true, true
					}
				}
			}
			if base == "kgo-fetch-session.pcap" && len(misused) != 4 {
				t.Errorf("%d Fetch requests and responses misuse a session, want 4", len(misused))
			}
			for _, m := range lines {
				warned := m["warnings"] != nil && len(m["warnings"].([]any)) > 0
				if _, cut := partial[base]; misused[m["frame"].(float64)] != warned && !cut {
					t.Errorf("packet %v: warnings %v, misused session %v", m["frame"], m["warnings"], misused[m["frame"].(float64)])
				}
				switch m["kind"] {
				case "request":
					if m["no_response"] != true {
						requests++
					}
				case "response":
					responses++
					if rf, ok := m["request_frame"].(float64); ok {
						answered[rf] = true
					} else {
						unpaired++
					}
				}
			}
			if requests == 0 || responses == 0 {
				t.Fatalf("%d requests, %d responses", requests, responses)
			}
			if want, cut := partial[base]; cut {
				if unpaired != want {
					t.Errorf("%d unpaired responses, want %d", unpaired, want)
				}
				return
			}
			if unpaired > 0 {
				t.Errorf("%d of %d responses unpaired", unpaired, responses)
			}
			// A client may close a connection while the broker still holds its long-poll Fetch:
			// only such requests may go unanswered, but in kgo-unanswered.pcap, whose broker
			// never answers one ListGroups request.
			ends := connectionEnds(t, file)
			skipped := 0
			for _, m := range lines {
				if m["kind"] != "request" || m["no_response"] == true || answered[m["frame"].(float64)] || longPollCut(t, m, ends) {
					continue
				}
				if base == "kgo-unanswered.pcap" && m["api_name"] == "ListGroups" {
					skipped++
					continue
				}
				t.Errorf("packet %v: %v request without a response", m["frame"], m["api_name"])
			}
			if want := map[string]int{"kgo-unanswered.pcap": 1}[base]; skipped != want {
				t.Errorf("%d requests the broker skipped, want %d", skipped, want)
			}
		})
	}
}

// longPollCut reports whether m, a request, is a Fetch that the broker could still hold,
// waiting for records, when its connection ended: its MaxWaitMs had not run out by the
// connection's last packet.
func longPollCut(t *testing.T, m map[string]any, ends map[[2]string]time.Time) bool {
	t.Helper()
	if m["api_name"] != "Fetch" {
		return false
	}
	at, err := time.Parse(time.RFC3339Nano, m["time"].(string))
	if err != nil {
		t.Fatal(err)
	}
	end, ok := ends[connEnds(m["src"].(string), m["dst"].(string))]
	if !ok {
		t.Fatalf("packet %v: no connection %v-%v in the capture", m["frame"], m["src"], m["dst"])
	}
	for _, f := range m["fields"].([]any) {
		if f := f.(map[string]any); f["name"] == "MaxWaitMs" {
			wait, _ := f["value"].(float64)
			return at.Add(time.Duration(wait) * time.Millisecond).After(end)
		}
	}
	return false
}

// connEnds names a TCP connection by its two ends, whichever way a packet goes.
func connEnds(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// connectionEnds returns the time of the last packet of each TCP connection of a capture
// (its ends written as the JSON lines write src and dst).
func connectionEnds(t *testing.T, file string) map[[2]string]time.Time {
	t.Helper()
	r, err := capture.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ends := map[[2]string]time.Time{}
	for {
		seg, err := r.Next()
		if err == io.EOF {
			return ends
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		src, _ := netip.AddrFromSlice(seg.Net.Src().Raw())
		dst, _ := netip.AddrFromSlice(seg.Net.Dst().Raw())
		k := connEnds(netip.AddrPortFrom(src, uint16(seg.TCP.SrcPort)).String(), netip.AddrPortFrom(dst, uint16(seg.TCP.DstPort)).String())
		ends[k] = seg.Info.Timestamp
	}
}

// kafkaCaptures lists the captures in pcaps/ that hold Kafka in the clear: not the other
// protocols' captures, not the TLS ones (which have a key log beside them).
func kafkaCaptures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range captures(t) {
		if strings.HasPrefix(filepath.Base(f), "other-") || keylogOf(f) != "" {
			continue
		}
		out = append(out, f)
	}
	return out
}

// mapLines reads JSON lines.
func mapLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad JSON line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}
