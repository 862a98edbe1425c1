package codec

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// kerrDiffers lists where kerr is not Kafka's word: code 6 was renamed by KIP-392, and kerr's
// retriable flags for these codes differ from the Java client's exception classes
// (RetriableException or not), which this table follows.
var kerrDiffers = map[int16]bool{6: true, 8: true, 51: true, 122: true, 123: true}

// TestErrorCodesAgainstKerr checks the table against franz-go's kerr, an independent list.
func TestErrorCodesAgainstKerr(t *testing.T) {
	codes := ErrorCodes()
	if len(codes) < 130 {
		t.Fatalf("only %d error codes", len(codes))
	}
	for _, c := range codes {
		if c.Code == 0 {
			if c.Name != "NONE" {
				t.Errorf("code 0 is %s", c.Name)
			}
			continue
		}
		k := kerr.ErrorForCode(c.Code)
		ke, ok := k.(*kerr.Error)
		if !ok {
			t.Errorf("kerr does not know code %d (%s)", c.Code, c.Name)
			continue
		}
		if (ke.Message != c.Name || ke.Retriable != c.Retriable) && !kerrDiffers[c.Code] {
			t.Errorf("code %d: table says %s retriable=%v, kerr says %s retriable=%v", c.Code, c.Name, c.Retriable, ke.Message, ke.Retriable)
		}
	}
	if got := ErrorName(16); got != "NOT_COORDINATOR" {
		t.Errorf("ErrorName(16) = %s", got)
	}
	if got := ErrorName(9999); got != "UNKNOWN_ERROR_CODE(9999)" {
		t.Errorf("ErrorName(9999) = %s", got)
	}
}

// TestErrorAbout: every error has exactly one description, and errors.txt names no error the
// table lacks (a misspelt name would leave its error without one).
func TestErrorAbout(t *testing.T) {
	known := map[string]bool{}
	for _, c := range ErrorCodes() {
		known[c.Name] = true
		if c.About == "" || strings.Contains(c.About, "\n") {
			t.Errorf("%d %s: description %q, want one line", c.Code, c.Name, c.About)
		}
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(errorAbout, "\n") {
		name, _, ok := strings.Cut(l, "\t")
		if !ok || strings.HasPrefix(l, "#") {
			continue
		}
		if !known[name] {
			t.Errorf("errors.txt describes %s, which is not in the table", name)
		}
		if seen[name] {
			t.Errorf("errors.txt describes %s twice", name)
		}
		seen[name] = true
	}
}

func TestLookupError(t *testing.T) {
	for _, tt := range []struct {
		in   string
		code int16
		ok   bool
	}{
		{"3", 3, true}, {"-1", -1, true}, {"UNKNOWN_TOPIC_OR_PARTITION", 3, true},
		{"not_coordinator", 16, true}, {"9999", 0, false}, {"-2", 0, false}, {"NO_SUCH_ERROR", 0, false},
	} {
		e, ok := LookupError(tt.in)
		if ok != tt.ok || ok && e.Code != tt.code {
			t.Errorf("LookupError(%q) = %d %v, want %d %v", tt.in, e.Code, ok, tt.code, tt.ok)
		}
	}
}
