//go:build linux || darwin || freebsd

package reassembly

import (
	"os"
	"syscall"
)

// spillMaps: frames over Options.SpillOver go to mapped temporary files here.
const spillMaps = true

func mapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmap(b []byte) error { return syscall.Munmap(b) }
