package serve_test

import (
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/model"
)

// TestLiveTail: with tail on, a live page keeps its newest message selected and in view as
// messages come, and its conversation view fills with them.
func TestLiveTail(t *testing.T) {
	b := browsertest.Start(t)
	rec, srv, ts := liveServer(t, "kgo-produce-fetch.pcap", nil)
	entries := rec.entries()
	p := b.Open(t, ts.URL+"/")
	p.Viewport(1280, 720)
	var shown bool
	p.Eval(`(function () {
	  var t = document.querySelector('[data-role=tail]');
	  t.click();
	  document.getElementById('ladder-toggle').click();
	  return !document.getElementById('tail-l').hidden && t.checked;
	})()`, &shown)
	if !shown {
		t.Fatal("the live page has no tail toggle to turn on")
	}
	rec.replay(srv, func(int, *model.Entry) {})
	last := entries[len(entries)-1].Frame
	waitFor(t, p, last, len(entries)-1, 10*time.Second)
	var got struct {
		Frame  int
		InView bool
		Arrow  bool
	}
	// The arrow first, in the ladder; then, the ladder closed, the row in the list (to half a
	// pixel: rows of a fractional height end a fraction past the list scrolled to its end).
	p.Eval(`(async function () {
	  var frames = function () { return new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(r); }); }); };
	  await frames();
	  var a = document.querySelector('[data-role=ladder] .arrow.cur'), cur = +document.querySelector('#rows tr.cur').dataset.frame;
	  document.getElementById('ladder-toggle').click();
	  await frames();
	  var r = document.querySelector('#rows tr.cur'), l = document.getElementById('list').getBoundingClientRect(), b = r.getBoundingClientRect();
	  return {frame: +r.dataset.frame, inView: b.height > 0 && b.top >= l.top - 0.5 && b.bottom <= l.bottom + 0.5, arrow: !!a && +a.dataset.frame === cur};
	})()`, &got)
	if got.Frame != last || !got.InView || !got.Arrow {
		t.Errorf("tail: the page selected frame %d (in view: %v; its arrow in the ladder: %v), want the newest, %d, in view", got.Frame, got.InView, got.Arrow, last)
	}
	p.Check(sameOrigin(ts.URL))
}
