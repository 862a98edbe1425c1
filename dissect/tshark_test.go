package dissect

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/pcaps"
)

// msgKey identifies a Kafka message by the packet holding its last byte and its correlation id.
type msgKey struct {
	frame int
	corr  int32
}

type tsharkMsg struct {
	key, version int
	requestFrame int
	request      bool
}

// tsharkMessages asks tshark to dissect a capture as Kafka on the ports of pcaps.Ports.
func tsharkMessages(t *testing.T, file string) map[msgKey]tsharkMsg {
	t.Helper()
	ports, err := capture.ParsePorts([]string{pcaps.Ports})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-r", file, "-n"}
	for _, r := range ports.Ranges() {
		for p := int(r.Lo); p <= int(r.Hi); p++ {
			args = append(args, "-d", fmt.Sprintf("tcp.port==%d,kafka", p))
		}
	}
	args = append(args, "-Y", "kafka", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,",
		"-e", "frame.number", "-e", "tcp.dstport", "-e", "kafka.correlation_id",
		"-e", "kafka.request_key", "-e", "kafka.api_version", "-e", "kafka.request_frame")
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark %s: %v", file, err)
	}
	msgs := map[msgKey]tsharkMsg{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 6 {
			continue
		}
		frame, _ := strconv.Atoi(f[0])
		dport, _ := strconv.Atoi(f[1])
		request := ports.Has(uint16(dport))
		corrs, keys, versions, reqFrames := split(f[2]), split(f[3]), split(f[4]), split(f[5])
		for i, c := range corrs {
			corr, _ := strconv.Atoi(c)
			m := tsharkMsg{key: -1, version: -1, request: request}
			if request && len(keys) == len(corrs) && len(versions) == len(corrs) {
				m.key, _ = strconv.Atoi(keys[i])
				m.version, _ = strconv.Atoi(versions[i])
			}
			if !request && len(reqFrames) == len(corrs) {
				m.requestFrame, _ = strconv.Atoi(reqFrames[i])
			}
			msgs[msgKey{frame, int32(corr)}] = m
		}
	}
	return msgs
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// TestAgainstTshark cross-checks every message tshark finds in pcaps/ with kdissect's JSON
// output: same packet, correlation id, API key and version, and the same request for each
// response.
func TestAgainstTshark(t *testing.T) {
	needTshark(t)
	for _, file := range kafkaCaptures(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			out, errOut, code := testRun{format: "json", ports: pcaps.Ports}.dissect(t, file)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			checked, extra := compareTshark(t, file, out)
			t.Logf("%d messages checked against tshark; kdissect finds %d more that tshark does not dissect", checked, extra)
			if checked == 0 {
				t.Fatal("tshark found no Kafka message to compare")
			}
		})
	}
}

// needTshark skips a test without tshark, and fails it in CI, which installs it.
func needTshark(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tshark is not installed; .ci/run should have installed it")
		}
		t.Skip("tshark not installed (apt-get install tshark)")
	}
}

// compareTshark cross-checks every message tshark finds in file with kdissect's JSON output
// of it, out: same packet, correlation id, API key and version, and the same request for each
// response. It returns how many messages were checked, and how many kdissect finds beyond.
func compareTshark(t *testing.T, file, out string) (checked, extra int) {
	t.Helper()
	want := tsharkMessages(t, file)
	got := map[msgKey]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["kind"] != "request" && m["kind"] != "response" {
			continue
		}
		got[msgKey{int(m["frame"].(float64)), int32(m["correlation_id"].(float64))}] = m
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("tshark sees a message in packet %d with correlation id %d; kdissect does not", k.frame, k.corr)
			continue
		}
		if (g["kind"] == "request") != w.request {
			t.Errorf("packet %d corr %d: tshark request=%v, kdissect kind %v", k.frame, k.corr, w.request, g["kind"])
		}
		if w.request && w.key >= 0 {
			if int(g["api_key"].(float64)) != w.key || int(g["api_version"].(float64)) != w.version {
				t.Errorf("packet %d corr %d: tshark says key %d v%d, kdissect %v v%v", k.frame, k.corr, w.key, w.version, g["api_key"], g["api_version"])
			}
		}
		if !w.request && w.requestFrame > 0 {
			if rf, _ := g["request_frame"].(float64); int(rf) != w.requestFrame {
				t.Errorf("packet %d corr %d: tshark pairs it with packet %d, kdissect with %v", k.frame, k.corr, w.requestFrame, g["request_frame"])
			}
		}
		checked++
	}
	return checked, len(got) - checked
}
