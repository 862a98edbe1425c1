//go:build unix

package cli

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestHangups: each SIGHUP calls the function, on and on, until Release; the first, sent
// between CatchHangups and Serve, is kept for Serve. (The minute is a guard against a hang,
// not a bound: a signal is delivered in microseconds.)
func TestHangups(t *testing.T) {
	called := make(chan struct{})
	h := CatchHangups()
	hangup := func() {
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	hangup()
	h.Serve(func() { called <- struct{}{} })
	for i := range 3 {
		if i > 0 {
			hangup()
		}
		select {
		case <-called:
		case <-time.After(time.Minute):
			t.Fatalf("SIGHUP %d did not call the function", i+1)
		}
	}
	h.Release()
}
