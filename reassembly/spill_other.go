//go:build !(linux || darwin || freebsd)

package reassembly

import (
	"errors"
	"os"
)

// spillMaps: no mapped files here, so Options.SpillOver is ignored and frames stay on the heap.
const spillMaps = false

func mapFile(*os.File, int) ([]byte, error) { return nil, errors.New("not supported") }

func unmap([]byte) error { return nil }
