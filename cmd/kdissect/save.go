package main

import (
	"fmt"
	"io"
	"os"

	"github.com/kdissect/kdissect/dissect"
)

// openSave creates the -w file, name, refusing one of the captures to read; done closes it and
// says how many packets it holds. Without -w (name ""), both are nil.
func openSave(name string, captures []string, stderr io.Writer) (save *dissect.Save, done func() error, err error) {
	if name == "" {
		return nil, nil, nil
	}
	if out, err := os.Stat(name); err == nil {
		for _, c := range captures {
			if in, err := os.Stat(c); err == nil && os.SameFile(in, out) {
				return nil, nil, fmt.Errorf("-w %s: that is a capture being read", name)
			}
		}
	}
	f, err := os.Create(name)
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
			return fmt.Errorf("-w %s: %w", name, err)
		}
		fmt.Fprintf(stderr, "kdissect: %d packets written to %s\n", save.Written(), name)
		return nil
	}, nil
}
