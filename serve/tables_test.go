package serve_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
	"github.com/kdissect/kdissect/serve"
)

// TestPageTables: the tables given to the server's renderer are in the page it serves, in the
// panel below the messages; without them, the page has no panel.
func TestPageTables(t *testing.T) {
	tb := model.Table{Name: "latency", Title: "Latency", Columns: []model.Column{{Name: "api_name", Kind: model.String}}}
	tb.AddRow("Fetch<&>")
	for _, tt := range []struct {
		name   string
		tables []model.Table
		want   []string
	}{
		{"tables", []model.Table{tb}, []string{`<details id="stats"`, `<table data-table="latency">`, "<td>Fetch&lt;&amp;&gt;</td>"}},
		{"none", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve.New(serve.Config{Select: dissect.SelectAll(), Codec: htmlCodec(t)}, false)
			if tt.tables != nil {
				srv.Renderer().(render.TablePage).Tables(tt.tables)
			}
			ts := httptest.NewServer(srv.Handler())
			defer ts.Close()
			resp, err := http.Get(ts.URL + "/")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			page := string(b)
			for _, w := range tt.want {
				if !strings.Contains(page, w) {
					t.Errorf("the page has no %q", w)
				}
			}
			if tt.tables == nil && strings.Contains(page, `id="stats"`) {
				t.Error("a panel of no table")
			}
		})
	}
}
