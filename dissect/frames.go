package dissect

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/internal/plural"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// Frames is the input of raw Kafka frames, as a program or a document holds them rather than
// a capture: each an int32 size prefix and that many bytes, one after another.
type Frames struct {
	Codec *codec.Codec
	Out   render.Renderer
	// APIKey and Version, when APIKey is not negative, say that the frames are responses of
	// that API and version; otherwise they are requests, which say what they are.
	APIKey, Version int16
	// Warn, when set, is told of each request that decodes with warnings but as a response of
	// some API cleanly: it may be a response given without its API.
	Warn func(error)
}

// InputError is an error in the frames given, as opposed to one writing the output.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputError(format string, a ...any) error { return &InputError{fmt.Errorf(format, a...)} }

// ReadFrames reads the whole input of frames: the named file, or stdin when name is "" or
// "-". It returns the name to show ("stdin" for stdin); an input with nothing in it is an
// error.
func ReadFrames(name string, stdin io.Reader) (string, []byte, error) {
	in := stdin
	if name == "" || name == "-" {
		name = "stdin"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return name, nil, err
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return name, nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) == 0 {
		return name, nil, fmt.Errorf("%s: no input", name)
	}
	return name, data, nil
}

// Decode shows each frame of data, the input called name; data may be hex text (hex digits
// and white space). It stops at a frame cut short (an InputError), or when the output cannot be
// written.
func (fr Frames) Decode(name string, data []byte) error {
	// Hex text is told from binary frames by its bytes (see isText), and read in any of the
	// forms people paste (see hexText).
	if isText(data) {
		b, err := hexText(data)
		if err != nil {
			return inputError("%s: neither hex text (digits, 0x bytes, xxd or hexdump -C output) nor binary frames: %v; as binary, its first four characters would claim a frame of %s",
				name, err, plural.Count(binary.BigEndian.Uint32(append(data[:min(4, len(data)):min(4, len(data))], 0, 0, 0, 0)), "byte"))
		}
		data = b
	}
	for off, i := 0, 0; off < len(data); i++ {
		if len(data)-off < 4 {
			return inputError("%s: offset %d: %s left, too few for a size prefix", name, off, plural.Count(len(data)-off, "byte"))
		}
		size := int(int32(binary.BigEndian.Uint32(data[off:])))
		end := off + 4 + size
		if size < 0 || end > len(data) {
			return inputError("%s: offset %d: frame of %s, but %s left", name, off, plural.Count(size, "byte"), plural.Count(len(data)-off-4, "byte")+plural.Pick(len(data)-off-4, " is", " are"))
		}
		frame := data[off:end]
		e := &model.Entry{Frame: i + 1, FirstFrame: i + 1, Src: name, Dst: fmt.Sprintf("offset %d", off), Request: fr.APIKey < 0, Bytes: frame}
		if e.Request {
			e.Msg = fr.Codec.DecodeRequest(frame)
			if fr.Warn != nil {
				e.Msg.Expand() // a warning of its records counts too
			}
			if len(e.Msg.Warnings) > 0 && fr.Warn != nil {
				if fits := responsesThatFit(fr.Codec, frame); len(fits) > 0 {
					fr.Warn(fmt.Errorf("%s: offset %d: not a clean request; if it is a response, say which API answers it with --api and --api-version (a response does not name its API). It decodes cleanly as: %s",
						name, off, strings.Join(fits, ", ")))
				}
			}
		} else {
			e.Msg = fr.Codec.DecodeResponse(frame, fr.APIKey, fr.Version)
		}
		if err := fr.Out.Message(e); err != nil {
			return err
		}
		off = end
	}
	return nil
}

// maxFits bounds the APIs a decode hint lists.
const maxFits = 6

// responsesThatFit lists the API versions whose response decodes the frame cleanly (every byte
// used, no warning), each API with its versions, as in "Heartbeat v0-v2": a frame that is not a
// clean request may be a response given without --api.
func responsesThatFit(c *codec.Codec, frame []byte) []string {
	var fits []string
	for _, a := range c.Schemas.APIs() {
		if a.Response == nil {
			continue
		}
		r := a.Versions()
		var vs []int16
		for v := r.Lo; v <= r.Latest(); v++ {
			if !a.Response.Has(v) {
				continue
			}
			m := c.DecodeResponse(frame, a.Key, v)
			if len(m.Warnings) == 0 {
				vs = append(vs, v)
			}
			c.Release(m)
		}
		if len(vs) == 0 {
			continue
		}
		if len(fits) == maxFits {
			return append(fits, "and more")
		}
		s := fmt.Sprintf("%s v%d", a.Name, vs[0])
		if len(vs) > 1 {
			s += fmt.Sprintf("-v%d", vs[len(vs)-1])
			if int(vs[len(vs)-1]-vs[0])+1 != len(vs) {
				s = fmt.Sprintf("%s (%d versions)", s, len(vs))
			}
		}
		fits = append(fits, s)
	}
	return fits
}
