package codec

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
)

// draftDir holds the KIP draft of the shared reference folder, copied to a temp dir so that
// nothing else is loaded with it.
func draftDir(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "shared", "reference", "ConsumerGroupHeartbeatResponse-draft.json.txt")
	data, err := os.ReadFile(src)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("shared reference folder not beside the repository: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDraftNeedsAPIKey(t *testing.T) {
	set, _ := schema.Embedded()
	_, err := set.WithDir(draftDir(t), -1)
	if err == nil || !strings.Contains(err.Error(), "--api-key") {
		t.Fatalf("loading a TBD apiKey without --api-key: err = %v, want a hint to pass --api-key", err)
	}
}

// TestDraftDecodes loads the KIP draft with an API key and decodes a response encoded by hand.
func TestDraftDecodes(t *testing.T) {
	base, _ := schema.Embedded()
	set, err := base.WithDir(draftDir(t), 68)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.API(68).Response.Name; got != "ConsumerGroupHeartbeatResponse" {
		t.Fatalf("key 68 response is %s", got)
	}
	var b []byte
	be32 := func(v uint32) { b = binary.BigEndian.AppendUint32(b, v) }
	b = append(b, 0, 0, 0, 0)       // size, set below
	be32(42)                        // correlation_id
	b = append(b, 0)                // header tags
	be32(5)                         // ThrottleTimeMs
	b = append(b, 0, 0)             // ErrorCode
	b = append(b, 0)                // ErrorMessage: null
	b = append(b, 4, 'm', '-', '1') // MemberId "m-1"
	be32(3)                         // MemberEpoch
	b = append(b, 1)                // ShouldComputeAssignment
	be32(3000)                      // HeartbeatIntervalMs
	b = append(b, 1)                // Assignment present
	b = append(b, 0)                // Error
	b = append(b, 2)                // AssignedTopicPartitions: 1 element
	b = append(b, make([]byte, 15)...)
	b = append(b, 7) // TopicId ...07
	b = append(b, 3) // Partitions: 2
	be32(0)
	be32(1)
	b = append(b, 0)             // TopicPartitions tags
	b = append(b, 1)             // PendingTopicPartitions: empty
	b = append(b, 0, 1)          // MetadataVersion
	b = append(b, 3, 0xca, 0xfe) // MetadataBytes
	b = append(b, 0)             // Assignment tags
	b = append(b, 0)             // top-level tags
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))

	m := New(set).DecodeResponse(b, 68, 0)
	if len(m.Warnings) > 0 {
		t.Fatalf("warnings: %v", m.Warnings)
	}
	if d := checkTiling(m.Fields, len(b)); d != "" {
		t.Fatal(d)
	}
	want := map[string]string{
		"MemberId": "s:m-1", "MemberEpoch": "3", "HeartbeatIntervalMs": "3000",
		"ShouldComputeAssignment": "true", "MetadataBytes": "b:cafe", "TopicId": "u:00000000000000000000000000000007",
	}
	for name, w := range want {
		n := Find(m.Fields, name)
		if n == nil {
			t.Errorf("%s not decoded", name)
			continue
		}
		if got := scalarTok(n); got != w {
			t.Errorf("%s = %s, want %s", name, got, w)
		}
	}
	if n := Find(m.Fields, "ErrorMessage"); n == nil || n.Value != nil || n.Type != wire.CompactNullableString {
		t.Errorf("ErrorMessage = %+v, want a null compact_nullable_string", n)
	}
}
