package reassembly

import "syscall"

// evict drops the pages of b from the process: a read-only shared mapping of a file reads
// them again from the file.
func evict(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }
