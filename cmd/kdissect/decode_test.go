package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/cli"
)

type jsonLine map[string]any

func parseLines(t *testing.T, out string) []jsonLine {
	t.Helper()
	var lines []jsonLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m jsonLine
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad JSON line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// TestDecodeCommand: --api (by name or key) and --api-version say the frames are responses;
// what the frames give, and frames cut short or not hex, are dissect's TestFramesDecode; here,
// the flags and the exit statuses.
func TestDecodeCommand(t *testing.T) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	reqFrame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("cli")).AppendRequest(nil, req, 7) // size + header v2 + body
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	resp.ErrorCode = 35
	body := resp.AppendTo(nil)
	respFrame := append([]byte{0, 0, 0, byte(4 + len(body)), 0, 0, 0, 9}, body...)

	tests := []struct {
		name  string
		args  []string
		input string
		code  int
		want  []string
	}{
		{"request hex", []string{"decode", "--hex", "--format", "json"}, spaced(reqFrame), 0,
			[]string{`"api_name":"Metadata"`, `"api_version":12`, `"correlation_id":7`, `"client_id":"cli"`}},
		{"response", []string{"decode", "--hex", "--format", "json", "--api", "ApiVersions", "--api-version", "3"}, hex.EncodeToString(respFrame), 0,
			[]string{`"kind":"response"`, `"correlation_id":9`, `"error":"UNSUPPORTED_VERSION"`}},
		{"response by key", []string{"decode", "--hex", "--format", "json", "--api", "18", "--api-version", "3"}, hex.EncodeToString(respFrame), 0,
			[]string{`"api_name":"ApiVersions"`}},
		{"not hex", []string{"decode", "--hex"}, "zz", 1, nil},
		{"cut frame", []string{"decode", "--hex"}, hex.EncodeToString(reqFrame[:len(reqFrame)-3]), 1, nil},
		{"unknown api", []string{"decode", "--api", "Nope", "--api-version", "1"}, "", 1, nil},
		{"api without version", []string{"decode", "--api", "Metadata"}, "", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut strings.Builder
			code := run(tt.args, strings.NewReader(tt.input), &out, &errOut)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errOut.String())
			}
			if tt.code != 0 && errOut.Len() == 0 {
				t.Fatal("failure without a message on stderr")
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %s:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestDecodeForms: decode reads the hex text people paste: 0x bytes, one 0x run, and the
// dumps of xxd and hexdump -C (run here when installed; dissect's TestHexText reads their
// forms without them); text that is none of them is refused, saying which forms are.
func TestDecodeForms(t *testing.T) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("cli")).AppendRequest(nil, req, 7)
	var perByte []string
	for _, c := range frame {
		perByte = append(perByte, fmt.Sprintf("0x%02x", c))
	}
	inputs := map[string]string{
		"0x bytes":   strings.Join(perByte, " "),
		"C array":    "{ " + strings.Join(perByte, ", ") + " };",
		"one 0x run": "0x" + hex.EncodeToString(frame),
	}
	for _, tool := range [][]string{{"xxd"}, {"xxd", "-g1"}, {"hexdump", "-C"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			continue
		}
		cmd := exec.Command(tool[0], tool[1:]...)
		cmd.Stdin = bytes.NewReader(frame)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		inputs[strings.Join(tool, " ")] = string(out)
	}
	for name, in := range inputs {
		out, errOut, code := kdissectStdin(t, []byte(in), "decode", "--format", "json")
		if code != 0 || errOut != "" || !strings.Contains(out, `"api_name":"Metadata"`) || !strings.Contains(out, `"correlation_id":7`) {
			t.Errorf("%s: exit %d, stderr %q, stdout %s\n%s", name, code, errOut, out, in)
		}
	}
	_, errOut, code := kdissectStdin(t, []byte("0x00 0x00 0x00 0xzz"), "decode")
	if want := `kdissect: decode: stdin: neither hex text (digits, 0x bytes, xxd or hexdump -C output) nor binary frames: line 1: "0xzz" is not hex`; code != cli.ExitFailure || !strings.HasPrefix(errOut, want) {
		t.Errorf("not hex: exit %d, stderr %q; want 1 and %q", code, errOut, want)
	}
}

func spaced(b []byte) string {
	h := hex.EncodeToString(b)
	var s strings.Builder
	for i := 0; i < len(h); i += 8 {
		s.WriteString(h[i:min(len(h), i+8)])
		s.WriteString(" \n\t"[i/8%3 : i/8%3+1])
	}
	return s.String()
}

// TestDecodeParquet: decode has no -o, so --format parquet goes to stdout (when it is not a
// terminal), one row per frame; it was refused with advice to give -o, which decode lacks.
func TestDecodeParquet(t *testing.T) {
	var frames []byte
	for corr := range int32(3) {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		frames = append(frames, kmsg.NewRequestFormatter(kmsg.FormatterClientID("cli")).AppendRequest(nil, req, corr)...)
	}
	out, errOut, code := kdissectStdin(t, frames, "decode", "--format", "parquet")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := parquet.OpenFile(strings.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatalf("not a Parquet file: %v", err)
	}
	if f.NumRows() != 3 {
		t.Errorf("%d rows, want 3 (one per frame)", f.NumRows())
	}
}
