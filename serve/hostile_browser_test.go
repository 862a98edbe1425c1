package serve_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/internal/hostile"
	"github.com/kdissect/kdissect/render"
	"github.com/kdissect/kdissect/serve"
)

// TestHostileServe serves a capture whose strings carry markup, escape sequences and controls
// in every place (package hostile), then uploads it through the page: in Chromium, no dialog,
// no script run, no request but to the server, no element made by the strings, and every
// string shown as text.
func TestHostileServe(t *testing.T) {
	b := browsertest.Start(t)
	// The client id is printable, as detection wants of a connection on a port not named
	// (an upload's), and carries CR and LF all the same.
	data, err := hostile.Capture(func(place string) string {
		if place == "client id" {
			return place + ": " + hostile.PrintablePayload
		}
		return hostile.String(place)
	})
	if err != nil {
		t.Fatal(err)
	}
	capture := filepath.Join(t.TempDir(), "hostile \x1b[2J<b>.pcap")
	if err := os.WriteFile(capture, data, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t), MaxBytes: 64}, false)
	var lines bytes.Buffer
	feedFile(t, capture, srv.Renderer(), "html")
	f, _ := render.LookupFormat("json")
	feedFile(t, capture, f.New(&lines, render.Options{}), "json")
	messages := len(jsonLines[jsonMessage](t, lines.Bytes()))
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	p := b.Open(t, ts.URL+"/")
	hostile.CheckPage(t, p, messages)
	upload(t, p, filepath.Base(capture), capture)
	hostile.CheckPage(t, p, messages)
	p.Check(sameOrigin(ts.URL))
}
