package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// messageKeys lists the messages of a JSON run as comparable strings.
func messageKeys(t *testing.T, out string) []string {
	t.Helper()
	var keys []string
	for _, m := range parseLines(t, out) {
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
			named, _, code := kdissect(t, "--format", "json", "-p", capturePorts, file)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			detected, errOut, code := kdissect(t, "--format", "json", file)
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
	out, _, code := kdissect(t, "--format", "summary", filepath.Join("..", "..", "pcaps", "kgo-odd-ports.pcap"))
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
	files, _ := filepath.Glob(filepath.Join("..", "..", "pcaps", "other-*.pcap"))
	if len(files) < 6 {
		t.Fatalf("expected six other-protocol captures, found %d", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			out, errOut, code := kdissect(t, "--format", "json", file)
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
	file := filepath.Join("..", "..", "pcaps", "kgo-tls13.pcap")
	keys := filepath.Join("..", "..", "pcaps", "kgo-tls13.keylog")
	named, _, code := kdissect(t, "--format", "json", "-p", "9093", "--tls-keylog", keys, file)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	detected, errOut, code := kdissect(t, "--format", "json", "--tls-keylog", keys, file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want, got := messageKeys(t, named), messageKeys(t, detected)
	if len(want) < 30 || strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Fatalf("detection found %d messages, naming the port %d:\n%s", len(got), len(want), firstDiff(want, got))
	}
}

// TestDemo: the built-in capture dissects like the file it comes from.
func TestDemo(t *testing.T) {
	demo, _, code := kdissect(t, "demo", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	file, _, _ := kdissect(t, "--format", "json", filepath.Join("..", "..", "pcaps", "kgo-produce-fetch.pcap"))
	want, got := messageKeys(t, file), messageKeys(t, demo)
	if len(want) == 0 || strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Fatalf("demo gives %d messages, the file %d", len(got), len(want))
	}
}
