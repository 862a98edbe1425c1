package codec

import (
	"testing"

	"github.com/kdissect/kdissect/codec/schema"
)

// TestKeys checks the named API keys against the embedded definitions' names.
func TestKeys(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	c := New(set)
	for key, name := range map[int16]string{
		KeyProduce: "Produce", KeyFetch: "Fetch", KeyControlledShutdown: "ControlledShutdown",
		KeyFindCoordinator: "FindCoordinator", KeySaslHandshake: "SaslHandshake",
		KeyApiVersions: "ApiVersions", KeyShareFetch: "ShareFetch",
	} {
		if got := c.APIName(key); got != name {
			t.Errorf("API key %d is %s, named %s here", key, got, name)
		}
	}
}

func TestCarriesRecords(t *testing.T) {
	tests := []struct {
		key      int16
		response bool
		want     bool
	}{
		{KeyProduce, false, true},
		{KeyProduce, true, false},
		{KeyFetch, false, false},
		{KeyFetch, true, true},
		{KeyShareFetch, true, true},
		{KeyApiVersions, true, false},
	}
	for _, tt := range tests {
		if got := CarriesRecords(tt.key, tt.response); got != tt.want {
			t.Errorf("CarriesRecords(%d, %v) = %v", tt.key, tt.response, got)
		}
	}
}
