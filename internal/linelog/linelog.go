// Package linelog collects what a helper process (tcpdump, dumpcap) prints on stderr, line by
// line, and says when a line holding a marker such as "listening on" has appeared: the
// commands that drive a capture tool (kbench gen, pcaps/gen) wait for it before sending
// traffic, and quote the lines when the tool fails.
package linelog

import (
	"bufio"
	"io"
	"strings"
	"sync"
)

// Log is the lines read so far from one reader.
type Log struct {
	ready, eof chan struct{}
	mu         sync.Mutex
	lines      []string
}

// New reads r to its end in a goroutine of its own. Ready is closed when a line containing
// marker is read, Done when r is exhausted.
func New(r io.Reader, marker string) *Log {
	l := &Log{ready: make(chan struct{}), eof: make(chan struct{})}
	go func() {
		defer close(l.eof)
		sc := bufio.NewScanner(r)
		seen := false
		for sc.Scan() {
			l.mu.Lock()
			l.lines = append(l.lines, sc.Text())
			l.mu.Unlock()
			if !seen && strings.Contains(sc.Text(), marker) {
				seen = true
				close(l.ready)
			}
		}
	}()
	return l
}

// Ready is closed once a line holding the marker has been read.
func (l *Log) Ready() <-chan struct{} { return l.ready }

// Done is closed once the reader is exhausted: a process's stderr pipe must be read to its
// end before the process is waited for, which closes the pipe.
func (l *Log) Done() <-chan struct{} { return l.eof }

// Lines returns a copy of the lines read so far.
func (l *Log) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// String returns the lines read so far, joined by "; " to fit in one error message.
func (l *Log) String() string { return strings.Join(l.Lines(), "; ") }
