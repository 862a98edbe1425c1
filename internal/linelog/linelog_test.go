package linelog

import (
	"io"
	"strings"
	"testing"
)

// TestLog reads lines until the reader ends, closes Ready at the marker's line only, and
// joins the lines for an error message.
func TestLog(t *testing.T) {
	tests := []struct {
		name, in, marker string
		ready            bool
		want             string
	}{
		{"marker", "tcpdump: verbose output suppressed\nlistening on lo, link-type EN10MB\n3 packets captured\n", "listening on", true,
			"tcpdump: verbose output suppressed; listening on lo, link-type EN10MB; 3 packets captured"},
		{"no marker", "tcpdump: lo: No such device exists\n", "listening on", false, "tcpdump: lo: No such device exists"},
		{"empty", "", "listening on", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(strings.NewReader(tt.in), tt.marker)
			<-l.Done()
			select {
			case <-l.Ready():
				if !tt.ready {
					t.Error("Ready closed without the marker")
				}
			default:
				if tt.ready {
					t.Error("Ready not closed after the marker")
				}
			}
			if got := l.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLogReadyBeforeEOF: Ready closes as soon as the marker's line is read, while the process
// still runs.
func TestLogReadyBeforeEOF(t *testing.T) {
	r, w := io.Pipe()
	l := New(r, "listening on")
	// A write to a pipe returns once it is read; the log reads the second line only after it
	// has handled the first.
	w.Write([]byte("listening on any\n"))
	w.Write([]byte("next\n"))
	select {
	case <-l.Ready():
	default:
		t.Error("Ready not closed after the marker's line was read")
	}
	select {
	case <-l.Done():
		t.Error("Done closed before the writer closed")
	default:
	}
	w.Close()
	<-l.Done()
	if got := l.Lines(); len(got) != 2 || got[0] != "listening on any" {
		t.Errorf("Lines() = %q", got)
	}
}
