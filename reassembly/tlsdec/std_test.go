package tlsdec

import (
	"bytes"
	"crypto/hkdf"
	"io"
	"os"
	"testing"
)

// stdExpand is HKDF-Expand from the standard library, to check expandLabel against.
func stdExpand(t testing.TB, s suite, secret, info []byte, n int) []byte {
	t.Helper()
	out, err := hkdf.Expand(s.hash, secret, string(info), n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(name string, b []byte) error { return os.WriteFile(name, b, 0o600) }

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
