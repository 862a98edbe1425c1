package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testutil"
)

func TestLivePermissionMessage(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.EACCES} {
		err := liveError("eth0", "AF_PACKET socket", errno)
		if !errors.Is(err, ErrPermission) {
			t.Errorf("%v: not ErrPermission: %v", errno, err)
		}
		for _, want := range []string{"eth0", "CAP_NET_RAW", errno.Error()} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: message %q lacks %q", errno, err, want)
			}
		}
	}
	err := liveError("eth0", "AF_PACKET socket", syscall.ENOMEM)
	if errors.Is(err, ErrPermission) || strings.Contains(err.Error(), "setcap") {
		t.Errorf("ENOMEM taken for a permission problem: %v", err)
	}
	if !errors.Is(err, syscall.ENOMEM) {
		t.Errorf("ENOMEM lost: %v", err)
	}
}

func TestLiveUnknownInterface(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("live capture needs Linux")
	}
	_, err := OpenLive("kdissect-nosuch0", LiveOptions{})
	if !errors.Is(err, ErrNoInterface) {
		t.Fatalf("err = %v, want ErrNoInterface", err)
	}
	ifs, ierr := net.Interfaces()
	if ierr != nil {
		t.Fatal(ierr)
	}
	for _, i := range ifs {
		if !strings.Contains(err.Error(), i.Name) {
			t.Errorf("%q does not list interface %s", err, i.Name)
		}
	}
	if !strings.Contains(err.Error(), "lo") {
		t.Errorf("%q does not list lo", err)
	}
}

// loopbackName is the name of the loopback interface.
func loopbackName(t *testing.T) string {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			return i.Name
		}
	}
	t.Skip("no loopback interface")
	return ""
}

// TestLiveLoopback captures a TCP exchange on loopback, on the interface
// itself and on "any": each payload comes exactly once (the kernel drops the
// sent copies), packets are numbered from 1, other ports are filtered out,
// Stop ends Next with io.EOF, and the pcapng copy reads back the same.
func TestLiveLoopback(t *testing.T) {
	testutil.NeedRoot(t)
	for _, tc := range []struct{ iface, host string }{
		{loopbackName(t), "127.0.0.1"}, {loopbackName(t), "::1"}, {"any", "127.0.0.1"}, {"any", "::1"},
	} {
		t.Run(tc.iface+" "+tc.host, func(t *testing.T) {
			iface := tc.iface
			ln, err := net.Listen("tcp", net.JoinHostPort(tc.host, "0"))
			if err != nil {
				t.Skipf("no TCP on %s: %v", tc.host, err)
			}
			defer ln.Close()
			port := uint16(ln.Addr().(*net.TCPAddr).Port)
			// Traffic on another port, which the kernel filter must drop.
			other, err := net.Listen("tcp", net.JoinHostPort(tc.host, "0"))
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()

			var saved bytes.Buffer
			r, err := OpenLive(iface, LiveOptions{Ports: []PortRange{{port, port}}, Save: &saved})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()

			const rounds = 5
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				buf := make([]byte, 64)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					c.Write(bytes.ToUpper(buf[:n]))
				}
			}()
			go func() {
				c, err := other.Accept()
				if err == nil {
					io.Copy(io.Discard, c)
				}
			}()
			oc, err := net.Dial("tcp", other.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer oc.Close()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			for i := range rounds {
				fmt.Fprintf(oc, "noise %d", i)
				fmt.Fprintf(c, "ping %d", i)
				buf := make([]byte, 64)
				if _, err := c.Read(buf); err != nil {
					t.Fatal(err)
				}
			}
			c.Close()

			seen := map[string]int{}
			fin := 0
			timeout := time.AfterFunc(10*time.Second, r.Stop)
			defer timeout.Stop()
			num := 0
			for len(seen) < 2*rounds || fin < 2 {
				seg, err := r.Next()
				if err == io.EOF {
					t.Fatalf("stopped after 10s with %d payloads and %d FINs: %v", len(seen), fin, seen)
				}
				if err != nil {
					t.Fatal(err)
				}
				num++
				if seg.Num != num {
					t.Fatalf("packet number %d, want %d", seg.Num, num)
				}
				if uint16(seg.TCP.SrcPort) != port && uint16(seg.TCP.DstPort) != port {
					t.Fatalf("packet %d: ports %d -> %d passed the filter", seg.Num, seg.TCP.SrcPort, seg.TCP.DstPort)
				}
				if len(seg.TCP.Payload) > 0 {
					seen[string(seg.TCP.Payload)]++
				}
				if seg.TCP.FIN {
					fin++
				}
			}
			for i := range rounds {
				for _, p := range []string{fmt.Sprintf("ping %d", i), fmt.Sprintf("PING %d", i)} {
					if seen[p] != 1 {
						t.Errorf("payload %q seen %d times, want once", p, seen[p])
					}
				}
			}
			r.Stop()
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("Next after Stop: %v, want io.EOF", err)
			}
			st := r.Stats()
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			ks, ok := r.KernelStats()
			if !ok || ks.Received < uint64(st.Packets) || ks.Dropped != 0 {
				t.Errorf("kernel stats %+v (ok %v), read %d packets", ks, ok, st.Packets)
			}

			// The pcapng copy holds the same packets.
			fr, err := NewReader(&saved, "saved.pcapng")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				seg, err := fr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
				if uint16(seg.TCP.SrcPort) != port && uint16(seg.TCP.DstPort) != port {
					t.Errorf("saved packet %d: ports %d -> %d", seg.Num, seg.TCP.SrcPort, seg.TCP.DstPort)
				}
			}
			if n != st.Packets {
				t.Errorf("pcapng holds %d packets, the capture read %d", n, st.Packets)
			}
		})
	}
}
