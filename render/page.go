package render

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html"
	"strings"
)

// The workshop page's style and script, written inline into every page (page/).
//
//go:embed page/page.css page/page.js
var pageAssets embed.FS

func asset(name string) string {
	b, err := pageAssets.ReadFile("page/" + name)
	if err != nil {
		panic("render: embedded asset missing: " + name) // a build without its embedded files
	}
	return string(b)
}

var (
	pageCSS = asset("page.css")
	pageJS  = asset("page.js")
)

func sourceHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}

// PageCSP is the Content-Security-Policy of the pages: only their own inline style and script
// (by hash), images from data: URLs, and no connection at all unless connect allows one ("'self'"
// for a served page; "" for a file, which then cannot send a request anywhere).
func PageCSP(connect string) string {
	if connect == "" {
		connect = "'none'"
	}
	return "default-src 'none'; style-src " + sourceHash(pageCSS) + "; script-src " + sourceHash(pageJS) +
		"; img-src data:; connect-src " + connect + "; form-action 'none'; base-uri 'none'"
}

// pageFile is the body of the workshop page before its data: the controls, the list and the
// detail pane that the script fills.
const pageFile = `<header>
<h1>kdissect</h1>
<span id="count" class="meta"></span>
<input id="f-text" type="search" placeholder="filter: text, address, frame" size="22" aria-label="filter text">
<select id="f-kind" aria-label="direction"><option value="">requests and responses</option><option value="request">requests</option><option value="response">responses</option></select>
<select id="f-api" aria-label="API"><option value="">every API</option></select>
<input id="f-stream" type="number" min="0" placeholder="stream" class="narrow" aria-label="stream">
<label><input id="f-errors" type="checkbox"> errors</label>
<span class="grow"></span>
<button id="pause" hidden>pause</button>
<label id="tail-l" hidden title="keep the newest message selected and in view"><input id="tail" type="checkbox" data-role="tail"> tail</label>
<label id="upload" hidden>open a capture <input id="upload-file" type="file"></label>
<button id="ladder-toggle" aria-pressed="false" title="the conversation of the selected message's connection, as a ladder diagram">conversation</button>
<button id="zoom-out" data-role="zoom-out" title="smaller text (-)">A&#8722;</button>
<button id="zoom-in" data-role="zoom-in" title="larger text (+), for a projector">A+</button>
<button id="theme" title="light or dark">&#9681;</button>
</header>
<div class="ybar"><label for="f-y" title="display filter: the expressions of -Y">-Y</label>
<input id="f-y" type="search" spellcheck="false" autocomplete="off" aria-label="display filter (-Y)" placeholder="display filter, as -Y takes it: api == &quot;Fetch&quot; &amp;&amp; latency_ms &gt; 1 (Enter applies it)">
<button id="y-apply" hidden>apply</button>
<pre id="y-msg"></pre></div>
<div id="bar" class="bar"></div>
<details id="notices" class="notices" hidden></details>
<details id="findings" class="notices findings" data-role="findings" hidden></details>
<div id="evbar" class="bar" hidden><span id="ev-text"></span> <button id="ev-all">show every message</button></div>
<div id="main">
<nav id="list"><table><thead><tr><th>frame</th><th>time</th><th></th><th>API</th><th>corr</th><th>ms</th><th>size</th><th>client id</th><th>addresses</th></tr></thead><tbody id="rows"></tbody></table></nav>
<section id="ladder" class="pn" data-role="ladder" hidden></section>
<section id="detail"></section>
</div>
<div id="drop">drop a capture to dissect it</div>
`

// pageHead is the start of a page up to and including body's first elements: its policy,
// title and style. (The policy allows no style attribute: classes only.)
func pageHead(title, body string) string {
	return pageHeadCSP(title, body, PageCSP(""))
}

func pageHeadCSP(title, body, csp string) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString(`<meta http-equiv="Content-Security-Policy" content="` + html.EscapeString(csp) + "\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<meta name=\"generator\" content=\"kdissect\">\n")
	b.WriteString("<title>" + html.EscapeString(title) + "</title>\n<style>")
	b.WriteString(pageCSS)
	b.WriteString("</style>\n</head>\n<body>\n")
	b.WriteString(body)
	return b.String()
}

// pageFoot is the script and the end of the page.
func pageFoot() string { return "<script>" + pageJS + "</script>\n</body>\n</html>\n" }
