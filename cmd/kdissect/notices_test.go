package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/connsgen"
)

// TestNoticesLeftOut: with a filter, the notices of connections that show no message are left
// out, and one line on stderr says how many; without a filter, every notice is shown and no
// such line is said.
func TestNoticesLeftOut(t *testing.T) {
	file := pcap("kgo-tls12.pcap") // TLS without its keys: a notice per connection, no message
	all, errAll, code := kdissect(t, "--format", "summary", file)
	notices := strings.Count(all, " ! ")
	if code != 0 || notices == 0 || strings.Contains(errAll, "left out") {
		t.Fatalf("exit %d, %d notices, stderr %q", code, notices, errAll)
	}
	out, errOut, code := kdissect(t, "--format", "summary", "--api", "Produce", file)
	want := fmt.Sprintf("kdissect: %d notices about connections with no message shown were left out\n", notices)
	if code != 0 || out != "" || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stdout %q, stderr %q lacks %q", code, out, errOut, want)
	}
}

// TestIdleFlushed: connections idle past the bound are counted in one line on stderr, and each
// of their requests is still shown; a capture with none idle says nothing of it.
func TestIdleFlushed(t *testing.T) {
	for _, tt := range []struct {
		name string
		spec connsgen.Spec
		want string
	}{
		{"idle", connsgen.Spec{Conns: 6, Every: time.Second, Pause: 11 * time.Minute, PauseAfter: 3},
			"kdissect: 4 connections idle for 10 minutes of capture time, or beyond the 8192 most recently active, were flushed and forgotten: a later packet of one starts a new connection\n"},
		{"none idle", connsgen.Spec{Conns: 6, Every: time.Second}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "conns.pcap")
			var buf bytes.Buffer
			if err := connsgen.Write(&buf, tt.spec); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := kdissect(t, "--format", "summary", file)
			requests := strings.Count(out, " Request ")
			if code != 0 || requests != tt.spec.Conns || errOut != tt.want {
				t.Errorf("exit %d, %d requests shown, stderr %q; want 0, %d, %q", code, requests, errOut, tt.spec.Conns, tt.want)
			}
		})
	}
}

// TestOpenConnectionsBoundShared: with several workers, the shards share the bound on open
// connections that one assembler has, rather than each keeping that many: beyond it the least
// recently active are flushed, so memory stays that of one assembler. Connections beyond the
// bound are flushed at the flushes, once a second of capture time, and those a shard holds are
// uneven (by a hash of their addresses): hence the margins of a second's connections and an
// eighth of the bound.
func TestOpenConnectionsBoundShared(t *testing.T) {
	spec := connsgen.Spec{Conns: 20000, Every: connsgen.DefaultEvery}
	file := filepath.Join(t.TempDir(), "open.pcap")
	var buf bytes.Buffer
	if err := connsgen.Write(&buf, spec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	const bound = 8192 // reassembly.DefaultMaxConns, as the notice says
	least := spec.Conns - int(time.Second/spec.Every) - bound*9/8
	for _, workers := range []string{"1", "4"} {
		t.Run("workers "+workers, func(t *testing.T) {
			out, errOut, code := kdissect(t, "--format", "summary", "--workers", workers, file)
			var idle int
			if _, err := fmt.Sscanf(errOut, "kdissect: %d connections idle", &idle); err != nil {
				t.Fatalf("exit %d, stderr %q: no count of idle connections (%v)", code, errOut, err)
			}
			requests := strings.Count(out, " Request ")
			if code != 0 || requests != spec.Conns || idle < least {
				t.Errorf("exit %d, %d requests shown, %d connections flushed as idle; want 0, %d, at least %d",
					code, requests, idle, spec.Conns, least)
			}
		})
	}
}
