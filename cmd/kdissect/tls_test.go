package main

// TLS through the flags: --tls-keylog's errors and warnings, and the decrypted captures'
// output pinned; how TLS is decrypted is tested in package dissect (tls_test.go).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/pcaps"
)

// TestTLSKeyLogFlag: a key log that cannot be read, or holds nothing usable, is an error; one
// with bad lines or no secrets, a warning.
func TestTLSKeyLogFlag(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("this is not a key log\n"), 0o600)
	mixed := filepath.Join(dir, "mixed")
	keys, _ := os.ReadFile(pcap("kgo-tls13.keylog"))
	os.WriteFile(mixed, append([]byte("garbage line\n"), keys...), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	for _, tc := range []struct {
		file   string
		code   int
		stderr string
	}{
		{filepath.Join(dir, "missing"), 1, "--tls-keylog: open"},
		{junk, 1, "--tls-keylog: not a key log: "},
		{mixed, 0, "key log line 1: 2 fields, want 3 (LABEL CLIENT_RANDOM SECRET) (the other lines are used)"},
		{empty, 0, "holds no secrets"},
	} {
		out, errOut, code := kdissect(t, "--format", "summary", "-p", "9093", "--tls-keylog", tc.file, pcap("kgo-tls13.pcap"))
		if code != tc.code || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%s: exit %d, stderr %q", filepath.Base(tc.file), code, errOut)
		}
		if tc.file == mixed && strings.Count(out, "TLS 1.3 TLS_AES_128_GCM_SHA256") != 34 {
			t.Errorf("mixed key log: %s", out)
		}
	}
}

// The decrypted captures' output is pinned like the others'.
func TestGoldenTLSDecrypted(t *testing.T) {
	for _, name := range []string{"kgo-tls12", "kgo-tls13", "kgo-sasl-ssl-scram"} {
		for _, format := range []string{"summary", "json"} {
			file := name
			t.Run(name+".pcap.keylog."+format, func(t *testing.T) {
				out, errOut, code := kdissect(t, "--format", format, "-p", pcaps.Ports, "--tls-keylog", pcap(file+".keylog"), pcap(file+".pcap"))
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				golden(t, file+".pcap.keylog."+format, []byte(out+stderrSection(errOut)))
			})
		}
	}
}
