package cli

import (
	"math"
	"runtime"
	"runtime/debug"
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
