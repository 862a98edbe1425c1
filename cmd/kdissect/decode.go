package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/render"
)

type decodeOptions struct {
	common
	api     string
	version int
}

func runDecode(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o := &decodeOptions{}
	fs := flag.NewFlagSet("kdissect decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.register(fs, render.Formats()[0].Name)
	fs.StringVar(&o.api, "api", "", "decode the frames as responses of this API (name or key)")
	fs.IntVar(&o.version, "api-version", -1, "the API version of the responses (with --api)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "kdissect decode: "+format+"\n", a...)
		return 1
	}
	c, err := o.codec()
	if err != nil {
		return fail("%v", err)
	}
	name, in := "stdin", stdin
	if fs.NArg() > 1 {
		return fail("one input file at most")
	}
	if fs.NArg() == 1 {
		name = fs.Arg(0)
		f, err := os.Open(name)
		if err != nil {
			return fail("%v", err)
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return fail("%s: %v", name, err)
	}
	// Hex text is told from binary frames by its bytes: a binary frame starts with its size
	// prefix, whose first byte is 0x00 for any frame under 16 MiB and never a hex digit or white
	// space for one under 150 MB.
	if isHexText(data) {
		clean := strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, string(data))
		if data, err = hex.DecodeString(clean); err != nil {
			return fail("%s: not hex: %v", name, err)
		}
	}
	var key, version int16 = -1, -1
	if o.api != "" {
		a, err := c.Schemas.Lookup(o.api)
		if err != nil {
			return fail("--api: %v", err)
		}
		if o.version < 0 {
			return fail("--api needs --api-version")
		}
		key, version = a.Key, int16(o.version)
	}
	_, out, err := o.output(stdout)
	if err != nil {
		return fail("%v", err)
	}
	status := 0
	for off, i := 0, 0; off < len(data); i++ {
		if len(data)-off < 4 {
			status = fail("%s: offset %d: %d bytes left, too few for a size prefix", name, off, len(data)-off)
			break
		}
		size := int(int32(binary.BigEndian.Uint32(data[off:])))
		end := off + 4 + size
		if size < 0 || end > len(data) {
			status = fail("%s: offset %d: frame of %d bytes, but %d bytes are left", name, off, size, len(data)-off-4)
			break
		}
		frame := data[off:end]
		e := &render.Entry{Frame: i + 1, FirstFrame: i + 1, Src: name, Dst: fmt.Sprintf("offset %d", off), Request: key < 0, Bytes: frame}
		if key < 0 {
			e.Msg = c.DecodeRequest(frame)
		} else {
			e.Msg = c.DecodeResponse(frame, key, version)
		}
		if err := out.Message(e); err != nil {
			return fail("%v", err)
		}
		off = end
	}
	if err := out.Close(); err != nil {
		return fail("%v", err)
	}
	if bytes.Equal(data, nil) {
		return fail("%s: no input", name)
	}
	return status
}
