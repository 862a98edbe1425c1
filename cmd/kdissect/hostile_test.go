package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kdissect/kdissect/internal/hostile"
	"github.com/kdissect/kdissect/internal/inert"
)

// hostileRuns are the text outputs run over a hostile capture: every format that writes text
// for people, with their flags, and the statistics.
var hostileRuns = [][]string{
	{"--format", "summary"},
	{"--format", "diagram", "--max-bytes", "0"},
	{"--format", "diagram", "-x"},
	{"--format", "diagram", "--explain"},
	{"--format", "summary", "--stats"},
	{"--format", "none", "--stats"},
	{"--format", "diagram", "--stats", "-Y", `api == "Metadata"`},
}

// inertText fails t if s holds anything package inert escapes (but newlines) or bytes that
// are not UTF-8: what would drive a terminal.
func inertText(t *testing.T, what, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("%s: not UTF-8", what)
	}
	for i, r := range s {
		if r != '\n' && inert.Escaped(r) {
			t.Errorf("%s: %U at byte %d: %q", what, r, i, s[max(0, i-40):min(len(s), i+40)])
			return
		}
	}
}

// writeHostile writes a capture whose strings are s(place), under a file name that is hostile too.
func writeHostile(t *testing.T, s func(string) string) string {
	t.Helper()
	b, err := hostile.Capture(s)
	if err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, "capture \x1b[2J\r\u202e.pcap", b)
}

// TestHostileStrings: a capture whose strings carry escape sequences, controls, bidirectional
// overrides and bytes that are not UTF-8, in every place a client or broker can put one, leaves
// stdout and stderr inert in every text format; the strings are shown, escaped; JSON lines
// parse and give each string back whole.
func TestHostileStrings(t *testing.T) {
	file := writeHostile(t, hostile.String)
	for _, args := range hostileRuns {
		// Twice the file, so that the lines naming each file are shown too.
		out, errOut, code := kdissect(t, append(args, "-p", "9092", file, file)...)
		name := strings.Join(args, " ")
		if code != 0 {
			t.Errorf("%s: exit %d: %s", name, code, errOut)
		}
		inertText(t, name+": stdout", out)
		inertText(t, name+": stderr", errOut)
		if args[1] == "summary" && len(args) == 2 {
			for _, place := range []string{"client id", "topic", "group", "member id", "coordinator host", "other mechanism"} {
				if !strings.Contains(out, inert.String(hostile.String(place))) {
					t.Errorf("%s: the %s is not shown", name, place)
				}
			}
		}
		if len(args) == 4 && args[3] == "0" {
			for _, place := range hostile.Places() {
				switch place {
				case "record key", "record value", "header value", "sasl user": // bytes, not text: in hex
					continue
				}
				if !strings.Contains(out, inert.String(hostile.String(place))) {
					t.Errorf("%s: the %s is not shown", name, place)
				}
			}
		}
	}
	// JSON lines: inert too, and every string comes back whole.
	out, errOut, code := kdissect(t, "--format", "json", "--max-bytes", "0", "-p", "9092", file)
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, errOut)
	}
	inertText(t, "json: stdout", out)
	inertText(t, "json: stderr", errOut)
	values := jsonStrings(t, out)
	for _, place := range hostile.Places() {
		if place == "sasl user" {
			continue // not printable, so the token is not read as PLAIN: shown whole in hex
		}
		if !values[hostile.String(place)] {
			t.Errorf("json: the %s does not come back whole", place)
		}
	}
	// A token that is not printable text is shown whole (no password in it to redact).
	if !values["\x00"+hostile.String("sasl user")+"\x00secret"] && !values["\x00"+hostile.String("sasl user")+"\x00<redacted>"] {
		t.Errorf("json: the SASL token is not shown: %v", len(values))
	}
}

// jsonStrings collects the string values of every JSON line of out, fields and facts, bytes
// and strings given in hex decoded.
func jsonStrings(t *testing.T, out string) map[string]bool {
	t.Helper()
	values := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["value"].(string); ok && v["encoding"] == "hex" {
				b, err := hex.DecodeString(s)
				if err != nil {
					t.Errorf("value %q in hex: %v", s, err)
				}
				values[string(b)] = true
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		case string:
			values[v] = true
		}
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("a JSON line does not parse: %v: %.200s", err, sc.Text())
		}
		walk(v)
	}
	return values
}

// TestHostileDefinitions: schema output of definitions (a user's files, which can carry
// anything) whose names and descriptions carry escape sequences is inert, as a table, a layout,
// and when the definitions are compared.
func TestHostileDefinitions(t *testing.T) {
	dir := t.TempDir()
	p := hostile.Payload
	def := map[string]any{"apiKey": "TBD", "type": "request", "name": "Evil" + p + "Request", "validVersions": "0-1", "flexibleVersions": "1+",
		"fields": []any{
			map[string]any{"name": "Topic" + p, "type": "string", "versions": "0+", "about": "about " + p},
			map[string]any{"name": "Items", "type": "[]Item" + p, "versions": "0+", "about": p,
				"fields": []any{map[string]any{"name": "X" + p, "type": "int32", "versions": "1+", "about": p}}},
		}}
	b, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Evil\x1b[2J.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"schema"},
		{"schema", "99"},
		{"schema", "99", "--version", "1"},
		{"schema", "99", "--diff", "0..1"},
		{"schema", "--compare", dir},
		{"schema", "99", "--format", "json"},
		{"schema", "--compare", dir, "--format", "json"},
	} {
		out, errOut, code := kdissect(t, append(args, "--schema-dir", dir, "--api-key", "99")...)
		name := strings.Join(args, " ")
		inertText(t, name+": stdout", out)
		inertText(t, name+": stderr", errOut)
		if code != 0 {
			t.Logf("%s: exit %d: %s", name, code, errOut)
		}
		if len(out) == 0 && len(errOut) == 0 {
			t.Errorf("%s: nothing shown", name)
		}
	}
	// Errors that quote what the user typed are inert too.
	for _, args := range [][]string{{"errors", "\x1b[2J\u009b"}, {"schema", "\x1b]0;x\a"}, {"--format", "\u202e"}, {"no such \x1b[2J file"}} {
		out, errOut, _ := kdissect(t, args...)
		inertText(t, args[0]+": stdout", out)
		inertText(t, args[0]+": stderr", errOut)
	}
}

// FuzzHostileStrings: whatever strings a capture carries, in every place, no text output
// drives the terminal, and JSON lines give them back.
func FuzzHostileStrings(f *testing.F) {
	f.Add("plain", "\x1b[2J")
	f.Add(hostile.Payload, "\r\n\u009b\u202e\xff")
	f.Add("", "\x00\x7f\u2028")
	f.Fuzz(func(t *testing.T, a, b string) {
		places := hostile.Places()
		s := func(place string) string {
			for i, p := range places {
				if p == place && i%2 == 1 {
					return b + place
				}
			}
			return a + place
		}
		file := writeHostile(t, s)
		// Each text format once, with every flag that adds text, in one goroutine each.
		for _, args := range [][]string{{"--format", "summary", "--stats"}, {"--format", "diagram", "-x", "--explain", "--max-bytes", "0"}, {"--format", "json"}} {
			out, errOut, _ := kdissect(t, append(args, "--workers", "1", "-p", "9092", file)...)
			name := strings.Join(args, " ")
			inertText(t, name+": stdout", out)
			inertText(t, name+": stderr", errOut)
			if args[1] == "json" {
				values := jsonStrings(t, out)
				for _, place := range []string{"topic", "broker host", "member id", "config value", "produce error"} {
					if !values[s(place)] {
						t.Errorf("json: the %s %q does not come back whole", place, s(place))
					}
				}
			}
		}
	})
}
