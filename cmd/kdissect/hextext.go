package main

// isHexText reports whether data is hex digits and white space only, so that kdissect decode
// reads it as hex text rather than as binary frames.
func isHexText(data []byte) bool {
	digits := false
	for _, c := range data {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			digits = true
		case c == ' ', c == '\t', c == '\n', c == '\r', c == '\v', c == '\f':
		default:
			return false
		}
	}
	return digits
}
