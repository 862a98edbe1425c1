package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/internal/inert"
)

// findingFrames is how many of a finding's frames the text names.
const findingFrames = 5

// FindingsWidth is the width the text of findings is wrapped to: a terminal's narrowest.
const FindingsWidth = 80

// FindingsTable writes findings (worst first, as doctor.Doctor.Findings orders them) as text
// for a terminal, kubectl describe's way: per finding, its severity, id and title, then under
// it the frames that show it, what it means and what to check, wrapped to FindingsWidth. A
// finding whose meaning and advice were said above it (another producer's retries) has its
// frames only.
func FindingsTable(w io.Writer, fs []doctor.Finding) error {
	if len(fs) == 0 {
		_, err := fmt.Fprintln(w, "no findings")
		return err
	}
	var b strings.Builder
	said := map[string]bool{}
	for i, f := range fs {
		if i > 0 {
			b.WriteByte('\n')
		}
		head := f.Severity.String() + "  " + f.ID + "  "
		wrap(&b, head, inert.String(f.Title), len(head))
		wrap(&b, "  frames  ", framesCell(f.Evidence), 10)
		key := f.ID + "\x00" + f.Why + "\x00" + f.Advice
		if said[key] {
			continue
		}
		said[key] = true
		wrap(&b, "  why     ", f.Why, 10)
		wrap(&b, "  advice  ", f.Advice, 10)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap writes text after head, its words wrapped to FindingsWidth, the lines after the first
// indented by indent columns (head's width, or less when head is too wide to leave room).
func wrap(b *strings.Builder, head, text string, indent int) {
	indent = min(indent, FindingsWidth/2)
	b.WriteString(head)
	col := twwidth.Width(head)
	for i, word := range strings.Fields(text) {
		n := twwidth.Width(word)
		switch {
		case i == 0:
		case col+1+n > FindingsWidth:
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += n
	}
	b.WriteByte('\n')
}

// framesCell names a finding's first frames, and how many more there are, with its
// connections: "12, 15 (streams 0, 3)"; with several files, the file before its frames:
// "a.pcap 12, 15; b.pcap 3 (streams 0, 3, 9)".
func framesCell(ev doctor.Evidence) string {
	var b strings.Builder
	for i, f := range ev.Frames {
		if i == findingFrames {
			fmt.Fprintf(&b, ", +%d", len(ev.Frames)-i)
			break
		}
		switch {
		case ev.Files != nil && (i == 0 || ev.Files[i] != ev.Files[i-1]):
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(inert.String(ev.Files[i]) + " ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(f))
	}
	s := b.String()
	if len(ev.Streams) > 0 {
		var streams []string
		for _, st := range ev.Streams {
			streams = append(streams, strconv.Itoa(st))
		}
		name := "stream"
		if len(streams) > 1 {
			name = "streams"
		}
		s += " (" + name + " " + strings.Join(streams, ", ") + ")"
	}
	return s
}

type findingJSON struct {
	Kind     string       `json:"kind"`
	ID       string       `json:"id"`
	Severity string       `json:"severity"`
	Title    string       `json:"title"`
	Evidence evidenceJSON `json:"evidence"`
	Why      string       `json:"why"`
	Advice   string       `json:"advice"`
}

type evidenceJSON struct {
	Frames []int `json:"frames"`
	// Files, with several files, names each frame's file (as a message line's "file").
	Files   []string `json:"files,omitempty"`
	Streams []int    `json:"streams"`
	Count   int      `json:"count"`
	First   string   `json:"first,omitempty"`
	Last    string   `json:"last,omitempty"`
}

// FindingsJSON writes findings as JSON lines, one {"kind": "finding", ...} object each.
func FindingsJSON(w io.Writer, fs []doctor.Finding) error {
	enc := json.NewEncoder(&inertJSON{w: w})
	enc.SetEscapeHTML(false)
	for _, f := range fs {
		if err := enc.Encode(findingObject(f)); err != nil {
			return err
		}
	}
	return nil
}

// findingObject is f as the JSON lines write it.
func findingObject(f doctor.Finding) findingJSON {
	ev := evidenceJSON{Frames: f.Evidence.Frames, Files: f.Evidence.Files, Streams: f.Evidence.Streams, Count: f.Evidence.Count,
		First: jsonTime(f.Evidence.First), Last: jsonTime(f.Evidence.Last)}
	if ev.Frames == nil {
		ev.Frames = []int{}
	}
	if ev.Streams == nil {
		ev.Streams = []int{}
	}
	return findingJSON{Kind: "finding", ID: f.ID, Severity: f.Severity.String(), Title: f.Title,
		Evidence: ev, Why: f.Why, Advice: f.Advice}
}

// A FindingsPage is an output that shows the doctor's findings on its page (the workshop
// page's findings panel) rather than after it: it is given them before it is closed.
type FindingsPage interface {
	Renderer
	Findings(fs []doctor.Finding)
}

// FindingsData encodes findings for the workshop page's script: a JSON array of the JSON
// lines' objects, safe inside a script element (json.Marshal escapes <, > and &, U+2028 and
// U+2029). Package serve sends it with an upload's messages too.
func FindingsData(fs []doctor.Finding) []byte {
	objs := make([]findingJSON, len(fs))
	for i, f := range fs {
		objs[i] = findingObject(f)
	}
	b, err := json.Marshal(objs)
	if err != nil {
		return []byte("[]") // strings and numbers only: it cannot fail
	}
	return b
}

// writeFindingsData writes the page's #kd-findings element: the findings of a page the doctor
// read (data, of FindingsData), none for a page it did not (nil), whose panel is then hidden.
func writeFindingsData(w io.Writer, data []byte) error {
	if data == nil {
		return nil
	}
	_, err := fmt.Fprintf(w, "<script type=\"application/json\" id=\"kd-findings\">%s</script>\n", data)
	return err
}

// jsonTime is t as the JSON lines write times, "" for none.
func jsonTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
