package codec

import (
	"encoding/binary"
	"sync"
)

// NameScan reads the frames of one connection only for the topic names they give topic ids
// (TopicIDNames): a cheap first pass over a capture file, so that a Fetch v13+ early in the file
// is shown with the names a Metadata response gives later. A request is read by its header; a
// message is decoded (shallow) only when its definition at its version holds both a topic name
// and a topic id. It is not safe for concurrent use.
type NameScan struct {
	c *Codec
	// pending holds the requests whose responses can name topic ids, by correlation id.
	pending map[int32]apiVersion
}

type apiVersion struct{ key, version int16 }

// NewNameScan starts scanning a connection. c should be shallow: only names and ids are read.
func (c *Codec) NewNameScan() *NameScan {
	return &NameScan{c: c, pending: map[int32]apiVersion{}}
}

// ClientFrame takes a whole frame from the client and returns the names it teaches.
func (s *NameScan) ClientFrame(frame []byte) []TopicIDName {
	h, err := s.c.parseRequestHeader(frame)
	if err != nil || !h.Known {
		return nil
	}
	req, resp := s.c.namesIDs(h.APIKey, h.Version)
	if resp {
		if len(s.pending) >= maxPending {
			clear(s.pending) // a connection whose responses were not captured
		}
		s.pending[h.CorrelationID] = apiVersion{h.APIKey, h.Version}
	}
	if !req {
		return nil
	}
	return s.names(s.c.DecodeRequest(frame))
}

// ServerFrame takes a whole frame from the broker and returns the names it teaches.
func (s *NameScan) ServerFrame(frame []byte) []TopicIDName {
	if len(frame) < 8 {
		return nil
	}
	corr := int32(binary.BigEndian.Uint32(frame[4:]))
	p, ok := s.pending[corr]
	if !ok {
		return nil
	}
	delete(s.pending, corr)
	return s.names(s.c.DecodeResponse(frame, p.key, p.version))
}

// names returns what m teaches, and gives its nodes back.
func (s *NameScan) names(m *Message) []TopicIDName {
	out := m.TopicIDNames()
	s.c.Release(m)
	return out
}

// idNames says, per API key and version, whether a request and a response of it can hold both
// a topic name and a topic id (namesTopicIDs), made once per Codec.
type idNames struct {
	once sync.Once
	m    map[apiVersion][2]bool
}

// namesIDs reports whether a request and a response of API key at version can name topic ids.
func (c *Codec) namesIDs(key, version int16) (request, response bool) {
	c.ids.once.Do(func() {
		c.ids.m = map[apiVersion][2]bool{}
		for _, a := range c.Schemas.APIs() {
			vs := a.Versions()
			for v := max(vs.Lo, 0); v <= min(vs.Hi, 1000); v++ { // "N+" ranges end at 32767
				var both [2]bool
				if a.Request != nil && a.Request.ValidVersions.Contains(v) {
					both[0] = namesTopicIDs(a.Request.Body, v, 0)
				}
				if a.Response != nil && a.Response.ValidVersions.Contains(v) {
					both[1] = namesTopicIDs(a.Response.Body, v, 0)
				}
				if both[0] || both[1] {
					c.ids.m[apiVersion{a.Key, v}] = both
				}
			}
		}
	})
	both := c.ids.m[apiVersion{key, version}]
	return both[0], both[1]
}
