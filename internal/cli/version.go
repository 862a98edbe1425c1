package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/kdissect/kdissect/codec/schema"
)

// Version says which kdissect this is, from the build info the Go toolchain records (the
// module version for "go install ...@version", the VCS revision for a build in a checkout), and
// which Kafka versions its definitions know, from the definitions themselves.
func Version(info *debug.BuildInfo, set *schema.Set) string {
	var b strings.Builder
	version, goVersion := "(unknown)", "(unknown)"
	var settings map[string]string
	if info != nil {
		version, goVersion = info.Main.Version, info.GoVersion
		settings = map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
	}
	if version == "" {
		version = "(devel)"
	}
	fmt.Fprintf(&b, "kdissect %s\n", version)
	if rev := settings["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, "revision %s", rev)
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
		if settings["vcs.modified"] == "true" {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString("\n")
	} else {
		b.WriteString("revision unknown (no VCS information in the binary: built outside a checkout, or with -buildvcs=false)\n")
	}
	fmt.Fprintf(&b, "built with %s\n", goVersion)

	apis := set.APIs()
	if len(apis) == 0 {
		return b.String()
	}
	newest := func(key int16) string {
		a := set.API(key)
		if a == nil {
			return ""
		}
		return fmt.Sprintf("%s v%d", a.Name, a.Versions().Latest())
	}
	var known []string
	for _, key := range []int16{0, 1, 3, 18} { // Produce, Fetch, Metadata, ApiVersions
		if s := newest(key); s != "" {
			known = append(known, s)
		}
	}
	last := apis[len(apis)-1]
	fmt.Fprintf(&b, "Kafka protocol: %d APIs, keys %d to %d (the highest: %s)\n", len(apis), apis[0].Key, last.Key, newest(last.Key))
	fmt.Fprintf(&b, "newest versions: %s\n", strings.Join(known, ", "))
	return b.String()
}
