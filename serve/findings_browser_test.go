package serve_test

import (
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
	"github.com/kdissect/kdissect/serve"
)

// doctorServer is a server of captures with a doctor, its codec keeping the fields the doctor
// reads, as kdissect serve makes it, fed the capture of pcaps/ named.
func doctorServer(t *testing.T, capture string) (*serve.Server, *doctor.Doctor) {
	t.Helper()
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	d := doctor.New()
	f := render.PageFormat()
	f.Needs = serve.Needs()
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: dissect.SelectAll(), Keep: d.Reads()})
	if err != nil {
		t.Fatal(err)
	}
	c := dissect.NewCodec(set, plan, dissect.CodecOptions{})
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: c, MaxBytes: 64, Doctor: d}, false)
	p, err := dissect.New(dissect.Config{Codec: c, Out: srv.Renderer(), Plan: plan, Select: dissect.SelectAll(), Detect: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.File(filepath.Join("..", "pcaps", capture)); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return srv, d
}

// findingsOf are the findings of a doctor told of every message of a capture of pcaps/.
func findingsOf(t *testing.T, capture string) []doctor.Finding {
	t.Helper()
	_, d := doctorServer(t, capture)
	return d.Findings()
}

// checkFindings checks that the page's panel lists fs, and that clicking the evidence of each
// selects the message of its first frame.
func checkFindings(t *testing.T, p *browsertest.Page, what string, fs []doctor.Finding) {
	t.Helper()
	var listed []string
	p.Eval(`Array.prototype.map.call(document.querySelectorAll('#findings .finding > summary'), function (s) { return s.textContent; })`, &listed)
	if len(listed) != len(fs) {
		t.Fatalf("%s: the panel lists %d findings %q, the doctor found %d", what, len(listed), listed, len(fs))
	}
	for i, f := range fs {
		if want := f.Severity.String() + f.ID + f.Title; listed[i] != want {
			t.Errorf("%s: finding %d: the panel says %q, the doctor %q", what, i, listed[i], want)
		}
		var frame int
		p.Eval(`(function () {
		  var d = document.querySelectorAll('#findings .finding')[`+strconv.Itoa(i)+`];
		  d.open = true;
		  d.querySelector('button[data-role=evidence]').click();
		  var v = kdissect.view(), r = document.querySelector('#rows tr.cur');
		  return v && r && +r.dataset.frame === v.m.frame ? v.m.frame : -1;
		})()`, &frame)
		if frame != f.Evidence.Frames[0] {
			t.Errorf("%s: the evidence of %s %q selected frame %d, not its first, %d", what, f.ID, f.Title, frame, f.Evidence.Frames[0])
		}
	}
}

// TestServeFindings serves a capture with the doctor's findings: the page's panel lists them
// and clicking a finding's evidence selects the message of its first frame; a capture
// uploaded through the page brings its own findings. No console error, no request but to the
// server.
func TestServeFindings(t *testing.T) {
	b := browsertest.Start(t)
	srv, d := doctorServer(t, "kgo-filters.pcap")
	fs := d.Findings()
	if len(fs) == 0 {
		t.Fatal("kgo-filters.pcap: no findings")
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	p := b.Open(t, ts.URL+"/")
	checkFindings(t, p, "served", fs)

	up := findingsOf(t, "kgo-produce-retry.pcap")
	if len(up) == 0 {
		t.Fatal("kgo-produce-retry.pcap: no findings")
	}
	upload(t, p, "kgo-produce-retry.pcap")
	checkFindings(t, p, "uploaded", up)
	p.Check(sameOrigin(ts.URL))
}

// TestLiveFindings: a live page shows the findings of the messages the server had when it was
// loaded, and says that a reload brings those of the later ones.
func TestLiveFindings(t *testing.T) {
	b := browsertest.Start(t)
	d := doctor.New()
	rec, srv, ts := liveServer(t, "kgo-filters.pcap", func(c *serve.Config, _ int) { c.Doctor = d })
	want := doctor.New()
	rec.replay(srv, func(_ int, e *model.Entry) { want.Add(e) })
	fs := want.Findings()
	if len(fs) == 0 {
		t.Fatal("kgo-filters.pcap: no findings")
	}
	p := b.Open(t, ts.URL+"/")
	checkFindings(t, p, "live", fs)
	var note string
	p.Eval(`document.querySelector('#findings > .meta').textContent`, &note)
	if note == "" {
		t.Error("the live page's panel does not say when its findings are of")
	}
	p.Check(sameOrigin(ts.URL))
}
