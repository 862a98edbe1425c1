package codec

import (
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec/schema"
)

// TestHeaderReason checks that the explanation of every API version's header agrees with the
// version RequestHeaderVersion and ResponseHeaderVersion choose: a reason that speaks of a
// tagged section must go with the flexible header, and each exception must be named.
func TestHeaderReason(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	c := New(set)
	checked := 0
	for _, a := range set.APIs() {
		for v := a.Versions().Lo; v <= a.Versions().Hi; v++ {
			for _, response := range []bool{false, true} {
				hv, flexHV := c.RequestHeaderVersion(a.Key, v), 2
				if response {
					hv, flexHV = c.ResponseHeaderVersion(a.Key, v), 1
				}
				why := c.HeaderReason(a.Key, v, response)
				tagged := strings.Contains(why, "ends in a tagged section")
				if tagged != (hv == flexHV) {
					t.Errorf("%s v%d response=%v: header v%d, explained as %q", a.Name, v, response, hv, why)
				}
				checked++
			}
		}
	}
	if checked < 500 {
		t.Fatalf("checked %d API versions; the embedded definitions have more", checked)
	}
	for _, tt := range []struct {
		key, version int16
		response     bool
		want         string
	}{
		{KeyControlledShutdown, 0, false, "predates the client id"},
		{KeyApiVersions, 4, true, "ApiVersions responses always use v0"},
		{KeyFetch, 12, true, "Fetch v12 is flexible (flexible versions 12+)"},
		{KeyFetch, 11, false, "Fetch v11 is not flexible (flexible versions 12+), so the header has no tagged section"},
		{9999, 0, false, "no definition for API key 9999"},
	} {
		if got := c.HeaderReason(tt.key, tt.version, tt.response); !strings.Contains(got, tt.want) {
			t.Errorf("HeaderReason(%d, %d, %v) = %q, want it to say %q", tt.key, tt.version, tt.response, got, tt.want)
		}
	}
}
