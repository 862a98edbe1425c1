package tlsdec

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const cr1 = "3b251dc31811a9ca4bde540984f415c18111ba7cf567ac3a794296e3be929c7a"

func TestParseKeyLog(t *testing.T) {
	in := "# a comment\n\n" +
		"CLIENT_RANDOM " + cr1 + " " + strings.Repeat("ab", 48) + "\n" +
		"  CLIENT_TRAFFIC_SECRET_0\t" + strings.ToUpper(cr1) + " " + strings.Repeat("cd", 32) + "  \r\n" +
		"RSA 0123456789abcdef " + strings.Repeat("ee", 48) + "\n" +
		"SERVER_TRAFFIC_SECRET_0 " + cr1 + "\n" + // line 6: two fields
		"SERVER_TRAFFIC_SECRET_0 xyz " + strings.Repeat("cd", 32) + "\n" +
		"EXPORTER_SECRET " + cr1 + " " + strings.Repeat("01", 32) // no newline at the end
	k, err := ParseKeyLog(strings.NewReader(in))
	if err == nil || !strings.Contains(err.Error(), "line 6") {
		t.Errorf("error %v, want one naming line 6", err)
	}
	if k.Len() != 3 {
		t.Errorf("%d secrets, want 3", k.Len())
	}
	cr := unhex(t, cr1)
	if s, ok := k.Lookup(LabelClientRandom, cr); !ok || !bytes.Equal(s, bytes.Repeat([]byte{0xab}, 48)) {
		t.Errorf("CLIENT_RANDOM: %x %v", s, ok)
	}
	if _, ok := k.Lookup(LabelClientTraffic0, cr); !ok {
		t.Error("the upper-case client random is not found")
	}
	if _, ok := k.Lookup(LabelServerTraffic0, cr); ok {
		t.Error("a secret from a bad line")
	}
	if _, ok := k.Lookup(LabelClientRandom, cr[:31]); ok {
		t.Error("a short client random matches")
	}
	var nilLog *KeyLog
	if _, ok := nilLog.Lookup(LabelClientRandom, cr); ok || nilLog.Len() != 0 {
		t.Error("a nil key log holds something")
	}
}

// A followed key log is read again when a lookup misses: a live capture sees connections
// whose secrets the application appends after the capture started.
func TestKeyLogFollow(t *testing.T) {
	name := filepath.Join(t.TempDir(), "keys.log")
	line := func(label string) string { return label + " " + cr1 + " " + strings.Repeat("cd", 32) + "\n" }
	if err := os.WriteFile(name, []byte(line(LabelClientHandshake)), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := OpenKeyLog(name, true)
	if err != nil || k.Len() != 1 {
		t.Fatalf("%d secrets, %v", k.Len(), err)
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A line still being written is not read until its newline is there.
	full := line(LabelServerHandshake)
	f.WriteString(full[:20])
	if _, ok := k.Lookup(LabelServerHandshake, unhex(t, cr1)); ok {
		t.Fatal("half a line was read")
	}
	f.WriteString(full[20:])
	k.follow.last = k.follow.last.Add(-time.Second) // past the 10 ms between reads
	if _, ok := k.Lookup(LabelServerHandshake, unhex(t, cr1)); !ok {
		t.Fatal("the appended secret is not found")
	}
	if k.Len() != 2 {
		t.Errorf("%d secrets, want 2", k.Len())
	}
	// A followed key log need not exist yet.
	k3, err := OpenKeyLog(name+".later", true)
	if err != nil || !k3.Following() {
		t.Errorf("a key log to be written: %v", err)
	}
	if _, err := OpenKeyLog(name+".later", false); err == nil {
		t.Error("a missing key log is opened")
	}
	// Not followed: no second read.
	k2, _ := OpenKeyLog(name, false)
	if k2.following() {
		t.Error("following without being asked")
	}
}
