package linelog

import "flag"

// update is accepted by every test package so that "go test ./... -update", which rewrites the
// golden files of the packages that have them, runs here too; this package has none.
var _ = flag.Bool("update", false, "rewrite golden files (none in this package)")
