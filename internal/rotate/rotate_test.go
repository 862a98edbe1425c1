package rotate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// lines is a renderer that writes a line per entry ("frame N") and a last line at Close, so
// that a file cut short shows; failAt makes the message of that frame fail.
type lines struct {
	w      io.Writer
	failAt int
}

func (l *lines) Message(e *model.Entry) error {
	if e.Frame == l.failAt {
		return errors.New("no space left on device")
	}
	_, err := fmt.Fprintf(l.w, "frame %d\n", e.Frame)
	return err
}
func (l *lines) Notice(*model.Notice) error { return nil }
func (l *lines) Flush() error               { return nil }
func (l *lines) Close() error {
	_, err := fmt.Fprintln(l.w, "end")
	return err
}

// run writes the frames, rotating after each frame of rotateAfter, and returns the files
// left, oldest first, with their contents, and what was said.
func run(t *testing.T, d *Dir, p Policy, frames []int, rotateAfter []int, failAt int) (names, contents, warned []string) {
	t.Helper()
	// The names of a test's files differ by their suffix only: made within a second.
	r := newRendererAt(d, p, func(w io.Writer) render.Renderer { return &lines{w: w, failAt: failAt} },
		func(err error) { warned = append(warned, err.Error()) },
		func() time.Time { return time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC) })
	for _, f := range frames {
		if err := r.Message(&model.Entry{Frame: f}); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(rotateAfter, f) {
			r.Rotate()
		}
	}
	if err := r.Close(); err != nil {
		warned = append(warned, "close: "+err.Error())
	}
	files, err := d.Files()
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(d.Path)
	if len(entries) != len(files) {
		t.Errorf("%d entries in the directory, %d files: a temporary file is left", len(entries), len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(d.Path, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, f.Name)
		contents = append(contents, strings.ReplaceAll(string(b), "\n", ";"))
	}
	return names, contents, warned
}

func TestRenderer(t *testing.T) {
	tests := []struct {
		name        string
		policy      Policy
		keep        int
		keepSize    int64
		frames      []int
		rotateAfter []int
		failAt      int
		want        []string
		wantWarned  int
	}{
		{name: "one period", frames: []int{1, 2, 3}, want: []string{"frame 1;frame 2;frame 3;end;"}},
		{name: "rotated", frames: []int{1, 2, 3}, rotateAfter: []int{1, 2},
			want: []string{"frame 1;end;", "frame 2;end;", "frame 3;end;"}},
		{name: "rotated at the end", frames: []int{1}, rotateAfter: []int{1},
			want: []string{"frame 1;end;", "end;"}},
		{name: "by size", policy: Policy{Size: 16}, frames: []int{1, 2, 3, 4, 5},
			want: []string{"frame 1;frame 2;end;", "frame 3;frame 4;end;", "frame 5;end;"}},
		{name: "keep 2", keep: 2, frames: []int{1, 2, 3, 4}, rotateAfter: []int{1, 2, 3},
			want: []string{"frame 3;end;", "frame 4;end;"}},
		{name: "keep size", keepSize: 30, frames: []int{1, 2, 3, 4}, rotateAfter: []int{1, 2, 3},
			want: []string{"frame 3;end;", "frame 4;end;"}},
		{name: "keep size under the newest file", keepSize: 1, frames: []int{1, 2}, rotateAfter: []int{1},
			want: []string{"frame 2;end;"}},
		{name: "a failing period is left out", frames: []int{1, 2, 3, 4, 5}, rotateAfter: []int{1, 3}, failAt: 3,
			want: []string{"frame 1;end;", "frame 4;frame 5;end;"}, wantWarned: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Dir{Path: t.TempDir(), Prefix: Prefix("web 1"), Ext: ".txt", Keep: tt.keep, KeepSize: tt.keepSize}
			names, got, warned := run(t, d, tt.policy, tt.frames, tt.rotateAfter, tt.failAt)
			if !slices.Equal(got, tt.want) {
				t.Errorf("files %q\nwant %q", got, tt.want)
			}
			for _, n := range names {
				if !strings.HasPrefix(n, "kafka-web_1-20261201T140000Z") || !strings.HasSuffix(n, ".txt") {
					t.Errorf("file name %q", n)
				}
			}
			if len(warned) != tt.wantWarned {
				t.Errorf("said %q, want %d notices", warned, tt.wantWarned)
			}
		})
	}
}

// TestCreateFails: a directory that cannot take a file is said once; when it can again, the
// next period is written.
func TestCreateFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	d := &Dir{Path: path, Prefix: "kafka-h-", Ext: ".txt"}
	var warned []string
	r := NewRenderer(d, Policy{}, func(w io.Writer) render.Renderer { return &lines{w: w} },
		func(err error) { warned = append(warned, err.Error()) })
	r.Message(&model.Entry{Frame: 1})
	r.Rotate()
	r.Message(&model.Entry{Frame: 2})
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	r.Rotate()
	r.Message(&model.Entry{Frame: 3})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := d.Files()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || r.Files() != 1 {
		t.Fatalf("files %v (%d written), want the third period's", files, r.Files())
	}
	if b, _ := os.ReadFile(filepath.Join(path, files[0].Name)); string(b) != "frame 3\nend\n" {
		t.Errorf("file holds %q", b)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "capture goes on") {
		t.Errorf("said %q, want one notice", warned)
	}
}

func TestPrefix(t *testing.T) {
	for host, want := range map[string]string{"web1.example.com": "kafka-web1.example.com-", "a/b c": "kafka-a_b_c-", "": "kafka-localhost-"} {
		if got := Prefix(host); got != want {
			t.Errorf("Prefix(%q) = %q, want %q", host, got, want)
		}
	}
}
