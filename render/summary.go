package render

import (
	"bufio"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/internal/inert"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/model"
)

// Summary writes one line per message, like tshark's default output: packet number, time (since
// the first packet unless TimeFormat says otherwise), stream, endpoints, direction, API and
// version, correlation id, then the client id (requests) or the request's packet and the latency
// (responses), the size and the message's facts. Every string is shown under package inert's
// rule; lines go out through an inert.Writer too, so a string appended as it is could at
// worst break a line, never drive the terminal.
type Summary struct {
	w     *bufio.Writer
	out   *inert.Writer // over w
	clock clock
	line  []byte // the line being built
	// facts are the facts a line shows (those of model.Facts with a Show), in the table's
	// order: looked at on every line, so gathered once.
	facts []shownFact
}

// shownFact is the part of a model.Fact that a summary line shows.
type shownFact struct {
	label string
	show  func(b []byte, f *codec.Facts) []byte
}

// NewSummary writes to w, with times as t says (TimeDefault: since the first packet).
func NewSummary(w io.Writer, t TimeFormat) *Summary {
	s := &Summary{w: bufio.NewWriterSize(w, 64<<10), clock: clock{format: t}}
	for _, f := range model.Facts() {
		if f.Show != nil {
			s.facts = append(s.facts, shownFact{f.Label, f.Show})
		}
	}
	s.out = inert.NewWriter(s.w)
	if t == TimeDefault {
		s.clock.format = TimeRel
	}
	return s
}

// ForgetsEntries says that a summary line copies what it shows of its entry (Forgetter).
func (*Summary) ForgetsEntries() {}

// SetStart sets the time that relative times count from (the capture's first packet), if it is
// not set yet.
func (s *Summary) SetStart(t time.Time) { s.clock.setStart(t) }

// Message writes one line, and a line per warning.
func (s *Summary) Message(e *model.Entry) error {
	b := s.head(s.line[:0], e.Frame, e.Time, e.Stream, e.Src, e.Dst)
	m := e.Msg
	if m.Response {
		b = append(b, "Response "...)
	} else {
		b = append(b, "Request  "...)
	}
	mark := len(b)
	b = inert.Append(b, m.APIName)
	if m.APIKey >= 0 {
		b = append(b, " v"...)
		b = strconv.AppendInt(b, int64(m.Version), 10)
	}
	b = padRight(b, mark, 28)
	b = append(b, " corr "...)
	mark = len(b)
	b = strconv.AppendInt(b, int64(m.CorrelationID), 10)
	b = padRight(b, mark, 6)
	switch {
	case !m.Response:
		if m.ClientID != nil {
			b = inert.AppendQuote(append(b, " client "...), *m.ClientID)
		}
		if e.NoResponse {
			b = append(b, " (acks=0: no response)"...)
		}
	case e.RequestFrame > 0:
		b = append(b, " answers #"...)
		b = strconv.AppendInt(b, int64(e.RequestFrame), 10)
		b = appendLatency(append(b, " after "...), e.Latency)
	default:
		b = append(b, " request not captured"...)
	}
	b = append(b, "  "...)
	b = strconv.AppendInt(b, int64(m.Size), 10)
	b = append(b, " bytes"...)
	if e.TLS != "" {
		b = inert.Append(append(b, "  "...), e.TLS)
	}
	if e.Facts != nil {
		mark := len(b)
		if b = appendFacts(append(b, "  "...), s.facts, e.Facts); len(b) == mark+2 {
			b = b[:mark] // no facts
		}
	}
	if e.Session != nil {
		b = appendSession(append(b, "  "...), e.Session, false)
	}
	if n := len(m.Warnings); n > 0 {
		b = append(b, "  ["...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = plural.AppendNoun(append(b, ' '), n, "warning")
		b = append(b, ']')
	}
	b = append(b, '\n')
	for _, w := range m.Warnings {
		b = append(inert.Append(append(b, "       ! "...), w.String()), '\n')
	}
	return s.write(b)
}

// head appends what every line starts with: the packet, the time, the stream and the
// endpoints.
func (s *Summary) head(b []byte, frame int, t time.Time, stream int, src, dst string) []byte {
	mark := len(b)
	b = strconv.AppendInt(b, int64(frame), 10)
	b = padLeft(b, mark, 6)
	b = append(b, ' ')
	mark = len(b)
	b = s.clock.appendTime(b, t, false)
	b = padLeft(b, mark, 11)
	b = append(b, ' ')
	mark = len(b)
	b = strconv.AppendInt(b, int64(stream), 10)
	b = padLeft(b, mark, 3)
	b = inert.Append(append(inert.Append(append(b, ' '), src), " -> "...), dst)
	return append(b, ' ')
}

// write writes a line and keeps its buffer for the next.
func (s *Summary) write(b []byte) error {
	s.line = b
	_, err := s.out.Write(b)
	return err
}

// padLeft right-aligns b[mark:] in width bytes, as fmt's %6d does.
func padLeft(b []byte, mark, width int) []byte {
	n := width - (len(b) - mark)
	if n <= 0 {
		return b
	}
	b = append(b, spaces[:n]...)
	copy(b[mark+n:], b[mark:len(b)-n])
	copy(b[mark:mark+n], spaces[:n])
	return b
}

// padRight left-aligns b[mark:] in width characters, as fmt's %-28s does.
func padRight(b []byte, mark, width int) []byte {
	if n := width - utf8.RuneCount(b[mark:]); n > 0 {
		b = append(b, spaces[:n]...)
	}
	return b
}

const spaces = "                                "

// Notice writes a line marked with '!'.
func (s *Summary) Notice(n *model.Notice) error {
	b := s.head(s.line[:0], n.Frame, n.Time, n.Stream, n.Src, n.Dst)
	b = append(inert.Append(append(b, "! "...), n.Text), '\n')
	return s.write(b)
}

// File writes a header line saying that the lines that follow come from the named capture
// file. kdissect calls it when it reads several files.
func (s *Summary) File(name string) error {
	s.clock.newFile()
	return s.write(fileHeader(s.line[:0], name))
}

// fileHeader is the line before the output of each of several capture files, as head(1) and
// tail(1) mark theirs.
func fileHeader(b []byte, name string) []byte {
	return append(inert.Append(append(b, "==> "...), name), " <==\n"...)
}

// Close flushes.
func (s *Summary) Close() error { return s.w.Flush() }

// Flush writes out the lines buffered so far.
func (s *Summary) Flush() error { return s.w.Flush() }

// FormatLatency shows a duration in milliseconds with microsecond precision.
func FormatLatency(d time.Duration) string { return string(appendLatency(nil, d)) }

// appendLatency appends d in milliseconds with 3 decimals, as strconv.AppendFloat(b,
// float64(d.Microseconds())/1000, 'f', 3, 64) does: that float is within far less than half
// a microsecond of the microseconds it is made of, under 10^15 of them, so they are written
// as they are.
func appendLatency(b []byte, d time.Duration) []byte {
	us := d.Microseconds()
	switch {
	case us >= 1e15 || us <= -1e15:
		b = strconv.AppendFloat(b, float64(us)/1000, 'f', 3, 64)
	case us < 0:
		b = appendFixed(append(b, '-'), -us, 1e3)
	default:
		b = appendFixed(b, us, 1e3)
	}
	return append(b, " ms"...)
}

// appendFacts appends to b the short account of a message's facts that a summary line ends
// with: the part of each fact of model.Facts that a summary shows (facts), in the table's
// order.
func appendFacts(b []byte, facts []shownFact, f *codec.Facts) []byte {
	start := len(b)
	for _, fact := range facts {
		mark := len(b)
		if len(b) > start {
			b = append(b, "  "...)
		}
		b = append(b, fact.label...)
		label := len(b)
		if b = fact.show(b, f); len(b) == label {
			b = b[:mark] // the message does not have the fact
		}
	}
	return b
}
