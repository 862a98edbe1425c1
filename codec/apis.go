package codec

import (
	_ "embed"
	"strings"
)

// apiAbout holds a line per API: its name, a colon, what the API is for.
//
//go:embed apis.txt
var apiAbout string

// apiAbouts reads apis.txt once; the map is never written after.
var apiAbouts = parseAPIAbout(apiAbout)

func parseAPIAbout(text string) map[string]string {
	about := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if name, text, ok := strings.Cut(l, ": "); ok && !strings.HasPrefix(l, "#") {
			about[name] = text
		}
	}
	return about
}

// APIAbout says in a sentence or two what the API named name ("Produce", "JoinGroup") is for,
// or "" for an API kdissect has no description of (one from --schema-dir).
func APIAbout(name string) string { return apiAbouts[name] }
