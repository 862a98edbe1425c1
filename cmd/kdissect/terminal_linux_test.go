package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/kdissect/kdissect/internal/cli"
)

// openTerminal opens a pseudo-terminal and returns its terminal side, as a shell's stdin is,
// and the side that types into it.
func openTerminal(t *testing.T) (tty, keys *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var n, unlock uint32
	for _, c := range []struct {
		req uintptr
		arg *uint32
	}{{syscall.TIOCSPTLCK, &unlock}, {syscall.TIOCGPTN, &n}} {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), c.req, uintptr(unsafe.Pointer(c.arg))); e != 0 {
			t.Fatalf("ioctl %#x: %v", c.req, e)
		}
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts, ptmx
}

// TestStdinTerminal: a command that would read stdin when stdin is a terminal, where nobody
// pipes anything, is refused with how to give it input, instead of waiting silently.
func TestStdinTerminal(t *testing.T) {
	tty, keys := openTerminal(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-"}, "- reads a capture from stdin, which is a terminal: pipe one in"},
		{[]string{"decode"}, "decode reads frames from stdin, which is a terminal: pipe them in (xxd -p frames.bin | kdissect decode) or name a file"},
		{[]string{"decode", "-"}, "decode reads frames from stdin, which is a terminal"},
	} {
		// Ctrl-D typed ahead: a command that reads the terminal all the same gets an end of
		// input, and fails this test instead of waiting.
		if _, err := keys.Write([]byte{4}); err != nil {
			t.Fatal(err)
		}
		var out, errOut strings.Builder
		code := run(tt.args, tty, &out, &errOut)
		if code != cli.ExitUsage || out.Len() != 0 || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%q on a terminal: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out.String(), errOut.String(), tt.want)
		}
	}
}
