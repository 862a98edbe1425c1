package capture

import "io"

// countingReader counts the bytes read through it; buf is the buffer that reads from it.
type countingReader struct {
	r   io.Reader
	n   int64
	buf interface{ Buffered() int }
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Progress reports how far the Reader has come through its file: the bytes read from it so far
// (of a gzipped file, the compressed bytes the decompressor has taken), and the file's size. total is 0
// when the size is unknown (a stream that is not a regular file) and for gzipped files; both are
// 0 for live captures. It must be called from the goroutine that calls Next.
func (r *Reader) Progress() (read, total int64) {
	if r.counter == nil {
		return 0, 0
	}
	return r.counter.n - int64(r.counter.buf.Buffered()), r.total
}
