package render

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/kdissect/kdissect/internal/testutil"
)

// update rewrites the golden files under testdata/ ("go test ./... -update" passes it to every
// package).
var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), got, *update)
}
