package main

import (
	"fmt"
	"io"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/reassembly/tlsdec"
)

// tlsOptions is --tls-keylog, shared by the capture and live commands.
type tlsOptions struct {
	keylog string
}

func (o *tlsOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.keylog, "tls-keylog", "", "decrypt TLS with the secrets of this key log (NSS format, as SSLKEYLOGFILE writes it); pcapng Decryption Secrets Blocks are used too")
}

// keys reads the key log, if one was given; with follow, it is read again when a connection's
// secrets are not found (a live capture, while the application appends to it). A file none
// of whose lines can be read is an error; a few bad lines are a warning.
func (o *tlsOptions) keys(follow bool, stderr io.Writer) (*tlsdec.KeyLog, error) {
	if o.keylog == "" {
		return tlsdec.NewKeyLog(), nil
	}
	k, err := tlsdec.OpenKeyLog(o.keylog, follow)
	switch {
	case k == nil:
		return nil, fmt.Errorf("--tls-keylog: %w", err)
	case err != nil && k.Len() == 0:
		return nil, fmt.Errorf("--tls-keylog: not a key log: %w", err)
	case err != nil:
		fmt.Fprintf(stderr, "kdissect: --tls-keylog: %v (the other lines are used)\n", err)
	case k.Len() == 0 && !follow:
		fmt.Fprintf(stderr, "kdissect: --tls-keylog: %s holds no secrets\n", o.keylog)
	}
	return k, nil
}
