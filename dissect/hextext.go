package dissect

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// The forms of hex text that people paste, which Frames.Decode reads as the bytes they show:
//
//	0000001e 00120003 ...                  hex digits, spaced anyhow (xxd -p)
//	0x00, 0x00, 0x00, 0x1e ... or 0x0000001e...   0x before each byte or run (xxd -i, C arrays)
//	00000000: 0000 001e 0012 0003  ....    xxd: offsets, hex groups, the text column
//	00000000  00 00 00 1e 00 12  |....|    hexdump -C: offsets, bytes, the text column
//
// The offsets of a dump are checked against the bytes read before them, so that a line lost
// in the pasting is said, not decoded around.

// dumpForm is a form of hex text.
type dumpForm int

const (
	plainHex dumpForm = iota // hex digits, 0x runs, separators
	xxdDump                  // 00000010: 6973 7365  issect
	hexdumpC                 // 00000010  69 73 73 65  |isse|
)

// isText reports whether data is printable ASCII and white space: hex text in one of its
// forms, or text that is not hex. A binary frame never is: its size prefix starts with 0x00
// for any frame under 16 MiB, and with a printable byte only above 500 MB.
func isText(data []byte) bool {
	for _, c := range data {
		if (c < 0x20 || c > 0x7e) && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f' {
			return false
		}
	}
	return len(data) > 0
}

// hexText returns the bytes that the hex text data shows, in any of its forms; an error says
// on what line, and why, the text is not hex.
func hexText(data []byte) ([]byte, error) {
	text := string(data)
	// xxd -i and C arrays: the bytes are between the braces.
	if open, close := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}'); open >= 0 && close > open {
		text = text[open+1 : close]
	}
	lines := strings.Split(text, "\n")
	form := formOf(lines)
	var out []byte
	var err error
	if form == plainHex {
		out, err = appendTokens(nil, text)
	} else {
		for i, line := range lines {
			if out, err = appendLine(out, line, form); err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
		}
	}
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("no hex digits")
	}
	return out, err
}

// formOf tells the form from the first line that is not blank.
func formOf(lines []string) dumpForm {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		offset, rest, _ := strings.Cut(l, " ")
		switch {
		case strings.HasSuffix(offset, ":") && isHexDigits(offset[:len(offset)-1]):
			return xxdDump
		case len(offset) >= 7 && isHexDigits(offset) && strings.HasPrefix(rest, " ") && strings.Contains(rest, "|"):
			return hexdumpC
		}
		return plainHex
	}
	return plainHex
}

// appendLine appends the bytes of one line of a dump in form to out.
func appendLine(out []byte, line string, form dumpForm) ([]byte, error) {
	line = strings.TrimSpace(line)
	switch line {
	case "":
		return out, nil
	case "*":
		return nil, fmt.Errorf("* stands for repeated lines, which the dump left out: dump again with them (xxd without -a, hexdump -v -C)")
	}
	var offset, rest string
	if form == xxdDump {
		offset, rest, _ = strings.Cut(line, ":")
		// The text column follows the hex groups after two spaces.
		rest, _, _ = strings.Cut(strings.TrimLeft(rest, " "), "  ")
	} else {
		offset, rest, _ = strings.Cut(line, " ")
		rest, _, _ = strings.Cut(rest, "|")
	}
	at, err := strconv.ParseUint(offset, 16, 64)
	if err != nil {
		return nil, fmt.Errorf("%q is not a dump's offset", offset)
	}
	if at != uint64(len(out)) {
		return nil, fmt.Errorf("offset %#x, but %#x bytes come before it: a line is missing or repeated", at, len(out))
	}
	for _, group := range strings.Fields(rest) {
		b, err := hex.DecodeString(group)
		if err != nil {
			return nil, fmt.Errorf("%q is not hex", group)
		}
		out = append(out, b...)
	}
	return out, nil
}

// appendTokens appends the bytes of plain hex text: digits spaced anyhow (even inside a byte),
// or runs that start with 0x (one byte each, or many), parted by white space or commas. An
// error names the line.
func appendTokens(out []byte, text string) ([]byte, error) {
	var digits strings.Builder
	for i, line := range strings.Split(text, "\n") {
		for _, tok := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || isSpace(r) }) {
			if err := addToken(&digits, tok); err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
		}
	}
	if digits.Len()%2 == 1 {
		return nil, fmt.Errorf("an odd number of hex digits (%d)", digits.Len())
	}
	b, err := hex.DecodeString(digits.String())
	return append(out, b...), err
}

// addToken adds the hex digits of one token of plain hex text to digits.
func addToken(digits *strings.Builder, tok string) error {
	run, prefixed := strings.CutPrefix(tok, "0x")
	if !prefixed {
		run, prefixed = strings.CutPrefix(tok, "0X")
	}
	if !isHexDigits(run) {
		return fmt.Errorf("%q is not hex", tok)
	}
	switch {
	case !prefixed:
		digits.WriteString(run)
		return nil
	case len(run) == 1:
		run = "0" + run // 0x1, as a C array may write a byte
	case len(run)%2 == 1:
		return fmt.Errorf("%q has an odd number of hex digits", tok)
	}
	if digits.Len()%2 == 1 {
		return fmt.Errorf("%q follows an odd number of hex digits", tok)
	}
	digits.WriteString(run)
	return nil
}

// isSpace reports whether r is white space in hex text.
func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\v' || r == '\f' }

// isHexDigits reports whether s is hex digits only, at least one.
func isHexDigits(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}
