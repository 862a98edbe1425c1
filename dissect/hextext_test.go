package dissect

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// frameBytes is a Metadata v12 request frame with text in it (the client id), so that dumps
// have a text column worth reading, and bytes that look like hex digits there.
var frameBytes = []byte("\x00\x00\x00\x1e\x00\x03\x00\x0c\x00\x00\x00\x07\x00\x0bcafe-bad 01\x02\x00\x00\x01\x01\x00\x7f\x80\xff")

// xxdDumpOf writes b as xxd does by default: an offset, eight groups of two bytes, two spaces
// and the text column, sixteen bytes a line; group bytes a group (xxd -g).
func xxdDumpOf(b []byte, group int) string {
	var s strings.Builder
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		fmt.Fprintf(&s, "%08x: ", off)
		var h strings.Builder
		for i := range line {
			if i > 0 && i%group == 0 {
				h.WriteByte(' ')
			}
			fmt.Fprintf(&h, "%02x", line[i])
		}
		width := 16*2 + (16/group - 1)
		fmt.Fprintf(&s, "%-*s  %s\n", width, h.String(), printable(line))
	}
	return s.String()
}

// hexdumpCOf writes b as hexdump -C does: an offset, sixteen bytes in two halves, the text
// column between bars, and the length on the last line.
func hexdumpCOf(b []byte) string {
	var s strings.Builder
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		var h strings.Builder
		for i := range line {
			if i == 8 {
				h.WriteByte(' ')
			}
			fmt.Fprintf(&h, " %02x", line[i])
		}
		fmt.Fprintf(&s, "%08x %-49s  |%s|\n", off, h.String(), printable(line))
	}
	fmt.Fprintf(&s, "%08x\n", len(b))
	return s.String()
}

// printable is a dump's text column: printable ASCII as it is, the rest as dots.
func printable(b []byte) string {
	return string(bytes.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '.'
		}
		return r
	}, b))
}

// perByte writes b as 0x bytes parted by sep, as C arrays and xxd -i do.
func perByte(b []byte, sep string) string {
	var parts []string
	for _, c := range b {
		parts = append(parts, fmt.Sprintf("0x%02x", c))
	}
	return strings.Join(parts, sep)
}

// TestHexText reads each form of hex text people paste back into the bytes it shows, and says
// on which line, and why, text is not hex.
func TestHexText(t *testing.T) {
	long := hex.EncodeToString(frameBytes)
	tests := []struct {
		name, in string
		err      string
	}{
		{"plain", long, ""},
		{"spaced anyhow", long[:5] + " " + long[5:9] + "\n\t" + long[9:] + "\r\n", ""},
		{"0x bytes", perByte(frameBytes, " "), ""},
		{"0x bytes, commas", perByte(frameBytes, ", "), ""},
		{"0x bytes on lines", strings.ReplaceAll(perByte(frameBytes, ",\n  "), "0x0", "0X0"), ""},
		{"one 0x run", "0x" + long, ""},
		{"C array", "unsigned char f[] = {\n  " + perByte(frameBytes, ", ") + "\n};\nunsigned int f_len = 38;\n", ""},
		{"xxd", xxdDumpOf(frameBytes, 2), ""},
		{"xxd -g1", xxdDumpOf(frameBytes, 1), ""},
		{"xxd -g4", xxdDumpOf(frameBytes, 4), ""},
		{"hexdump -C", hexdumpCOf(frameBytes), ""},
		{"not hex", "zz", `line 1: "zz" is not hex`},
		{"odd", "0001 2", "an odd number of hex digits (5)"},
		{"odd 0x run", "0x000", `line 1: "0x000" has an odd number of hex digits`},
		{"0x after half a byte", "0 0x01", `line 1: "0x01" follows an odd number of hex digits`},
		{"bad second line", "0001\n00zz", `line 2: "00zz" is not hex`},
		{"xxd, a line lost", xxdDumpOf(append(append([]byte{}, frameBytes...), frameBytes...), 2)[len("00000000: 0000 001e 0003 000c 0000 0007 000b 6361  ..............ca\n"):], "line 1: offset 0x10, but 0x0 bytes come before it"},
		{"hexdump, squeezed", "00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n00000020\n", "line 2: * stands for repeated lines"},
		{"empty", " \n", "no hex digits"},
	}
	for _, tt := range tests {
		got, err := hexText([]byte(tt.in))
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v\n%s", tt.name, err, tt.in)
		case tt.err == "" && !bytes.Equal(got, frameBytes):
			t.Errorf("%s: % x, want % x\n%s", tt.name, got, frameBytes, tt.in)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
		}
	}
}

// TestHexTextOfTools: the dumps of xxd and hexdump themselves, where they are installed, read
// back into the bytes dumped, and the forms the tests write are theirs.
func TestHexTextOfTools(t *testing.T) {
	for _, tool := range []struct {
		args  []string
		wrote string
	}{
		{[]string{"xxd"}, xxdDumpOf(frameBytes, 2)},
		{[]string{"xxd", "-g1"}, xxdDumpOf(frameBytes, 1)},
		{[]string{"xxd", "-g4"}, xxdDumpOf(frameBytes, 4)},
		{[]string{"xxd", "-p"}, ""},
		{[]string{"xxd", "-i"}, ""},
		{[]string{"hexdump", "-C"}, hexdumpCOf(frameBytes)},
		{[]string{"od", "-An", "-tx1"}, ""},
	} {
		if _, err := exec.LookPath(tool.args[0]); err != nil {
			t.Logf("%s is not installed: its form is read from the test's own dump only", tool.args[0])
			continue
		}
		cmd := exec.Command(tool.args[0], tool.args[1:]...)
		cmd.Stdin = bytes.NewReader(frameBytes)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", tool.args, err)
		}
		if got, err := hexText(out); err != nil || !bytes.Equal(got, frameBytes) {
			t.Errorf("%s: % x, %v; want % x\n%s", tool.args, got, err, frameBytes, out)
		}
		if tool.wrote != "" && tool.wrote != string(out) {
			t.Errorf("%s writes\n%s\nthe test writes\n%s", tool.args, out, tool.wrote)
		}
	}
}
