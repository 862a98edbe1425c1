package schema

import (
	"fmt"
	"slices"
)

// Comparison is what the definitions a set loaded change against a base set, API by API:
// what `kdissect schema --compare DIR` shows when a new Kafka release comes out.
type Comparison struct {
	// Headers and APIs hold the definitions that change something, the headers first, then
	// the APIs in key order.
	Headers []MessageComparison `json:"headers"`
	APIs    []APIComparison     `json:"apis"`
	// Same names the files loaded whose every version is laid out as in the base, and that
	// leave none of the base's versions out.
	Same []string `json:"same"`
}

// APIComparison is what changes in one API.
type APIComparison struct {
	Key      int16               `json:"api_key"`
	Name     string              `json:"api_name"`
	New      bool                `json:"new,omitempty"` // an API the base does not have
	Messages []MessageComparison `json:"messages"`
}

// MessageComparison is what one file changes in a message (a request, a response, a header).
type MessageComparison struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Source string `json:"source"`
	// Versions are the versions the file declares; Kept, the base's versions it does not
	// declare, which stay as they were.
	Versions string   `json:"versions"`
	Kept     []string `json:"kept,omitempty"`
	New      bool     `json:"new,omitempty"` // a message the base does not have
	// Runs say, for the versions that differ from the base or are new, what changes.
	Runs []VersionRun `json:"changes"`
}

// VersionRun is a run of versions with the same changes.
type VersionRun struct {
	Lo, Hi int16 `json:"-"`
	// Versions is the run: "12" or "12-13".
	Versions string `json:"versions"`
	// New: a version the base does not have, whose changes are against the version before it
	// (Against), or none when it has none (the first version of a new message).
	New     bool     `json:"new,omitempty"`
	Against *int16   `json:"against,omitempty"`
	Changes []Change `json:"fields"`
}

// Compare says what s changes against base, for each definition of s that base does not hold
// (s is base WithDir a directory).
func Compare(base, s *Set) *Comparison {
	c := &Comparison{Headers: []MessageComparison{}, APIs: []APIComparison{}, Same: []string{}}
	for _, h := range [][2]*Message{{base.RequestHeader, s.RequestHeader}, {base.ResponseHeader, s.ResponseHeader}} {
		c.Headers = append(c.Headers, c.message(h[0], h[1])...)
	}
	for _, a := range s.APIs() {
		b := base.API(a.Key)
		ac := APIComparison{Key: a.Key, Name: a.Name, New: b == nil}
		var br, bs *Message
		if b != nil {
			br, bs = b.Request, b.Response
		}
		ac.Messages = append(c.message(br, a.Request), c.message(bs, a.Response)...)
		if len(ac.Messages) > 0 {
			c.APIs = append(c.APIs, ac)
		}
	}
	return c
}

// message compares m with the base's b (nil when the base has none): one comparison per file
// that m holds and b does not, when it changes something; the files that change nothing go
// to c.Same.
func (c *Comparison) message(b, m *Message) []MessageComparison {
	if m == nil || m == b {
		return nil
	}
	var baseDefs []*Message
	if b != nil {
		baseDefs = b.Definitions()
	}
	var out []MessageComparison
	for _, d := range m.Definitions() {
		if slices.Contains(baseDefs, d) {
			continue
		}
		mc := MessageComparison{Name: d.Name, Type: d.Type, Source: d.Source, Versions: d.ValidVersions.String(), New: b == nil}
		if b != nil {
			for _, r := range b.ValidVersions.Minus(d.ValidVersions) {
				if b.Has(r.Lo) {
					mc.Kept = append(mc.Kept, r.String())
				}
			}
		}
		for v := d.ValidVersions.Lo; !d.ValidVersions.Empty() && v <= d.ValidVersions.Latest(); v++ {
			if m.At(v) != d {
				continue // another file of the directory took this version
			}
			mc.Runs = mc.addRun(compareVersion(b, m, d, v))
		}
		if len(mc.Runs) == 0 && !mc.New && len(mc.Kept) == 0 {
			c.Same = append(c.Same, d.Source)
			continue
		}
		out = append(out, mc)
	}
	return out
}

// compareVersion says what version v of definition d (part of m) changes against b.
func compareVersion(b, m, d *Message, v int16) VersionRun {
	run := VersionRun{Lo: v, Hi: v}
	switch {
	case b != nil && b.Has(v):
		run.Changes = Changes(b.Paths(v, ""), d.Paths(v, ""))
	case m.Has(v - 1):
		prev := v - 1
		run.New, run.Against = true, &prev
		run.Changes = Changes(m.Paths(prev, ""), d.Paths(v, ""))
	default:
		run.New = true
	}
	return run
}

// addRun appends r to the runs, or extends the last run when r continues it with the same
// changes. Versions of the base that do not change are left out; new versions are kept each.
func (mc *MessageComparison) addRun(r VersionRun) []VersionRun {
	if !r.New && len(r.Changes) == 0 {
		return mc.Runs
	}
	if n := len(mc.Runs); n > 0 && !r.New {
		last := &mc.Runs[n-1]
		if !last.New && last.Hi == r.Lo-1 && slices.Equal(last.Changes, r.Changes) {
			last.Hi = r.Hi
			last.Versions = versionText(last.Lo, last.Hi)
			return mc.Runs
		}
	}
	if r.Changes == nil {
		r.Changes = []Change{}
	}
	r.Versions = versionText(r.Lo, r.Hi)
	return append(mc.Runs, r)
}

// versionText is "3" or "3-5".
func versionText(lo, hi int16) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}
