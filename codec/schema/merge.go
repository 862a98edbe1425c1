package schema

import (
	"fmt"
	"slices"
	"strings"
)

// merge puts definition m into s over what s holds in its place, version by version.
func (s *Set) merge(m *Message) error {
	slot, err := s.slot(m)
	if err != nil {
		return err
	}
	if *slot == nil {
		*slot = m
		return nil
	}
	merged, differs := mergeVersions(*slot, m)
	*slot = merged
	for _, d := range differs {
		s.notices = append(s.notices, Notice{Kind: Differs, Text: d})
	}
	return nil
}

// maxListed is how many changes a notice lists before it counts the rest.
const maxListed = 6

// mergeVersions returns m over old: m for the versions m declares, old's definitions for the
// others. It also describes each run of versions that both define with different layouts.
func mergeVersions(old, m *Message) (*Message, []string) {
	var parts []part
	if !m.ValidVersions.Empty() {
		parts = append(parts, part{m.ValidVersions, m})
	}
	var differs []string
	for _, p := range old.partsOrSelf() {
		for _, r := range p.versions.Minus(m.ValidVersions) {
			parts = append(parts, part{r, p.def})
		}
		if both := p.versions.Intersect(m.ValidVersions); !both.Empty() {
			differs = append(differs, differences(p.def, m, both)...)
		}
	}
	if len(parts) == 0 || (len(parts) == 1 && parts[0].def == m) {
		return m, differs
	}
	slices.SortFunc(parts, func(a, b part) int { return int(a.versions.Lo) - int(b.versions.Lo) })
	newest := parts[len(parts)-1].def
	hull := Versions{Lo: parts[0].versions.Lo, set: true}
	for _, p := range parts {
		hull.Hi = max(hull.Hi, p.versions.Hi)
	}
	return &Message{APIKey: m.APIKey, HasAPIKey: m.HasAPIKey, Type: m.Type, Name: m.Name,
		ValidVersions: hull, FlexibleVersions: newest.FlexibleVersions, Body: newest.Body,
		Source: newest.Source, Embedded: newest.Embedded, parts: parts}, differs
}

// partsOrSelf is m's parts, or m as the one part of all its versions.
func (m *Message) partsOrSelf() []part {
	if m.parts != nil {
		return m.parts
	}
	return []part{{m.ValidVersions, m}}
}

// differences describes the versions vs where m's layout differs from old's, a notice per run
// of consecutive versions with the same differences.
func differences(old, m *Message, vs Versions) []string {
	if vs.Hi == MaxVersion {
		vs.Hi = vs.Lo // two open ranges ("3+"): compare where they meet
	}
	var out []string
	flush := func(lo, hi int16, changes []Change) {
		if len(changes) == 0 {
			return
		}
		list := make([]string, 0, maxListed+1)
		for i, c := range changes {
			if i == maxListed {
				list = append(list, fmt.Sprintf("and %d more", len(changes)-maxListed))
				break
			}
			list = append(list, c.String())
		}
		out = append(out, fmt.Sprintf("%s %s: %s differs from the %s definition, and is used: %s",
			m.Name, "v"+versionText(lo, hi), m.Source, originName(old), strings.Join(list, "; ")))
	}
	var run []Change
	lo := vs.Lo
	for v := vs.Lo; ; v++ {
		c := Changes(old.Paths(v, ""), m.Paths(v, ""))
		if v > vs.Lo && !slices.Equal(c, run) {
			flush(lo, v-1, run)
			lo = v
		}
		run = c
		if v == vs.Hi {
			break
		}
	}
	flush(lo, vs.Hi, run)
	return out
}

// originName is "built-in" for kdissect's own definitions, or the file's path.
func originName(m *Message) string {
	if m.Embedded {
		return "built-in"
	}
	return m.Source
}
