package schema

import "flag"

// update is accepted by every test package so that "go test ./... -update" (which rewrites the
// golden files of the packages that have them) runs everywhere.
var update = flag.Bool("update", false, "rewrite golden files")

var _ = update
