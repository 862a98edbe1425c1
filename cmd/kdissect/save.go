package main

import (
	"fmt"
	"io"
	"os"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/dissect"
)

// exportOptions are -w and -c of the capture command: write the packets of the messages shown,
// and stop after so many messages.
type exportOptions struct {
	write string
	count int
}

func (e *exportOptions) register(fs *flag.FlagSet) {
	fs.StringVarP(&e.write, "write", "w", "", "write the packets that carry the messages shown (with their connections' handshakes) to this pcapng file")
	fs.IntVarP(&e.count, "count", "c", 0, "stop after this many messages shown")
}

// open creates the -w file, refusing one of the captures to read; done closes it and says how
// many packets it holds. Without -w, both are nil.
func (e *exportOptions) open(captures []string, stderr io.Writer) (save *dissect.Save, done func() error, err error) {
	if e.write == "" {
		return nil, nil, nil
	}
	if out, err := os.Stat(e.write); err == nil {
		for _, c := range captures {
			if in, err := os.Stat(c); err == nil && os.SameFile(in, out) {
				return nil, nil, fmt.Errorf("-w %s: that is a capture being read", e.write)
			}
		}
	}
	f, err := os.Create(e.write)
	if err != nil {
		return nil, nil, err
	}
	save = dissect.NewSave(f)
	return save, func() error {
		err := save.Close()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("-w %s: %w", e.write, err)
		}
		fmt.Fprintf(stderr, "kdissect: %d packets written to %s\n", save.Written(), e.write)
		return nil
	}, nil
}
