package cli

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestFollowHeld: once the heap holds more than the base limit, the limit after a collection
// leaves room over what is held, rather than making the collector run at every allocation; and
// it comes back to the base once that is let go.
func TestFollowHeld(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const base = 32 << 20 // above what the test binary holds, and its room
	debug.SetMemoryLimit(base)
	stop := followHeld(base)
	defer stop()

	held := make([][]byte, 64) // 64 MiB, twice the base
	for i := range held {
		held[i] = make([]byte, 1<<20)
	}
	// The limit is set by a cleanup, which runs after a collection, on a goroutine of the
	// runtime's: collect until it has run, for at most a thousand collections.
	limit := func(want func(int64) bool) int64 {
		var l int64
		for range 1000 {
			runtime.GC()
			if l = debug.SetMemoryLimit(-1); want(l) {
				break
			}
			runtime.Gosched()
		}
		return l
	}
	if l := limit(func(l int64) bool { return l >= heldOverhead(64<<20) }); l < heldOverhead(64<<20) {
		t.Errorf("holding 64 MiB, the limit is %d MiB; want at least %d MiB", l>>20, heldOverhead(64<<20)>>20)
	}
	runtime.KeepAlive(held)
	held = nil
	if l := limit(func(l int64) bool { return l == base }); l != base {
		t.Errorf("holding nothing, the limit is %d MiB; want the base, %d MiB", l>>20, base>>20)
	}

	stop()
	debug.SetMemoryLimit(math.MaxInt64)
	runtime.GC()
	runtime.GC()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("after stop, a collection set the limit to %d MiB", l>>20)
	}
}

// TestStartProfiles: each profile asked for is written, in its format, once stop is called;
// one that cannot be created is an error naming its file, and none of the others is started.
func TestStartProfiles(t *testing.T) {
	dir := t.TempDir()
	p := Profiles{
		CPU:   filepath.Join(dir, "cpu.pprof"),
		Mem:   filepath.Join(dir, "mem.pprof"),
		Trace: filepath.Join(dir, "run.trace"),
	}
	var stderr bytes.Buffer
	stop, err := StartProfiles(p, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	sink := 0
	for i := range 1 << 16 {
		sink += len(make([]byte, i&1023))
	}
	_ = sink
	stop()
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	for _, c := range []struct {
		name, start string
	}{
		{p.CPU, "\x1f\x8b"}, // gzipped protocol buffer
		{p.Mem, "\x1f\x8b"},
		{p.Trace, "go 1."},
	} {
		b, err := os.ReadFile(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte(c.start)) {
			t.Errorf("%s starts %q; want %q", filepath.Base(c.name), b[:min(len(b), 8)], c.start)
		}
	}

	missing := filepath.Join(dir, "no", "such", "run.trace")
	if _, err := StartProfiles(Profiles{CPU: filepath.Join(dir, "cpu2.pprof"), Trace: missing}, &stderr); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a trace in a folder that does not exist: error %v; want one naming %s", err, missing)
	}
	// The CPU profile started first was stopped: another can start.
	stopCPU, err := StartCPUProfile(filepath.Join(dir, "cpu3.pprof"))
	if err != nil {
		t.Fatalf("after a failed start, the CPU profile is still running: %v", err)
	}
	stopCPU()
}
