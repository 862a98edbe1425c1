package dissect

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/render"
)

// TestReadFrames: "" and "-" are stdin, shown as "stdin"; an empty input and a missing file
// are errors naming the input.
func TestReadFrames(t *testing.T) {
	file := filepath.Join(t.TempDir(), "frames")
	if err := os.WriteFile(file, []byte{0, 0, 0, 1, 7}, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, stdin, shown, data, err string
	}{
		{"", "ab", "stdin", "ab", ""},
		{"-", "ab", "stdin", "ab", ""},
		{"-", "", "stdin", "", "stdin: no input"},
		{file, "ab", file, "\x00\x00\x00\x01\x07", ""},
		{file + ".gone", "", file + ".gone", "", "no such file"},
	} {
		shown, data, err := ReadFrames(tt.name, strings.NewReader(tt.stdin))
		if shown != tt.shown || string(data) != tt.data || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%q: %q, %q, %v; want %q, %q and an error with %q", tt.name, shown, data, err, tt.shown, tt.data, tt.err)
		}
	}
}

// decodeRun is a run of Frames as kdissect decode's flags would ask for it.
type decodeRun struct {
	format           string // a name in render.Formats; "" is diagram
	hex, showSecrets bool
	// response says the frames are responses of apiKey at version (--api, --api-version).
	response        bool
	apiKey, version int16
}

// decode shows the frames of data (binary or hex text, as "stdin"), and returns the output, the
// warnings, and Decode's error.
func (r decodeRun) decode(t *testing.T, data []byte) (stdout, stderr string, err error) {
	t.Helper()
	f, c := formatCodec(t, r.format, r.showSecrets)
	var out, errOut strings.Builder
	fr := Frames{Codec: c, Out: f.New(&out, render.Options{Hex: r.hex, MaxBytes: 64}), APIKey: -1, Version: -1,
		Warn: func(err error) { fmt.Fprintf(&errOut, "kdissect: decode: %v\n", err) }}
	if r.response {
		fr.APIKey, fr.Version = r.apiKey, r.version
	}
	err = fr.Decode("stdin", data)
	if cerr := fr.Out.Close(); err == nil && cerr != nil {
		t.Fatal(cerr)
	}
	return out.String(), errOut.String(), err
}

// TestFramesDecode decodes raw frames built with kmsg: requests alone (binary and hex text), a
// response when told its API and version; frames cut short and input that is neither hex text
// nor binary frames are InputErrors.
func TestFramesDecode(t *testing.T) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	topic := kmsg.NewMetadataRequestTopic()
	name := "orders"
	topic.Topic = &name
	req.Topics = append(req.Topics, topic)
	reqFrame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("cli")).AppendRequest(nil, req, 7) // size + header v2 + body
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	resp.ErrorCode = 35
	body := resp.AppendTo(nil)
	respFrame := append([]byte{0, 0, 0, byte(4 + len(body)), 0, 0, 0, 9}, body...)

	tests := []struct {
		name     string
		run      decodeRun
		input    string
		inputErr bool
		want     []string
	}{
		{"request hex", decodeRun{hex: true, format: "json"}, spaced(reqFrame), false,
			[]string{`"api_name":"Metadata"`, `"api_version":12`, `"correlation_id":7`, `"client_id":"cli"`, `"value":"orders"`}},
		{"request binary", decodeRun{format: "json"}, string(reqFrame), false,
			[]string{`"api_name":"Metadata"`, `"value":"orders"`}},
		{"two requests", decodeRun{hex: true}, spaced(reqFrame) + "\n" + spaced(reqFrame), false,
			[]string{"Metadata Request v12", "offset 0", "offset " + strconv.Itoa(len(reqFrame))}},
		{"response", decodeRun{hex: true, format: "json", response: true, apiKey: 18, version: 3}, hex.EncodeToString(respFrame), false,
			[]string{`"kind":"response"`, `"correlation_id":9`, `"error":"UNSUPPORTED_VERSION"`}},
		{"not hex", decodeRun{hex: true}, "zz", true, nil},
		{"cut frame", decodeRun{hex: true}, hex.EncodeToString(reqFrame[:len(reqFrame)-3]), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := tt.run.decode(t, []byte(tt.input))
			var ie *InputError
			if tt.inputErr != errors.As(err, &ie) || !tt.inputErr && err != nil {
				t.Fatalf("error %v, want an InputError: %v; warnings: %s", err, tt.inputErr, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %s:\n%s", w, out)
				}
			}
		})
	}
}

// spaced writes b in hex text, groups of four bytes parted by spaces, newlines and tabs.
func spaced(b []byte) string {
	h := hex.EncodeToString(b)
	var s strings.Builder
	for i := 0; i < len(h); i += 8 {
		s.WriteString(h[i:min(len(h), i+8)])
		s.WriteString(" \n\t"[i/8%3 : i/8%3+1])
	}
	return s.String()
}
