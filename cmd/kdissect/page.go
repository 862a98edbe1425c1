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

// pageOptions sets the page's options: its limit, and stderr for what it leaves out.
func (c *common) pageOptions(o *render.Options, stderr io.Writer) {
	o.MaxMessages = c.maxMessages
	o.Warn = func(s string) { fmt.Fprintf(stderr, "kdissect: %s\n", s) }
}
