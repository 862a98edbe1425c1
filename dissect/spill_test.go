package dissect

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kdissect/kdissect/pcaps"
)

// Frames kept outside the heap (Plan.SpillOver) give the output of frames on the heap, byte
// for byte: every capture in pcaps/, with every frame of 100 bytes or more in a temporary file,
// in the formats that allow it, with one worker and with three.
func TestSpilledFramesSameOutput(t *testing.T) {
	runs := []testRun{{format: "summary"}, {format: "json"}, {format: "diagram", hex: true}, {format: "none", stats: true},
		{format: "json", sel: func(s *Selection) { s.Responses = true }}, {format: "parquet"}}
	for _, file := range captures(t) {
		for _, r := range runs {
			r.ports = pcaps.Ports
			r.keylog = keylogOf(file)
			for _, workers := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s %s stats=%v workers=%d", filepath.Base(file), r.format, r.stats, workers), func(t *testing.T) {
					t.Parallel()
					r := r.withWorkers(workers, 0)
					r.spill = -1
					wantOut, wantErr, wantCode := r.dissect(t, file)
					r.spill = 100
					out, errOut, code := r.dissect(t, file)
					if out != wantOut {
						a, b := clip(out, wantOut)
						t.Errorf("stdout with frames in files differs:\n got %s\nwant %s", a, b)
					}
					if errOut != wantErr || code != wantCode {
						t.Errorf("stderr %q, exit %d with frames in files; want %q, exit %d", errOut, code, wantErr, wantCode)
					}
				})
			}
		}
	}
}
