// Package render writes dissected Kafka messages (model.Entry) for people and programs: wire
// diagrams, one-line summaries, JSON lines, the workshop page (html), Parquet files, statistics
// tables, and the layouts of message definitions. Nothing else in kdissect prints; render only
// writes, and the messages it writes are the model package's.
package render

import "github.com/kdissect/kdissect/model"

// Renderer writes entries and notices as they come, in order.
type Renderer interface {
	Message(e *model.Entry) error
	Notice(n *model.Notice) error
	// Close writes anything pending (totals) and flushes.
	Close() error
	// Flush writes out what has been buffered so far, so that a live capture shows each message
	// as it completes.
	Flush() error
}

// ConnCloser is a Renderer that pairs messages itself (serve's display filters) and so must
// know when a connection ends: no response will come on it any more. The pipeline calls
// ConnClosed, with the connection's stream number, after the connection's last message.
type ConnCloser interface {
	Renderer
	ConnClosed(stream int) error
}

// Discard is the renderer of --format none: it shows nothing (statistics only).
type Discard struct{}

func (Discard) Message(*model.Entry) error { return nil }
func (Discard) Notice(*model.Notice) error { return nil }
func (Discard) Flush() error               { return nil }
func (Discard) Close() error               { return nil }
