package dissect

import (
	"bytes"
	"math/rand/v2"
	"runtime"
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
			rig := newBigRig(2 * pieceBytes)
			w, pc := rig.w, rig.pc
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
				rig.made()
			}()
			<-aheadDone
			pc.next.Store(true)
			close(goOn)
			done, err := w.writeBig(rig.j, true)
			if !done || err != nil {
				t.Fatalf("writeBig: done %v, error %v", done, err)
			}
			if out := rig.written(t); !bytes.Equal(out, made) {
				t.Errorf("%d bytes written out, want the %d made, in order", len(out), len(made))
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

// bigRig is a big message's way from a writer to the merging goroutine, which writes it out
// into out.
type bigRig struct {
	out bytes.Buffer
	ren *render.JSON
	w   *writers
	pc  *bigOut
	j   *writeJob
}

func newBigRig(held int) *bigRig {
	r := &bigRig{}
	r.ren = render.NewJSON(&r.out)
	r.w = &writers{out: r.ren, n: 1, held: held}
	r.w.pool = pieces.NewPool(pieceBytes, 4)
	r.pc = r.w.newPieces()
	r.j = &writeJob{es: []*model.Entry{{}}, done: make(chan struct{}, 1), big: r.pc}
	return r
}

// made is the writer's end of the message.
func (r *bigRig) made() {
	r.pc.close()
	r.j.done <- struct{}{}
}

// written returns the bytes written out.
func (r *bigRig) written(t *testing.T) []byte {
	t.Helper()
	if err := r.ren.Flush(); err != nil {
		t.Fatal(err)
	}
	return r.out.Bytes()
}

// writeInSteps writes b to w in uneven steps, as an encoder does.
func writeInSteps(w *bigOut, b []byte) {
	for step := 1; len(b) > 0; step = step*3 + 1 {
		n := min(step, len(b))
		w.Write(b[:n])
		b = b[n:]
	}
}

// TestBigMessageAnyTurn: whatever the bound, the sizes of the writes and when the message
// becomes next (the merging goroutine taking what is made now and then before it waits for the
// rest), every byte made is written out once, in order, and the bytes counted ahead come back
// to those of the other batches.
func TestBigMessageAnyTurn(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 1))
		held := []int{0, 1 << 10, pieceBytes, 2*pieceBytes + 100}[r.IntN(4)]
		rig := newBigRig(held)
		w, pc := rig.w, rig.pc
		other := r.Int64N(int64(held) + pieceBytes) // other batches' pieces in memory
		w.ahead.Store(other)
		made := make([]byte, r.IntN(8*pieceBytes))
		for i := range made {
			made[i] = byte(r.Uint32())
		}
		sizes := rand.New(rand.NewPCG(seed, 2)) // the writer's own: r is the merger's
		go func() {
			for b := made; len(b) > 0; {
				n := min(len(b), 1+sizes.IntN([]int{16, 4096, 3 * pieceBytes}[sizes.IntN(3)]))
				pc.Write(b[:n])
				b = b[n:]
				runtime.Gosched()
			}
			rig.made()
		}()
		done := false
		var err error
		for k := r.IntN(30); k > 0 && !done; k-- {
			runtime.Gosched()
			if done, err = w.writeBig(rig.j, false); other > 0 && r.IntN(3) == 0 {
				w.ahead.Add(-other) // the other batches are written out
				other = 0
			}
		}
		if !done {
			done, err = w.writeBig(rig.j, true)
		}
		if !done || err != nil {
			t.Fatalf("seed %d: writeBig: done %v, error %v", seed, done, err)
		}
		if out := rig.written(t); !bytes.Equal(out, made) {
			t.Fatalf("seed %d, bound %d: %d bytes written out, want the %d made, in order", seed, held, len(out), len(made))
		}
		if n := w.ahead.Load(); n != other {
			t.Fatalf("seed %d: %d bytes counted ahead, want %d", seed, n, other)
		}
	}
}
