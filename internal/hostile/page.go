package hostile

import (
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/browsertest"
)

// pageScript selects every message of a workshop page in turn and returns the text shown,
// and any element the strings could have made: an image, a frame, a script of their own.
const pageScript = `(function () {
  var n = kdissect.messages().length, text = '';
  for (var i = 0; i < n; i++) { kdissect.select(i); text += document.body.innerText + '\n'; }
  var made = [];
  document.querySelectorAll('img, iframe, object, embed, svg script').forEach(function (e) { made.push(e.outerHTML.slice(0, 80)); });
  document.querySelectorAll('script').forEach(function (s) {
    if (s.type !== 'application/json' && s.textContent.indexOf('alert(') >= 0) made.push('script: ' + s.textContent.slice(0, 80));
  });
  return {messages: n, text: text, made: made};
})()`

// CheckPage checks a workshop page of a hostile capture in Chromium, every message selected:
// the markup of the strings made no element, and the strings are shown as text, each place's
// (but the bytes fields', shown in hex). Dialogs, scripts run and requests are the page's
// problems, which the caller checks (browsertest.Page.Check).
func CheckPage(t *testing.T, p *browsertest.Page, messages int) {
	t.Helper()
	var got struct {
		Messages int
		Text     string
		Made     []string
	}
	p.Eval(pageScript, &got)
	if got.Messages != messages {
		t.Errorf("the page holds %d messages, want %d", got.Messages, messages)
	}
	for _, m := range got.Made {
		t.Errorf("the strings made an element: %s", m)
	}
	if !strings.Contains(got.Text, "<img src=x onerror=alert(2)>") {
		t.Error("the markup of the strings is not shown as text")
	}
	for _, place := range Places() {
		switch place {
		case "record key", "record value", "header value", "sasl user": // bytes, in hex
			continue
		}
		if !strings.Contains(got.Text, place+": ") {
			t.Errorf("the %s is not shown", place)
		}
	}
}
