package main

import (
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeGroupsV6 is the example of the reference wire diagram
// the project started from (DescribeGroups v6 response) as a frame: the body encoded by
// kmsg, after a response header v1 built by hand (correlation id, empty tagged fields).
func describeGroupsV6() []byte {
	resp := kmsg.NewPtrDescribeGroupsResponse()
	resp.Version = 6
	g := kmsg.NewDescribeGroupsResponseGroup()
	msg := "NETWORK_EXCEPTION"
	g.ErrorMessage = &msg
	g.Group, g.State, g.ProtocolType, g.Protocol = "order-processors", "Stable", "consumer", "<protocol-metadata>"
	m := kmsg.NewDescribeGroupsResponseGroupMember()
	m.MemberID, m.ClientID, m.ClientHost = "consumer-1-abc123", "my-app-producer", "192.168.1.100"
	m.ProtocolMetadata, m.MemberAssignment = []byte("<metadata>"), []byte("<assignment>")
	g.Members = append(g.Members, m)
	g.AuthorizedOperations = 2
	resp.Groups = append(resp.Groups, g)
	body := resp.AppendTo(nil)
	frame := binary.BigEndian.AppendUint32(nil, uint32(4+1+len(body)))
	frame = binary.BigEndian.AppendUint32(frame, 7) // correlation id
	frame = append(frame, 0)                        // header tagged fields
	return append(frame, body...)
}

// diagramLine is a field line of the diagram with --hex: offset, size, raw bytes, type, field.
type diagramLine struct {
	off, size int
	bytes     string
	typ, name string
	value     string
}

// parseDiagram reads the field lines of a diagram drawn with --hex. The columns are found from
// the column names, so that values with spaces are read whole.
func parseDiagram(t *testing.T, out string) []diagramLine {
	t.Helper()
	var cols []int // start of bytes, type, field, value
	var lines []diagramLine
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "offset ") {
			cols = nil
			for _, name := range []string{" bytes ", " type ", " field ", " value"} {
				cols = append(cols, strings.Index(l, name)+1)
			}
			continue
		}
		if !strings.HasPrefix(l, "0x") || cols == nil {
			continue
		}
		r := []rune(l)
		at := func(i, j int) string {
			if i >= len(r) {
				return ""
			}
			if j < 0 || j > len(r) {
				j = len(r)
			}
			return strings.TrimSpace(string(r[i:j]))
		}
		off, err := strconv.ParseInt(l[2:6], 16, 64)
		if err != nil {
			t.Fatalf("bad offset: %q", l)
		}
		size, _ := strconv.Atoi(at(6, cols[0]))
		lines = append(lines, diagramLine{off: int(off), size: size, bytes: at(cols[0], cols[1]),
			typ: at(cols[1], cols[2]), name: at(cols[2], cols[3]), value: at(cols[3], -1)})
	}
	return lines
}

// TestDecodeDescribeGroupsDiagram decodes the reference example with kdissect decode --hex and
// reads the diagram back: each line's offset plus its size is the next line's offset, the last
// ends at the frame's end, the bytes column holds the frame's bytes there, and the values are
// the example's.
func TestDecodeDescribeGroupsDiagram(t *testing.T) {
	frame := describeGroupsV6()
	var out, errOut strings.Builder
	code := run([]string{"decode", "--hex", "--api", "DescribeGroups", "--api-version", "6"}, strings.NewReader(string(frame)), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := parseDiagram(t, out.String())
	if len(lines) == 0 {
		t.Fatalf("no field lines:\n%s", out.String())
	}
	next := 0
	for i, l := range lines {
		if l.off != next {
			t.Errorf("line %d (%s): offset 0x%04x, want 0x%04x", i, l.name, l.off, next)
		}
		next = l.off + l.size
		if l.bytes != "" {
			want := hex.EncodeToString(frame[l.off : l.off+min(l.size, 16)])
			if got := strings.TrimSuffix(l.bytes, "…"); got != want {
				t.Errorf("line %d (%s): bytes %s, want %s", i, l.name, got, want)
			}
		}
	}
	if next != len(frame) {
		t.Errorf("the lines end at 0x%04x, the frame at 0x%04x", next, len(frame))
	}
	if !strings.Contains(out.String(), "DescribeGroups Response v6  correlation_id 7  "+strconv.Itoa(len(frame))+" bytes") {
		t.Errorf("no title:\n%s", out.String())
	}
	want := []struct{ name, typ, value string }{
		{"message_size", "int32", strconv.Itoa(len(frame) - 4)},
		{"correlation_id", "int32", "7"},
		{"_tagged_fields", "tagged_fields", "0"},
		{"ThrottleTimeMs", "int32", "0"},
		{"Groups", "compact_array", "1 item"},
		{"Groups[0]", "struct", ""},
		{"ErrorCode", "int16", "0 NONE"},
		{"ErrorMessage", "compact_nullable_string", `"NETWORK_EXCEPTION"`},
		{"GroupId", "compact_string", `"order-processors"`},
		{"GroupState", "compact_string", `"Stable"`},
		{"ProtocolType", "compact_string", `"consumer"`},
		{"ProtocolData", "compact_string", `"<protocol-metadata>"`},
		{"Members", "compact_array", "1 item"},
		{"Members[0]", "struct", ""},
		{"MemberId", "compact_string", `"consumer-1-abc123"`},
		{"GroupInstanceId", "compact_nullable_string", "null"},
		{"ClientId", "compact_string", `"my-app-producer"`},
		{"ClientHost", "compact_string", `"192.168.1.100"`},
		// A consumer group's, but not the consumer protocol: "<m" is no version it knows, read
		// as the newest, "etad" no count that fits the 4 bytes left.
		{"MemberMetadata", "compact_bytes", `"<metadata>"  [not a ConsumerProtocolSubscription v15469: Topics: array of 1702125924 elements cannot fit in the 4 bytes left]`},
		{"MemberAssignment", "compact_bytes", `"<assignment>"  [not a ConsumerProtocolAssignment v15457: AssignedPartitions: array of 1936943463 elements cannot fit in the 6 bytes left]`},
		{"_tagged_fields", "tagged_fields", "0"},
		{"AuthorizedOperations", "int32", "2"},
		{"_tagged_fields", "tagged_fields", "0"},
		{"_tagged_fields", "tagged_fields", "0"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d field lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if l := lines[i]; l.name != w.name || l.typ != w.typ || l.value != w.value {
			t.Errorf("line %d: %s %s %q, want %s %s %q", i, l.typ, l.name, l.value, w.typ, w.name, w.value)
		}
	}
	if !strings.Contains(out.String(), "\n0000  "+spacedHex(frame[:16])+"   ") {
		t.Errorf("no hex dump of the frame:\n%s", out.String())
	}
	golden(t, "DescribeGroups-v6-response.diagram", []byte(out.String()))
}

func spacedHex(b []byte) string {
	var parts []string
	for _, c := range b {
		parts = append(parts, hex.EncodeToString([]byte{c}))
	}
	return strings.Join(parts, " ")
}

// TestDiagramFlags checks the diagram flags on the same frame.
func TestDiagramFlags(t *testing.T) {
	frame := describeGroupsV6()
	tests := []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{"default is the diagram", nil, []string{"offset size type", "0x0004    4 int32"}, []string{"\n0000  00 00"}},
		{"short hex flag", []string{"-x"}, []string{"offset size bytes", "\n0000  00 00"}, nil},
		{"max bytes", []string{"--max-bytes", "5"}, []string{`"order"… (16 bytes)`, `"<meta"… (10 bytes)`}, []string{`"order-processors"`}},
		{"no cut", []string{"--max-bytes", "0"}, []string{`"order-processors"`}, []string{"…"}},
		{"summary", []string{"--format", "summary"}, []string{"Response DescribeGroups v6"}, []string{"offset size"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"decode", "--api", "DescribeGroups", "--api-version", "6"}, tt.args...)
			var out, errOut strings.Builder
			if code := run(args, strings.NewReader(string(frame)), &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out.String(), w) {
					t.Errorf("output has %q:\n%s", w, out.String())
				}
			}
		})
	}
}
