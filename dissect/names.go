package dissect

import (
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/reassembly"
)

// learnNames is the first pass over a capture file: it reassembles the file's connections and
// learns the topic names its messages give topic ids (codec.NameScan), so that the pass that
// shows the file gives a name to every topic id the file names anywhere: a Fetch v13+ before
// the Metadata response that names its topics too. It decodes only the messages that can name
// topic ids, shallow, and leaves every problem for the second pass to report. Input that can
// be read once (stdin, a FIFO, a live capture) is not scanned. The names go to into; it
// reports whether the whole file was read.
func (p *Pipeline) learnNames(name string, into *codec.TopicNames) bool {
	r, err := capture.Open(name)
	if err != nil {
		return false // the second pass says why
	}
	defer r.Close()
	if p.names.scan == nil {
		p.names.scan = codec.New(p.codec.Schemas)
		p.names.scan.Shallow = true // only the fields that name topics are read
	}
	s := &nameScanner{codec: p.names.scan, convs: map[*reassembly.Conn]*codec.NameScan{}, names: into}
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
			return true
		case errors.As(err, &pe):
			continue
		case err != nil:
			asm.Close()
			return false
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

// learnFirst runs the first pass over a capture file before the file is shown (Plan.LearnNames),
// or puts it off (naming.deferred): most captures name each topic id before they use it, and
// are then read once. It is put off only where learning along the file gives the same names
// until an id is used before it is named (then the first pass runs, see naming.analyse): no
// name is known from an earlier file, which the first pass's names would replace, and r, a
// pcap file, holds no TLS secrets, which the first pass would take before the file is shown.
func (p *Pipeline) learnFirst(name string, r *capture.Reader) {
	if !p.cfg.Plan.LearnNames || capture.IsStreamName(name) {
		return // a FIFO can be read once
	}
	if r.HoldsSecrets() || p.names.names.Len() > 0 {
		if p.learnNames(name, &p.names.names) {
			p.names.names.LearntAll()
		}
		return
	}
	p.names.deferred = name
}

// learnDeferred runs the first pass put off for the file being read (learnFirst): the names
// it learns go to the ids not named along the file so far, as if it had run first.
func (p *Pipeline) learnDeferred() {
	name := p.names.deferred
	p.names.deferred = ""
	var whole codec.TopicNames
	all := p.learnNames(name, &whole)
	p.names.names.Fill(&whole)
	if all {
		p.names.names.LearntAll()
	}
}

// unnamed reports whether e uses a topic id that has no name yet, in its facts or its fetch
// session (analyse checks its field tree as it annotates it).
func (n *naming) unnamed(e *model.Entry) bool {
	// The partitions of a topic come one after another: its id is looked up once.
	var last codec.UUID
	missing := func(id codec.UUID) bool {
		if id == last {
			return false // named, or the zero id, which is never named
		}
		if _, ok := n.names.Name(id); !ok && id != (codec.UUID{}) {
			return true
		}
		last = id
		return false
	}
	if f := e.Facts; f != nil {
		if slices.ContainsFunc(f.TopicIDs, missing) {
			return true
		}
		for i := range f.RecordSets {
			if r := &f.RecordSets[i]; r.Topic == "" && missing(r.TopicID) {
				return true
			}
		}
	}
	if s := e.Session; s != nil {
		for _, ps := range [...][]codec.SessionPartition{s.Added, s.Updated, s.Forgotten} {
			for i := range ps {
				if sp := &ps[i]; sp.Topic == "" && missing(sp.TopicID) {
					return true
				}
			}
		}
		if ps := s.Partitions; len(ps) > 0 && !sameList(ps, n.namedSet) {
			for i := range ps {
				if sp := &ps[i]; sp.Topic == "" && missing(sp.TopicID) {
					return true
				}
			}
			n.namedSet = ps
		}
	}
	return false
}

// sameList reports whether a and b are the same list: the same memory, the same length.
func sameList[T any](a, b []T) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
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
