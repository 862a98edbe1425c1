package dissect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
)

// tlsJSON runs a capture in the json format, with the broker port of the TLS captures and the
// key log named (none: ""), and returns the messages and notices.
func tlsJSON(t *testing.T, keylog, file string) (msgs, notices []map[string]any, stderr string) {
	t.Helper()
	out, errOut, code := testRun{format: "json", ports: "9093", keylog: keylog}.dissect(t, file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if m["kind"] == "notice" {
			notices = append(notices, m)
		} else {
			msgs = append(msgs, m)
		}
	}
	return msgs, notices, errOut
}

var tlsCaptureSuites = map[string]string{
	"kgo-tls12":          "TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"kgo-tls12-aes256":   "TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"kgo-tls12-chacha":   "TLS 1.2 TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"kgo-tls13":          "TLS 1.3 TLS_AES_128_GCM_SHA256",
	"kgo-tls13-chacha":   "TLS 1.3 TLS_CHACHA20_POLY1305_SHA256",
	"kgo-sasl-ssl-scram": "TLS 1.3 TLS_AES_128_GCM_SHA256",
}

// Every TLS capture decrypts with its key log: no notice, no warning, every message marked
// with the version and suite, every request answered and every response paired.
func TestTLSCapturesDecode(t *testing.T) {
	for name, suite := range tlsCaptureSuites {
		t.Run(name, func(t *testing.T) {
			msgs, notices, stderr := tlsJSON(t, pcapPath(name+".keylog"), pcapPath(name+".pcap"))
			if len(notices) > 0 || stderr != "" {
				t.Errorf("notices %v, stderr %q", notices, stderr)
			}
			want := 34
			if name == "kgo-sasl-ssl-scram" {
				want = 70
			}
			if len(msgs) != want {
				t.Fatalf("%d messages, want %d", len(msgs), want)
			}
			answered := map[string]bool{}
			for _, m := range msgs {
				if m["tls"] != suite || len(m["warnings"].([]any)) > 0 {
					t.Errorf("message %v %v: tls %v, warnings %v", m["api_name"], m["kind"], m["tls"], m["warnings"])
				}
				key := fmt.Sprint(m["stream"], "/", m["correlation_id"])
				if m["kind"] == "response" {
					if m["request_frame"] == nil {
						t.Errorf("response %s is not paired", key)
					}
					answered[key] = true
				}
			}
			for _, m := range msgs {
				if m["kind"] == "request" && m["no_response"] == nil && !answered[fmt.Sprint(m["stream"], "/", m["correlation_id"])] {
					t.Errorf("request %v %v/%v has no response", m["api_name"], m["stream"], m["correlation_id"])
				}
			}
		})
	}
}

// kgo-tls13.pcap decrypted gives what its plaintext twin gives: per connection, the same
// requests and responses (API, version, correlation id, client id), the same field tree,
// and the same values but for those that change from run to run (ids, CRCs, telemetry).
func TestTLSTwin(t *testing.T) {
	tlsMsgs, _, _ := tlsJSON(t, pcapPath("kgo-tls13.keylog"), pcapPath("kgo-tls13.pcap"))
	plainMsgs, notices, _ := tlsJSON(t, "", pcapPath("kgo-tls-twin-plain.pcap"))
	if len(notices) > 0 || len(plainMsgs) != 34 {
		t.Fatalf("twin: %d messages, notices %v", len(plainMsgs), notices)
	}
	byStream := func(ms []map[string]any) map[string][]map[string]any {
		out := map[string][]map[string]any{}
		for _, m := range ms {
			k := fmt.Sprint(m["stream"])
			out[k] = append(out[k], m)
		}
		return out
	}
	a, b := byStream(tlsMsgs), byStream(plainMsgs)
	if len(a) != len(b) || len(a) != 6 {
		t.Fatalf("%d and %d connections", len(a), len(b))
	}
	varies := map[string]bool{"TopicId": true, "ProducerId": true, "producerId": true, "crc": true,
		"ClientInstanceId": true, "Metrics": true}
	records := 0
	for s := range a {
		if len(a[s]) != len(b[s]) {
			t.Fatalf("connection %s: %d and %d messages", s, len(a[s]), len(b[s]))
		}
		for i := range a[s] {
			x, y := a[s][i], b[s][i]
			for _, k := range []string{"kind", "api_key", "api_version", "correlation_id", "client_id"} {
				if !reflect.DeepEqual(x[k], y[k]) {
					t.Fatalf("connection %s message %d: %s %v, twin %v", s, i, k, x[k], y[k])
				}
			}
			lx, ly := leaves(x["fields"], ""), leaves(y["fields"], "")
			if len(lx) != len(ly) {
				t.Fatalf("connection %s message %d (%v): %d and %d fields", s, i, x["api_name"], len(lx), len(ly))
			}
			for j := range lx {
				if lx[j].path != ly[j].path {
					t.Fatalf("connection %s message %d: field %s, twin %s", s, i, lx[j].path, ly[j].path)
				}
				name := lx[j].path[strings.LastIndex(lx[j].path, "/")+1:]
				if !varies[name] && !reflect.DeepEqual(lx[j].value, ly[j].value) {
					t.Errorf("connection %s message %d (%v) %s: %v, twin %v", s, i, x["api_name"], lx[j].path, lx[j].value, ly[j].value)
				}
				if strings.Contains(lx[j].path, "/records/") && (name == "key" || name == "value") {
					records++
				}
			}
		}
	}
	if records == 0 {
		t.Error("no record keys or values compared")
	}
}

type leaf struct {
	path  string
	value any
}

func leaves(fields any, path string) []leaf {
	var out []leaf
	list, _ := fields.([]any)
	for _, f := range list {
		n := f.(map[string]any)
		p := path + "/" + fmt.Sprint(n["name"])
		if sub, ok := n["fields"]; ok {
			out = append(out, leaves(sub, p)...)
		} else {
			out = append(out, leaf{p, n["value"]})
		}
	}
	return out
}

// Without the key log, each TLS connection gets one notice that names the version and suite
// and no Kafka message is decoded; with every secret wrong, each gets one decryption warning.
func TestTLSCapturesWithoutKeys(t *testing.T) {
	for name, suite := range tlsCaptureSuites {
		version, cipher, _ := strings.Cut(suite, " TLS_")
		flipped := filepath.Join(t.TempDir(), "flipped.keylog")
		b, err := os.ReadFile(pcapPath(name + ".keylog"))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(l)
			d := "0"
			if f[2][0] == '0' {
				d = "1"
			}
			lines = append(lines, f[0]+" "+f[1]+" "+d+f[2][1:])
		}
		if err := os.WriteFile(flipped, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			variant string
			keylog  string
			text    string
		}{
			{"no key log", "", version + ", cipher TLS_" + cipher + ": encrypted; pass --tls-keylog FILE to decrypt"},
			{"wrong secrets", flipped, version + ", cipher TLS_" + cipher + ": decryption failed: authentication failed on the "},
		} {
			t.Run(name+"/"+tc.variant, func(t *testing.T) {
				msgs, notices, _ := tlsJSON(t, tc.keylog, pcapPath(name+".pcap"))
				if len(msgs) > 0 {
					t.Errorf("%d messages decoded", len(msgs))
				}
				streams := map[any]bool{}
				for _, n := range notices {
					streams[fmt.Sprint(n["stream"])] = true
					if !strings.HasPrefix(fmt.Sprint(n["text"]), tc.text) {
						t.Errorf("notice %q, want it to start %q", n["text"], tc.text)
					}
				}
				if len(notices) != 6 || len(streams) != 6 {
					t.Errorf("%d notices for %d connections", len(notices), len(streams))
				}
			})
		}
	}
}

// The version and suite show in the summary line and the diagram heading.
func TestTLSShown(t *testing.T) {
	r := testRun{ports: "9093", keylog: pcapPath("kgo-tls13.keylog")}
	r.format = "summary"
	out, _, _ := r.dissect(t, pcapPath("kgo-tls13.pcap"))
	first, _, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, "ApiVersions v5") || !strings.HasSuffix(first, "56 bytes  TLS 1.3 TLS_AES_128_GCM_SHA256") {
		t.Errorf("summary line %q", first)
	}
	r.format = "diagram"
	out, _, _ = r.dissect(t, pcapPath("kgo-tls13.pcap"))
	first, _, _ = strings.Cut(out, "\n")
	if !strings.HasSuffix(first, "stream 0  TLS 1.3 TLS_AES_128_GCM_SHA256") {
		t.Errorf("diagram heading %q", first)
	}
}

// The secrets can come in the capture itself: a pcapng Decryption Secrets Block, as
// editcap --inject-secrets tls,FILE writes it.
func TestTLSDecryptionSecretsBlock(t *testing.T) {
	keys, err := os.ReadFile(pcapPath("kgo-tls13.keylog"))
	if err != nil {
		t.Fatal(err)
	}
	r := openPcap(t, pcapPath("kgo-tls13.pcap"))
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, r.LinkType())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteDecryptionSecretsBlock(pcapgo.DSB_SECRETS_TYPE_TLS, keys); err != nil {
		t.Fatal(err)
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		ci.InterfaceIndex = 0
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "with-secrets.pcapng")
	if err := os.WriteFile(name, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	msgs, notices, stderr := tlsJSON(t, "", name)
	if len(msgs) != 34 || len(notices) > 0 || stderr != "" {
		t.Errorf("%d messages, notices %v, stderr %q", len(msgs), notices, stderr)
	}
}
