package dissect

import (
	"bytes"
	"errors"
	"io"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/reassembly"
)

// learnNames is the first pass over a capture file: it reassembles the file's connections and
// learns the topic names its messages give topic ids (codec.NameScan), so that the pass that
// shows the file gives a name to every topic id the file names anywhere: a Fetch v13+ before
// the Metadata response that names its topics too. It decodes only the messages that can name
// topic ids, shallow, and leaves every problem for the second pass to report. Input that can
// be read once (stdin, a FIFO, a live capture) is not scanned.
func (p *Pipeline) learnNames(name string) {
	r, err := capture.Open(name)
	if err != nil {
		return // the second pass says why
	}
	defer r.Close()
	if p.names.scan == nil {
		p.names.scan = codec.New(p.codec.Schemas)
		p.names.scan.Shallow = true // only the fields that name topics are read
	}
	s := &nameScanner{codec: p.names.scan, convs: map[*reassembly.Conn]*codec.NameScan{}, names: &p.names.names}
	opt := p.options()
	opt.ReuseFrames = true // nothing is kept
	asm := reassembly.New(s, opt)
	var clock reassembly.FlushClock
	for {
		seg, err := r.Next()
		var pe *capture.PacketError
		switch {
		case err == io.EOF:
			asm.Close()
			p.names.names.LearntAll()
			return
		case errors.As(err, &pe):
			continue
		case err != nil:
			asm.Close()
			return
		}
		for _, sec := range r.Secrets() {
			if sec.Type == capture.SecretsTLSKeyLog {
				p.cfg.Keys.Parse(bytes.NewReader(sec.Data)) // errors: the second pass reports them
			}
		}
		asm.Add(seg)
		if t := seg.Info.Timestamp; clock.Due(t) {
			asm.Flush(t)
		}
	}
}

// nameScanner is the first pass's reassembly.Handler: frames go to each connection's NameScan,
// and what they teach to the pipeline's topic names.
type nameScanner struct {
	codec *codec.Codec
	convs map[*reassembly.Conn]*codec.NameScan
	names *codec.TopicNames
}

func (s *nameScanner) Open(c *reassembly.Conn) (toServer, toClient reassembly.Checker) {
	s.convs[c] = s.codec.NewNameScan()
	// The framer's judge of frame boundaries after a gap: a conversation that is told nothing,
	// which judges frames by their headers and their decoding alone.
	cv := s.codec.NewConversation()
	return func(head []byte, synced bool) wire.Verdict { return cv.Check(true, head, synced) },
		func(head []byte, synced bool) wire.Verdict { return cv.Check(false, head, synced) }
}

func (s *nameScanner) Frame(f reassembly.Frame) {
	scan := s.convs[f.Conn]
	if scan == nil {
		return
	}
	if f.Dir == reassembly.ToServer {
		s.names.Add(scan.ClientFrame(f.Data))
	} else {
		s.names.Add(scan.ServerFrame(f.Data))
	}
}

func (s *nameScanner) Notice(reassembly.Notice) {}

func (s *nameScanner) Close(c *reassembly.Conn) { delete(s.convs, c) }
