package render

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kdissect/kdissect/codec"
)

// Summary writes one line per message, like tshark's default output: packet number, time since
// the first packet, endpoints, direction, API and version, correlation id, then the client id
// (requests) or the request's packet and the latency (responses), and the size.
type Summary struct {
	w     *bufio.Writer
	start time.Time
}

// NewSummary writes to w; times are shown relative to start.
func NewSummary(w io.Writer, start time.Time) *Summary {
	return &Summary{w: bufio.NewWriter(w), start: start}
}

// SetStart sets the time that relative times count from (the capture's first packet), if it is
// not set yet.
func (s *Summary) SetStart(t time.Time) {
	if s.start.IsZero() {
		s.start = t
	}
}

func (s *Summary) rel(t time.Time) float64 {
	if s.start.IsZero() {
		s.start = t
	}
	return t.Sub(s.start).Seconds()
}

// Message writes one line.
func (s *Summary) Message(e *Entry) error {
	fmt.Fprintf(s.w, "%6d %11.6f %s -> %s ", e.Frame, s.rel(e.Time), e.Src, e.Dst)
	if e.Msg == nil {
		fmt.Fprintf(s.w, "SASL token  %d bytes", len(e.SASLToken)+4)
		if e.TLS != "" {
			fmt.Fprintf(s.w, "  %s", e.TLS)
		}
		fmt.Fprintln(s.w)
		return nil
	}
	m := e.Msg
	kind := "Request "
	if m.Response {
		kind = "Response"
	}
	api := m.APIName
	if m.APIKey >= 0 {
		api = fmt.Sprintf("%s v%d", m.APIName, m.Version)
	}
	fmt.Fprintf(s.w, "%s %-28s corr %-6d", kind, api, m.CorrelationID)
	switch {
	case !m.Response:
		if m.ClientID != nil {
			fmt.Fprintf(s.w, " client %q", *m.ClientID)
		}
		if e.NoResponse {
			fmt.Fprint(s.w, " (acks=0: no response)")
		}
	case e.RequestFrame > 0:
		fmt.Fprintf(s.w, " answers #%d after %s", e.RequestFrame, FormatLatency(e.Latency))
	default:
		fmt.Fprint(s.w, " request not captured")
	}
	fmt.Fprintf(s.w, "  %d bytes", m.Size)
	if e.TLS != "" {
		fmt.Fprintf(s.w, "  %s", e.TLS)
	}
	if e.Facts != nil {
		if f := FactsText(e.Facts); f != "" {
			fmt.Fprintf(s.w, "  %s", f)
		}
	}
	if n := len(m.Warnings) + len(e.Warnings); n > 0 {
		fmt.Fprintf(s.w, "  [%d warning%s]", n, plural(n))
	}
	fmt.Fprintln(s.w)
	for _, w := range e.Warnings {
		fmt.Fprintf(s.w, "       ! %s\n", w)
	}
	for _, w := range m.Warnings {
		fmt.Fprintf(s.w, "       ! %s\n", w)
	}
	return nil
}

// Notice writes a line marked with '!'.
func (s *Summary) Notice(n *Notice) error {
	_, err := fmt.Fprintf(s.w, "%6d %11.6f %s -> %s ! %s\n", n.Frame, s.rel(n.Time), n.Src, n.Dst, n.Text)
	return err
}

// Close flushes.
func (s *Summary) Close() error { return s.w.Flush() }

// Flush writes out the lines buffered so far.
func (s *Summary) Flush() error { return s.w.Flush() }

// FormatLatency shows a duration in milliseconds with microsecond precision.
func FormatLatency(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// FactsText is the short account of a message's facts that a summary line ends with: topics
// and partitions, record counts and codecs, group and member, errors.
func FactsText(f *codec.Facts) string {
	var parts []string
	var topics []string
	for _, name := range f.Topics {
		if ps := f.Partitions[name]; len(ps) > 0 {
			nums := make([]string, len(ps))
			for i, p := range ps {
				nums[i] = strconv.Itoa(int(p))
			}
			name += "[" + strings.Join(nums, ",") + "]"
		}
		topics = append(topics, name)
	}
	for _, id := range f.TopicIDs {
		if ps, ok := f.Partitions[id.String()]; ok && len(ps) > 0 {
			topics = append(topics, "id:"+id.String())
		}
	}
	if len(topics) > 3 {
		topics = append(topics[:3], fmt.Sprintf("+%d more", len(topics)-3))
	}
	if len(topics) > 0 {
		parts = append(parts, "topics "+strings.Join(topics, " "))
	}
	records, sets := 0, 0
	var codecs []string
	for _, r := range f.RecordSets {
		records += r.Records
		sets++
		for _, c := range r.Codecs {
			if !slices.Contains(codecs, c) {
				codecs = append(codecs, c)
			}
		}
	}
	if sets > 0 {
		s := fmt.Sprintf("%d record%s", records, plural(records))
		if len(codecs) > 0 {
			s += " (" + strings.Join(codecs, ",") + ")"
		}
		parts = append(parts, s)
	}
	if len(f.Groups) > 0 {
		parts = append(parts, "group "+strings.Join(f.Groups, ","))
	}
	if len(f.Members) > 0 {
		parts = append(parts, "member "+f.Members[0])
	}
	if len(f.Errors) > 0 {
		names := make([]string, len(f.Errors))
		for i, c := range f.Errors {
			names[i] = codec.ErrorName(c)
		}
		parts = append(parts, "errors "+strings.Join(names, ","))
	}
	return strings.Join(parts, "  ")
}
