package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kdissect/kdissect/internal/doctor"
)

// findingFrames is how many of a finding's frames its row in the text table names.
const findingFrames = 5

// FindingsTable writes findings (worst first, as doctor.Doctor.Findings orders them) as a
// table, then what each kind found means and what to do about it.
func FindingsTable(w io.Writer, fs []doctor.Finding) error {
	if len(fs) == 0 {
		_, err := fmt.Fprintln(w, "no findings")
		return err
	}
	t := newTable(w, 4, false)
	t.Header("severity", "id", "finding", "frames")
	for _, f := range fs {
		if err := t.Append(f.Severity.String(), f.ID, f.Title, framesCell(f.Evidence)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	var b strings.Builder
	said := map[string]bool{}
	for _, f := range fs {
		key := f.ID + "\x00" + f.Why + "\x00" + f.Advice
		if said[key] {
			continue
		}
		said[key] = true
		fmt.Fprintf(&b, "\n%s: %s\n  advice: %s\n", f.ID, f.Why, f.Advice)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// framesCell names a finding's first frames, and how many more there are, with its
// connections: "12, 15 (streams 0, 3)".
func framesCell(ev doctor.Evidence) string {
	var parts []string
	for i, f := range ev.Frames {
		if i == findingFrames {
			parts = append(parts, fmt.Sprintf("+%d", len(ev.Frames)-i))
			break
		}
		parts = append(parts, strconv.Itoa(f))
	}
	s := strings.Join(parts, ", ")
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
	Frames  []int  `json:"frames"`
	Streams []int  `json:"streams"`
	Count   int    `json:"count"`
	First   string `json:"first,omitempty"`
	Last    string `json:"last,omitempty"`
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
	ev := evidenceJSON{Frames: f.Evidence.Frames, Streams: f.Evidence.Streams, Count: f.Evidence.Count,
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
