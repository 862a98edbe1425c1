package main

import flag "github.com/spf13/pflag"

// tlsOptions is --tls-keylog, shared by the capture and live commands (cli.KeyLog reads it).
type tlsOptions struct {
	keylog string
}

func (o *tlsOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.keylog, "tls-keylog", "", "decrypt TLS with the secrets of this key log (NSS format, as SSLKEYLOGFILE writes it); pcapng Decryption Secrets Blocks are used too")
}
