//go:build !linux

package reassembly

// evict leaves the pages be: the syscall package has no madvise here, and the kernel takes
// clean pages of a mapped file back when it needs the memory. (Where files are not mapped,
// spillMaps is false and nothing is evicted.)
func evict([]byte) {}
