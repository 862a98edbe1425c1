package codec

import (
	_ "embed"
	"sort"
	"strings"
)

// apiAbout holds a line per API: its name, a colon, what the API is for.
//
//go:embed apis.txt
var apiAbout string

// apiErrorList holds a line per API: its name, a colon, the names of the error codes its
// response can carry, as Kafka's definitions and documentation name them.
//
//go:embed apierrors.txt
var apiErrorList string

// apiAbouts and apiErrors read apis.txt and apierrors.txt once; the maps are never written after.
var (
	apiAbouts = parseAPILines(apiAbout)
	apiErrors = parseAPILines(apiErrorList)
)

// parseAPILines reads "Name: text" lines, skipping comments.
func parseAPILines(text string) map[string]string {
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

// APIErrors lists, in code order, the error codes that the response of the API named name can
// carry, as Kafka's message definitions or response classes name them; nil when they name none
// for it, and then any code of the error table may appear.
func APIErrors(name string) []ErrorCode {
	var out []ErrorCode
	for _, n := range strings.Fields(apiErrors[name]) {
		if e, ok := LookupError(n); ok {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}
