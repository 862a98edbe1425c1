package rotate_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kdissect/kdissect/internal/rotate"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// A Renderer writes a format's output to a file per period; Rotate (SIGHUP) ends a period
// early, Close the last. Keep deletes the oldest files.
func ExampleRenderer() {
	dir, err := os.MkdirTemp("", "rotate-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	d := &rotate.Dir{Path: dir, Prefix: rotate.Prefix("web1"), Ext: ".txt", Keep: 2}
	r := rotate.NewRenderer(d, rotate.Policy{}, func(w io.Writer) render.Renderer { return render.NewSummary(w, render.TimeFormat(0)) },
		func(err error) { fmt.Println(err) })
	for range 3 {
		r.Notice(&model.Notice{Text: "a period"})
		r.Rotate()
	}
	r.Close()
	files, _ := d.Files()
	fmt.Println(r.Files(), "files written,", len(files), "kept")
	matched, _ := filepath.Match("kafka-web1-*T*Z*.txt", files[0].Name)
	fmt.Println(matched)
	// Output:
	// 4 files written, 2 kept
	// true
}
