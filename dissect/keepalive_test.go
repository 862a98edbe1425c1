package dissect

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/pcaps"
)

// TestKeepAlive: TCP keep-alive probes and their ACKs are neither data nor loss. A capture
// whose connections probe while idle (testdata/keepalive.pcap, made by pcaps/gen), and the
// same capture from its first probe on (a capture started on quiet connections), dissect with
// no notice and no warning, to the messages tshark finds.
func TestKeepAlive(t *testing.T) {
	needTshark(t)
	full, cut := filepath.Join("testdata", "keepalive.pcap"), filepath.Join("testdata", "keepalive-idle-start.pcap")
	probes := keepAliveProbes(t, full)
	if len(probes) == 0 {
		t.Fatalf("tshark finds no keep-alive probe in %s", full)
	}
	if first := packetBytes(t, cut, map[int]bool{1: true}); !probes[first[1]] {
		t.Fatalf("%s does not start at a probe of %s", cut, full)
	}
	for _, file := range []string{full, cut} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			out, errOut, code := testRun{format: "json", ports: pcaps.Ports}.dissect(t, file)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, m := range mapLines(t, out) {
				if m["kind"] == "notice" {
					t.Errorf("notice: %v", m)
				}
				if w, _ := m["warnings"].([]any); len(w) > 0 {
					t.Errorf("packet %v: warnings %v", m["frame"], w)
				}
			}
			if checked, _ := compareTshark(t, file, out); checked == 0 {
				t.Fatal("tshark found no Kafka message to compare")
			}
		})
	}
}

// keepAliveProbes returns the bytes of the packets of file that tshark calls keep-alive probes
// (tcp.analysis.keep_alive).
func keepAliveProbes(t *testing.T, file string) map[string]bool {
	t.Helper()
	out, err := exec.Command("tshark", "-r", file, "-n", "-Y", "tcp.analysis.keep_alive",
		"-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", file, err)
	}
	nums := map[int]bool{}
	for _, f := range strings.Fields(string(out)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("tshark: frame number %q", f)
		}
		nums[n] = true
	}
	probes := map[string]bool{}
	for _, b := range packetBytes(t, file, nums) {
		probes[b] = true
	}
	return probes
}

// packetBytes returns the bytes of the packets of file numbered in nums.
func packetBytes(t *testing.T, file string, nums map[int]bool) map[int]string {
	t.Helper()
	got := map[int]string{}
	eachSegmentIn(t, file, func(seg *capture.Segment) {
		if nums[seg.Num] {
			got[seg.Num] = string(seg.Raw)
		}
	})
	if len(got) != len(nums) {
		t.Fatalf("%s: %d of the packets %v", file, len(got), fmt.Sprint(nums))
	}
	return got
}
