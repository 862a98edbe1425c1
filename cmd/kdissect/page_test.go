package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPageCommands: the workshop page on stdout, its limit said on stderr, and the schema site
// written where asked, with examples from the demo capture (the pages themselves are tested in a browser, in render/).
func TestPageCommands(t *testing.T) {
	out, errOut, code := kdissect(t, "--format", "html", "--max-messages", "3", "../../pcaps/kgo-produce-fetch.pcap")
	if code != 0 || !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.HasSuffix(out, "</html>\n") {
		t.Fatalf("exit %d, stdout %.100q..., stderr %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "the page holds the first 3 messages;") || !strings.Contains(errOut, "--max-messages") {
		t.Errorf("stderr %q does not say what the page left out", errOut)
	}
	dir := filepath.Join(t.TempDir(), "site")
	_, errOut, code = kdissect(t, "schema", "--site", dir+"/")
	if code != 0 || !strings.Contains(errOut, "wrote ") || !strings.Contains(errOut, "(open "+dir+"/index.html)") {
		t.Fatalf("schema --site: exit %d, stderr %s", code, errOut)
	}
	for _, f := range []string{"index.html", "errors.html", "Fetch-request.html", "Fetch-response.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// Both commands take their examples from the capture built into the binary.
	if b, err := os.ReadFile(filepath.Join(dir, "Fetch-request.html")); err != nil || !strings.Contains(string(b), "of kgo-produce-fetch.pcap:</p>\n<pre class=\"example\">") {
		t.Errorf("Fetch-request.html shows no example from the demo capture (%v)", err)
	}
	out, _, code = kdissect(t, "schema", "DescribeGroups", "--version", "6", "--response", "--format", "html")
	if code != 0 || !strings.Contains(out, "<details open><summary>DescribeGroups Response v6</summary>") {
		t.Errorf("schema --format html: exit %d, %.200q", code, out)
	}
	if !strings.Contains(out, "<p>kgo-produce-fetch.pcap has no DescribeGroups Response to show.</p>") {
		t.Error("the DescribeGroups Response page does not say the demo capture has none")
	}
}
