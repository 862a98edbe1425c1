package render

import (
	"bufio"
	"io"
	"slices"
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
}

// NewSummary writes to w, with times as t says (TimeDefault: since the first packet).
func NewSummary(w io.Writer, t TimeFormat) *Summary {
	s := &Summary{w: bufio.NewWriter(w), clock: clock{format: t}}
	s.out = inert.NewWriter(s.w)
	if t == TimeDefault {
		s.clock.format = TimeRel
	}
	return s
}

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
		if b = appendFacts(append(b, "  "...), e.Facts); len(b) == mark+2 {
			b = b[:mark] // no facts
		}
	}
	if e.Session != nil {
		b = appendSession(append(b, "  "...), e.Session, false)
	}
	if n := len(m.Warnings); n > 0 {
		b = append(b, "  ["...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(append(b, ' '), plural.Noun(n, "warning")...)
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

func appendLatency(b []byte, d time.Duration) []byte {
	return append(strconv.AppendFloat(b, float64(d.Microseconds())/1000, 'f', 3, 64), " ms"...)
}

// appendFacts appends to b the short account of a message's facts that a summary line ends
// with: topics and partitions, record counts and codecs, group and member, errors.
func appendFacts(b []byte, f *codec.Facts) []byte {
	start := len(b)
	part := func(b []byte, label string) []byte {
		if len(b) > start {
			b = append(b, "  "...)
		}
		return append(b, label...)
	}
	// Topics by name, then topic ids that name partitions; three at most.
	// Topic ids are looked up in Partitions without making strings of them.
	var idKey [24]byte
	total := len(f.Topics)
	for _, id := range f.TopicIDs {
		if k, _ := id.AppendText(idKey[:0]); len(f.Partitions[string(k)]) > 0 {
			total++
		}
	}
	if total > 0 {
		b = part(b, "topics ")
		shown := 0
		next := func(b []byte) []byte {
			if shown++; shown > 1 {
				b = append(b, ' ')
			}
			return b
		}
		for _, name := range f.Topics {
			if shown == 3 {
				break
			}
			b = inert.Append(next(b), name)
			if ps := f.Partitions[name]; len(ps) > 0 {
				b = append(b, '[')
				for i, p := range ps {
					if i > 0 {
						b = append(b, ',')
					}
					b = strconv.AppendInt(b, int64(p), 10)
				}
				b = append(b, ']')
			}
		}
		for _, id := range f.TopicIDs {
			if shown == 3 {
				break
			}
			if k, _ := id.AppendText(idKey[:0]); len(f.Partitions[string(k)]) > 0 {
				b = append(append(next(b), "id:"...), k...)
			}
		}
		if total > 3 {
			b = strconv.AppendInt(append(b, " +"...), int64(total-3), 10)
			b = append(b, " more"...)
		}
	}
	if len(f.RecordSets) > 0 {
		records, control := 0, 0
		var codecs []string
		for _, r := range f.RecordSets {
			records += r.Records
			control += r.Control
			for _, c := range r.Codecs {
				if !slices.Contains(codecs, c) {
					codecs = append(codecs, c)
				}
			}
		}
		b = part(b, "")
		if control > 0 {
			// "2 data + 2 control records": transaction markers are not data.
			b = strconv.AppendInt(b, int64(records-control), 10)
			b = strconv.AppendInt(append(b, " data + "...), int64(control), 10)
			b = append(b, " control"...)
		} else {
			b = strconv.AppendInt(b, int64(records), 10)
		}
		b = append(append(b, ' '), plural.Noun(records, "record")...)
		for i, c := range codecs {
			if i == 0 {
				b = append(b, " ("...)
			} else {
				b = append(b, ',')
			}
			b = inert.Append(b, c)
			if i == len(codecs)-1 {
				b = append(b, ')')
			}
		}
	}
	if len(f.Groups) > 0 {
		b = part(b, "group ")
		for i, g := range f.Groups {
			if i > 0 {
				b = append(b, ',')
			}
			b = inert.Append(b, g)
		}
	}
	if len(f.Members) > 0 {
		b = inert.Append(part(b, "member "), f.Members[0])
	}
	if f.Txn != "" {
		b = inert.Append(part(b, "txn "), f.Txn)
	}
	for i, c := range f.Coordinators {
		if i == 0 {
			b = part(b, "coordinator ")
		} else {
			b = append(b, ", "...)
		}
		if c.Key != "" {
			b = append(inert.Append(b, c.Key), ": "...)
		}
		if c.ErrorCode != 0 {
			b = append(b, codec.ErrorName(c.ErrorCode)...)
			continue
		}
		b = strconv.AppendInt(append(b, "node "...), int64(c.NodeID), 10)
		b = inert.Append(append(b, ' '), c.HostPort())
	}
	if f.SASLMechanism != "" {
		b = inert.Append(part(b, "mechanism "), f.SASLMechanism)
	}
	if f.SASLUser != "" {
		b = inert.AppendQuote(part(b, "user "), f.SASLUser)
	}
	if len(f.Errors) > 0 {
		b = part(b, "errors ")
		for i, c := range f.Errors {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, codec.ErrorName(c)...)
		}
	}
	return b
}
