package main

import (
	"io"
	"path/filepath"
	"testing"
)

// TestConns: kbench conns writes a capture of the connections asked for, seven packets each
// left open (handshake, request, response, ACKs), ten each closed (FINs and their ACK).
func TestConns(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		packets int64
	}{
		{[]string{"-n", "3"}, 3 * 7},
		{[]string{"-n", "3", "-close"}, 3 * 10},
	} {
		file := filepath.Join(t.TempDir(), "conns.pcap")
		if code := dispatch(append([]string{"conns", "-o", file}, tt.args...), io.Discard, io.Discard); code != 0 {
			t.Fatalf("%q: exit %d", tt.args, code)
		}
		info, err := inspectCapture(file)
		if err != nil || info.packets != tt.packets {
			t.Errorf("%q: %d packets, %v; want %d", tt.args, info.packets, err, tt.packets)
		}
	}
}
