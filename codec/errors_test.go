package codec

import (
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
