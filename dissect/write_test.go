package dissect

import (
	"bytes"
	"testing"

	"github.com/kdissect/kdissect/internal/pieces"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// TestBigMessageFileThenPieces: a big message's bytes made ahead go in pieces, then, beyond
// the bound, to the temporary file; once the message is next, the rest goes in pieces again,
// and the merging goroutine writes every byte out in the order it was made.
func TestBigMessageFileThenPieces(t *testing.T) {
	for _, c := range []struct {
		name         string
		ahead, after int // bytes made before the message is next, and after
		wantFile     bool
	}{
		{"within the bound", pieceBytes, 3*pieceBytes + 5, false},
		{"beyond the bound", 5*pieceBytes + 7, 3*pieceBytes + 5, true},
		{"beyond the bound, nothing after", 5*pieceBytes + 7, 0, true},
		{"beyond the bound, a byte after", 5 * pieceBytes, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			r := render.NewJSON(&out)
			w := &writers{out: r, n: 1, held: 2 * pieceBytes}
			w.pool = pieces.NewPool(pieceBytes, 4)
			pc := w.newPieces()
			j := &writeJob{es: []*model.Entry{{}}, done: make(chan struct{}, 1), big: pc}
			made := make([]byte, c.ahead+c.after)
			for i := range made {
				made[i] = byte(i*7 + i/251)
			}
			aheadDone, goOn := make(chan struct{}), make(chan struct{})
			var filing, filingAfter bool
			go func() {
				writeInSteps(pc, made[:c.ahead])
				filing = pc.fw != nil
				close(aheadDone)
				<-goOn
				writeInSteps(pc, made[c.ahead:])
				filingAfter = pc.fw != nil
				pc.close()
				j.done <- struct{}{}
			}()
			<-aheadDone
			pc.next.Store(true)
			close(goOn)
			done, err := w.writeBig(j, true)
			if !done || err != nil {
				t.Fatalf("writeBig: done %v, error %v", done, err)
			}
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), made) {
				t.Errorf("%d bytes written out, want the %d made, in order", out.Len(), len(made))
			}
			if filing != c.wantFile || c.after > 0 && filingAfter {
				t.Errorf("going to the file: %v before the message is next (want %v), %v after", filing, c.wantFile, filingAfter)
			}
			if n := w.ahead.Load(); n != 0 {
				t.Errorf("%d bytes counted ahead once written out", n)
			}
		})
	}
}

// writeInSteps writes b to w in uneven steps, as an encoder does.
func writeInSteps(w *bigOut, b []byte) {
	for step := 1; len(b) > 0; step = step*3 + 1 {
		n := min(step, len(b))
		w.Write(b[:n])
		b = b[n:]
	}
}
