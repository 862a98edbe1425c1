// Package rotate owns rotating output: a directory of files, one per period of a long capture,
// named by the period's start and the host ("kafka-HOST-20261201T140000Z.parquet"), written
// under a temporary name and renamed when complete, so that a reader listing the directory
// never sees a partial file, and the oldest deleted beyond a count or a total size. A Renderer
// rotates a format's output, Packets the captured packets (pcapng); both rotate at the same
// moments (boundaries of the period, counted from midnight UTC), when a file reaches a size, and
// when asked (SIGHUP). A file that cannot be written (a full disk) is left out, said, and the
// next period tries again: the capture goes on.
package rotate

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Dir is a directory of period files: where they go and what they are called, and how many
// are kept.
type Dir struct {
	// Path is the directory; it must exist.
	Path string
	// Prefix and Ext surround the period's start in a file's name ("kafka-web1-", ".parquet").
	Prefix, Ext string
	// Keep is how many files are kept, KeepSize how many bytes they may take together (0: no
	// limit); the oldest go first, the newest is always kept.
	Keep     int
	KeepSize int64
	// last is the stamp and sequence number of the last name given: a period that starts in
	// the same second comes after it, even when older files have been deleted.
	last struct {
		stamp string
		seq   int
	}
}

// Prefix returns the start of the names of files written on host: "kafka-HOST-", the host
// name made safe for a file name.
func Prefix(host string) string {
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			return r
		}
		return '_'
	}, host)
	if safe == "" {
		safe = "localhost"
	}
	return "kafka-" + safe + "-"
}

// stamp is how a period's start is written in a file name: UTC, to the second, sortable.
const stamp = "20060102T150405Z"

// name returns the name of the file of a period that starts at start, one that does not
// exist yet (a period that starts in the same second as the last one gets a suffix).
func (d *Dir) name(start time.Time) string {
	s := start.UTC().Format(stamp)
	seq := 0
	if s == d.last.stamp {
		seq = d.last.seq + 1
	}
	for exists(filepath.Join(d.Path, d.nameOf(s, seq))) {
		seq++
	}
	d.last.stamp, d.last.seq = s, seq
	return d.nameOf(s, seq)
}

// nameOf names the file of the seq'th period (from 0) that starts in the second s. Later
// periods of the same second get "_001", "_002", ...: '_' sorts after the '.' of the first
// one's extension and the number is padded, so that the names sort in the periods' order
// (ls, a shell's glob, cat kafka-*.jsonl).
func (d *Dir) nameOf(s string, seq int) string {
	if seq == 0 {
		return d.Prefix + s + d.Ext
	}
	return fmt.Sprintf("%s%s_%03d%s", d.Prefix, s, seq, d.Ext)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// create starts the file of a period that starts at start, under its temporary name.
func (d *Dir) create(start time.Time) (*file, error) {
	name := filepath.Join(d.Path, d.name(start))
	tmp := filepath.Join(d.Path, "."+filepath.Base(name)+".part")
	f, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	return &file{f: f, tmp: tmp, name: name}, nil
}

// prune deletes the oldest files beyond Keep and KeepSize.
func (d *Dir) prune() error {
	if d.Keep <= 0 && d.KeepSize <= 0 {
		return nil
	}
	files, err := d.Files()
	if err != nil {
		return err
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	for i, f := range files[:max(len(files)-1, 0)] {
		if (d.Keep <= 0 || len(files)-i <= d.Keep) && (d.KeepSize <= 0 || total <= d.KeepSize) {
			break
		}
		if err := os.Remove(filepath.Join(d.Path, f.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		total -= f.Size
	}
	return nil
}

// File is one complete period file.
type File struct {
	Name string
	Size int64
	// Start is the start of the file's period, to the second, as its name says.
	Start time.Time
	seq   int
}

// Files lists the directory's complete period files, oldest first (by the start their names
// give: the directory may hold files copied from elsewhere).
func (d *Dir) Files() ([]File, error) {
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		return nil, err
	}
	var files []File
	for _, e := range entries {
		n := e.Name()
		start, seq, ok := d.parse(n)
		if !e.Type().IsRegular() || !ok {
			continue
		}
		info, err := e.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted meanwhile
			}
			return nil, err
		}
		files = append(files, File{Name: n, Size: info.Size(), Start: start, seq: seq})
	}
	slices.SortFunc(files, func(a, b File) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.seq, b.seq))
	})
	return files, nil
}

// parse reads the start of a period and its sequence number within the second (0 for the
// first) from a file name; ok is false for a name that is not one of the directory's files.
func (d *Dir) parse(name string) (start time.Time, seq int, ok bool) {
	rest, ok := strings.CutPrefix(name, d.Prefix)
	if !ok {
		return start, 0, false
	}
	if rest, ok = strings.CutSuffix(rest, d.Ext); !ok || len(rest) < len(stamp) {
		return start, 0, false
	}
	start, err := time.Parse(stamp, rest[:len(stamp)])
	if err != nil {
		return start, 0, false
	}
	if suffix := rest[len(stamp):]; suffix != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(suffix, "_"))
		if err != nil || !strings.HasPrefix(suffix, "_") || n <= 0 {
			return start, 0, false
		}
		seq = n
	}
	return start, seq, true
}

// file is the file of the current period: it counts what is written, and keeps the first
// error, after which it writes nothing more.
type file struct {
	f         *os.File
	tmp, name string
	mu        sync.Mutex
	n         int64
	err       error
}

// Write writes to the file; it may be called from the goroutines of a format's writer too.
func (f *file) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.f.Write(p)
	f.n += int64(n)
	f.err = err
	return n, err
}

// state returns how much has been written, and the first error.
func (f *file) state() (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n, f.err
}

// commit closes the file and gives it its name; after an error, it removes it instead.
func (f *file) commit() error {
	_, err := f.state()
	if err == nil {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp, f.name)
	}
	if err != nil {
		os.Remove(f.tmp)
		return fmt.Errorf("%s: %w", f.name, err)
	}
	return nil
}

// abort closes and removes the file.
func (f *file) abort() {
	f.f.Close()
	os.Remove(f.tmp)
}

// Write writes a file of its own, named by start, as the period files are: under a temporary
// name, renamed once write has returned without error, removed otherwise. It returns the
// file's path.
func (d *Dir) Write(start time.Time, write func(w io.Writer) error) (string, error) {
	f, err := d.create(start)
	if err != nil {
		return "", err
	}
	if err := write(f); err != nil {
		f.abort()
		return "", fmt.Errorf("%s: %w", f.name, err)
	}
	return f.name, f.commit()
}
