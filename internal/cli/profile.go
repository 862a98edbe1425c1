package cli

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"sync/atomic"
)

// TuneGC sets the collector for what a run holds; GOGC and GOMEMLIMIT in the environment take
// precedence. Summaries and statistics (shallow) hold little (a few MiB of frames and shallow
// trees), so the heap may grow to three times that, up to a soft limit of 44 MiB: fewer
// collections, and a peak RSS under 64 MB (62 MB on the 200 MB benchmark capture; with 48 MiB,
// 66 MB for 8 collections instead of 11). Formats that write field trees hold frames and one
// records field at a time (codec.Codec.LazyRecords), but a big message makes much garbage
// quickly: a soft limit of 80 MiB keeps the heap near what they hold, where GOGC alone lets it double (on a capture
// whose largest message is 9 MB: 89 instead of 121 MiB peak RSS, the same CPU). Over the limit
// (a message larger than it), the runtime bounds the collector's share of the CPU. Shallow
// runs whose analyses read trees (keeps: codec.Codec.Keep) also hold the trees that wait for
// them, 10 to 20 MiB: a soft limit of 64 MiB leaves them the same room (on the 200 MB benchmark
// capture, half the collections, 75 instead of 61 MiB peak RSS). Tree formats whose messages
// are written on several goroutines (parallel: render.Parallel with several workers) hold the
// messages and bytes in flight between them, some 25 MiB on the benchmark captures: 64 MiB
// keeps their peak RSS under 96 MB (86 instead of 98 MB with 2 workers on the capture of 9 MB
// Fetch responses, 18 instead of 16 collections). A format that holds less with its trees
// says its own limit (render.Format.HeapLimit, limit here; 0 for none).
//
// A limit is the room for what a run holds while it holds little; a run that comes to hold
// more (many connections left open: some 40 MiB at 8192 of them) would collect over and over,
// close to the limit, for as long as it held it. So after each collection the limit follows
// what the heap holds (followHeld), and comes back down with it. stop ends that; the caller
// calls it when the run ends.
func TuneGC(shallow, keeps, parallel bool, limit int64) (stop func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	switch {
	case shallow && keeps:
		debug.SetGCPercent(200)
		limit = 64 << 20
	case shallow:
		debug.SetGCPercent(200)
		limit = 44 << 20
	case limit > 0:
	case parallel:
		limit = 64 << 20
	default:
		limit = 80 << 20
	}
	debug.SetMemoryLimit(limit)
	return followHeld(limit)
}

// heldOverhead is the room over what the heap holds that followHeld leaves to the next
// collection: half of it again, and a little more, as GOGC=50 would, where a limit at what
// is held would leave none.
func heldOverhead(live int64) int64 { return live + live/2 + 8<<20 }

// followHeld sets the soft memory limit, after each collection until stop, to the larger of
// base and heldOverhead of the heap the collection found live.
func followHeld(base int64) (stop func()) {
	m := &gcMark{base: base, live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	m.arm()
	return func() { m.stopped.Store(true) }
}

// gcMark learns of each collection from an object of its own that the collection frees: the
// runtime runs its cleanup after the collection, which reads what the heap holds, sets the
// limit, and leaves another such object.
type gcMark struct {
	base    int64
	live    []metrics.Sample
	stopped atomic.Bool
}

func (m *gcMark) arm() {
	// Big enough not to share a block with other small objects, which would keep it.
	runtime.AddCleanup(new([64]byte), (*gcMark).collected, m)
}

func (m *gcMark) collected() {
	if m.stopped.Load() {
		return
	}
	metrics.Read(m.live)
	if m.live[0].Value.Kind() == metrics.KindUint64 {
		debug.SetMemoryLimit(max(m.base, heldOverhead(int64(m.live[0].Value.Uint64()))))
	}
	m.arm()
}

// StartCPUProfile profiles the process into the named file until stop is called.
func StartCPUProfile(name string) (stop func(), err error) {
	return toFile(name, pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// toFile starts writing a profile of the process into the named file, created for it, with
// start; the stop it returns ends it with end and closes the file.
func toFile(name string, start func(io.Writer) error, end func()) (stop func(), err error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { end(); f.Close() }, nil
}

// StartHeapProfile samples allocations finely from now on; the write function it returns
// writes the heap profile (all allocations so far, and what is in use) to the named file.
func StartHeapProfile(name string) (write func() error) {
	runtime.MemProfileRate = 64 << 10
	return func() error {
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
}

// StartTrace writes a Go execution trace of the process into the named file until stop is
// called: where goroutines wait, and cores stand idle, which a CPU profile does not show.
func StartTrace(name string) (stop func(), err error) {
	return toFile(name, trace.Start, trace.Stop)
}

// Profiles names the files of the profiles of a run; "" for none.
type Profiles struct {
	CPU, Mem, Trace string
}

// StartProfiles starts the profiles asked for. stop ends them and writes the heap profile,
// telling stderr if it cannot.
func StartProfiles(p Profiles, stderr io.Writer) (stop func(), err error) {
	stopCPU, stopTrace := func() {}, func() {}
	if p.CPU != "" {
		if stopCPU, err = StartCPUProfile(p.CPU); err != nil {
			return nil, err
		}
	}
	if p.Trace != "" {
		if stopTrace, err = StartTrace(p.Trace); err != nil {
			stopCPU()
			return nil, err
		}
	}
	writeHeap := func() error { return nil }
	if p.Mem != "" {
		writeHeap = StartHeapProfile(p.Mem)
	}
	return func() {
		if err := writeHeap(); err != nil {
			fmt.Fprintf(stderr, "kdissect: %v\n", err)
		}
		stopTrace()
		stopCPU()
	}, nil
}
