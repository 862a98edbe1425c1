// Package render writes dissected Kafka messages (model.Entry) for people and programs: wire
// diagrams, one-line summaries, JSON lines, the workshop page (html), Parquet files, statistics
// tables, and the layouts of message definitions. Nothing else in kdissect prints; render only
// writes, and the messages it writes are the model package's.
//
// A Renderer writes what the pipeline (package dissect) shows. A renderer may ask for more
// through optional interfaces, which the pipeline and kdissect's runner look for by name:
// StartSetter (relative times need the capture's first packet), FileStarter (the output of
// several capture files is told where each begins), ConnCloser (the renderer pairs
// messages itself) and Parallel (messages are written on several goroutines, by Encoders, and
// their bytes put in order). A new format implements those it needs; the others are never called.
package render

import (
	"time"

	"github.com/kdissect/kdissect/model"
)

// Renderer writes entries and notices as they come, in order. The optional interfaces below
// (StartSetter, FileStarter, ConnCloser) say what more a renderer asks to be told.
type Renderer interface {
	Message(e *model.Entry) error
	Notice(n *model.Notice) error
	// Close writes anything pending (totals) and flushes.
	Close() error
	// Flush writes out what has been buffered so far, so that a live capture shows each message
	// as it completes.
	Flush() error
}

// StartSetter is a Renderer that shows times relative to the start of the capture. The
// pipeline calls SetStart with the time of each packet it reads, before the messages that
// packet completes; only the first call counts, so the start is the capture's first packet,
// or, with several capture files, the earliest of their first packets, which kdissect tells it
// before reading any.
type StartSetter interface {
	Renderer
	SetStart(t time.Time)
}

// FileStarter is a Renderer whose output says which capture file each message comes from
// when several are read: kdissect calls File with each file's name before reading it (never
// for a single file). An error stops the run.
type FileStarter interface {
	Renderer
	File(name string) error
}

// ConnCloser is a Renderer that pairs messages itself (serve's display filters) and so must
// know when a connection ends: no response will come on it any more. The pipeline calls
// ConnClosed, with the connection's stream number, after the connection's last message.
type ConnCloser interface {
	Renderer
	ConnClosed(stream int) error
}

// Forgetter is a Renderer that keeps nothing of an entry once Message returns: what it shows
// is written out or copied. The pipeline may then use the entry's memory for a later message.
type Forgetter interface {
	Renderer
	ForgetsEntries()
}

// The renderers that ask for more, checked here so that a renamed method is an error rather
// than a silent loss.
var (
	_ StartSetter = (*Summary)(nil)
	_ Forgetter   = (*Summary)(nil)
	_ StartSetter = (*Diagram)(nil)
	_ FileStarter = (*Summary)(nil)
	_ FileStarter = (*Diagram)(nil)
	_ FileStarter = (*JSON)(nil)
	_ FileStarter = (*HTML)(nil)
	_ FileStarter = (*Parquet)(nil)
)

// Discard is the renderer of --format none: it shows nothing (statistics only).
type Discard struct{}

func (Discard) Message(*model.Entry) error { return nil }
func (Discard) Notice(*model.Notice) error { return nil }
func (Discard) Flush() error               { return nil }
func (Discard) Close() error               { return nil }
