package main

import (
	"fmt"
	"io"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/render"
)

// registerPage registers the flags of the workshop page (--format html).
func (c *common) registerPage(fs *flag.FlagSet) {
	fs.IntVar(&c.maxMessages, "max-messages", render.DefaultMaxMessages, "html: how many messages the page holds; the others are counted and left out (0: no limit)")
}

// renderOptions are the options every renderer is made with.
func (c *common) renderOptions(w, stderr io.Writer) render.Options {
	return render.Options{Color: colorful(w), Hex: c.hex, MaxBytes: c.maxBytes, MaxMessages: c.maxMessages,
		Warn: func(s string) { fmt.Fprintf(stderr, "kdissect: %s\n", s) }}
}
