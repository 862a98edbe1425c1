//go:build linux

package flight

import "golang.org/x/sys/unix"

// allocate maps size bytes of anonymous memory: pages become resident as they are written.
func allocate(size int) []byte {
	if size == 0 {
		return nil
	}
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]byte, size) // on the heap, then
	}
	return b
}

// release unmaps what allocate mapped; a buffer from the heap is left to the collector.
func release(b []byte) {
	if len(b) > 0 {
		_ = unix.Munmap(b) // EINVAL for a buffer from the heap: nothing to do
	}
}
