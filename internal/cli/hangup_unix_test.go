//go:build unix

package cli

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestHangups: each SIGHUP calls the function, on and on, until Release.
func TestHangups(t *testing.T) {
	called := make(chan struct{})
	h := CatchHangups(func() { called <- struct{}{} })
	for i := range 3 {
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		select {
		case <-called:
		case <-time.After(10 * time.Second):
			t.Fatalf("SIGHUP %d did not call the function", i+1)
		}
	}
	h.Release()
}
