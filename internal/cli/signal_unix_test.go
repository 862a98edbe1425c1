//go:build unix

package cli

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestInterrupts: a signal caught calls the stop function; after Release, none is waited for.
func TestInterrupts(t *testing.T) {
	in := CatchInterrupts()
	stopped := make(chan struct{})
	in.Then(func() { close(stopped) })
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not call stop")
	}
	in.Release()
}
