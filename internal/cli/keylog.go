package cli

import (
	"fmt"
	"io"

	"github.com/kdissect/kdissect/reassembly/tlsdec"
)

// KeyLog reads the key log of --tls-keylog, if one was named; with follow, it is read again
// when a connection's secrets are not found (a live capture, while the application appends to
// it). A file none of whose lines can be read is an error; a few bad lines, or no secrets, a
// warning on stderr.
func KeyLog(name string, follow bool, stderr io.Writer) (*tlsdec.KeyLog, error) {
	if name == "" {
		return tlsdec.NewKeyLog(), nil
	}
	k, err := tlsdec.OpenKeyLog(name, follow)
	switch {
	case k == nil:
		return nil, fmt.Errorf("--tls-keylog: %w", err)
	case err != nil && k.Len() == 0:
		return nil, fmt.Errorf("--tls-keylog: not a key log: %w", err)
	case err != nil:
		fmt.Fprintf(stderr, "kdissect: --tls-keylog: %v (the other lines are used)\n", err)
	case k.Len() == 0 && !follow:
		fmt.Fprintf(stderr, "kdissect: --tls-keylog: %s holds no secrets\n", name)
	}
	return k, nil
}
