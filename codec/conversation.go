package codec

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
)

// Pending is a request that awaits its response.
type Pending struct {
	APIKey        int16
	Version       int16
	CorrelationID int32
	// Ref is the caller's reference to the request (its packet, its time).
	Ref any
	// session is what a Fetch request does to its fetch session, and the session as it will
	// be if the response accepts it.
	session     *SessionStep
	sessionNext *fetchSession
	// protocolType is the protocol type of the request's group, when the conversation knows
	// it: for a response that does not state it (decodeEmbedded).
	protocolType string
}

// Conversation follows the Kafka exchange on one TCP connection: which requests await their
// responses, and whether the connection is in the raw SASL phase that follows SaslHandshake v0
// (length-prefixed tokens without Kafka headers). It is not safe for concurrent use.
type Conversation struct {
	c       *Codec
	paged   Paged // the memory of the frames being given (SetPaged)
	pending map[int32]Pending
	order   []int32 // correlation ids in the order they were sent, to bound the map
	saslRaw bool
	// seen lists the API versions this client has used, most recent first, to infer the API of
	// a response whose request was not captured.
	seen []Pending
	// maxCorr is the highest correlation id of the requests seen that decoded cleanly
	// (sawRequest): clients number their requests upwards, which helps to tell a frame from
	// bytes inside a body. Bytes decoded as a request by mistake do not count.
	maxCorr    int32
	sawRequest bool
	// sessions follows the connection's fetch sessions.
	sessions sessionState
	// groups holds the protocol type of each group the client joined on this connection
	// (JoinGroup requests), for its SyncGroup requests before v5, which do not state it.
	groups map[string]string
}

// maxGroups bounds the groups a conversation remembers.
const maxGroups = 256

// maxDecodeCheck bounds the frames Check decodes to judge them: the framer may ask about many
// candidates in a row.
const maxDecodeCheck = 64 << 10

// maxCorrLead is how far above the requests seen a response's correlation id may be when the
// framer looks for a frame: the requests it answers may still wait behind a gap of their own.
// Small, because bytes of a body often read as ids of a few thousand.
const maxCorrLead = 64

// maxPending bounds the requests remembered per connection; the oldest are forgotten first.
const maxPending = 4096

// NewConversation starts following a connection.
func (c *Codec) NewConversation() *Conversation {
	return &Conversation{c: c, pending: map[int32]Pending{}}
}

// Result is what a frame turned out to be.
type Result struct {
	// Msg is the decoded request or response, or the raw SASL token (a message of its own,
	// named "SASL token", with SASLToken set); never nil.
	Msg *Message
	// SASLToken marks a raw SASL token (after SaslHandshake v0).
	SASLToken bool
	// Request is the request a response answers; nil if it was not captured.
	Request *Pending
	// NoResponse marks a request the broker will not answer (Produce with acks=0).
	NoResponse bool
	// Session is what a Fetch request does to its fetch session, or, on its response, how the
	// broker answered; nil for messages without a session.
	Session *SessionStep
}

// SetPaged says that the frames given from now on are in p (nil: on the heap): their messages
// give back the memory of their records as they are decoded and written (see Paged).
func (cv *Conversation) SetPaged(p Paged) { cv.paged = p }

// ClientFrame takes a whole frame sent by the client.
func (cv *Conversation) ClientFrame(frame []byte, ref any) Result {
	if cv.saslRaw {
		if h, err := cv.c.parseRequestHeader(frame); err != nil || !h.Known {
			return Result{SASLToken: true, Msg: cv.c.saslMessage(frame, false)}
		}
		cv.saslRaw = false // a Kafka request: authentication is over
	}
	m := cv.c.decodeRequest(frame, cv.paged)
	protocol := cv.groupProtocol(m)
	cv.c.decodeEmbedded(m, frame, protocol)
	r := Result{Msg: m}
	cv.remember(m.APIKey, m.Version)
	if len(m.Warnings) == 0 && (!cv.sawRequest || m.CorrelationID > cv.maxCorr) {
		cv.maxCorr, cv.sawRequest = m.CorrelationID, true
	}
	// After the correlation ids: the session's warnings say nothing of the frame's bytes.
	steps, next := cv.sessions.fetchRequest(m)
	if steps != nil {
		r.Session = &steps[0]
	}
	if m.APIKey == KeyProduce {
		if n := Find(m.Fields[m.HeaderFields:], "Acks"); n != nil && n.Value == int64(0) {
			r.NoResponse = true
			return r
		}
	}
	if _, ok := cv.pending[m.CorrelationID]; ok {
		// A correlation id used again before its answer: the newer request replaces the older
		// one, in the order too, so that the order never names a request twice.
		cv.forget(m.CorrelationID)
	}
	if len(cv.order) >= maxPending {
		delete(cv.pending, cv.order[0])
		cv.order = cv.order[1:]
	}
	pend := Pending{APIKey: m.APIKey, Version: m.Version, CorrelationID: m.CorrelationID, Ref: ref, sessionNext: next, protocolType: protocol}
	if steps != nil {
		// A copy: the caller may change the step it is given (names for topic ids) while the
		// response is awaited, on another goroutine.
		steps[1] = steps[0]
		pend.session = &steps[1]
	}
	cv.pending[m.CorrelationID] = pend
	cv.order = append(cv.order, m.CorrelationID)
	return r
}

// ServerFrame takes a whole frame sent by the broker.
func (cv *Conversation) ServerFrame(frame []byte) Result {
	var corr int32
	if len(frame) >= 8 {
		corr = int32(binary.BigEndian.Uint32(frame[4:]))
	}
	p, ok := cv.pending[corr]
	if !ok {
		if cv.saslRaw {
			return Result{SASLToken: true, Msg: cv.c.saslMessage(frame, true)}
		}
		if m := cv.infer(frame, corr); m != nil {
			return Result{Msg: m}
		}
		m := &Message{Response: true, Size: len(frame), APIKey: -1, APIName: "Unknown", CorrelationID: corr}
		d := &decoder{b: frame, end: len(frame), warnings: &m.Warnings, nodes: &Nodes{}}
		if d.need(8, "header", wire.Int32) {
			m.Fields = []*Node{
				{Name: "message_size", Type: wire.Int32, Size: 4, Value: int64(len(frame) - 4)},
				{Name: schema.FieldCorrelationID, Type: wire.Int32, Offset: 4, Size: 4, Value: int64(corr)},
			}
			m.HeaderFields = 2
			if len(frame) > 8 {
				m.Fields = append(m.Fields, &Node{Name: "undecoded", Type: wire.Bytes, Offset: 8, Size: len(frame) - 8, Value: frame[8:]})
			}
			d.warn(4, "no captured request has correlation id %d: API unknown, body not decoded", corr)
		}
		return Result{Msg: m}
	}
	cv.forget(corr)
	m := cv.c.decodeResponse(frame, p.APIKey, p.Version, cv.paged)
	cv.c.decodeEmbedded(m, frame, p.protocolType)
	if p.APIKey == KeySaslHandshake && p.Version == 0 {
		// SaslHandshake v0 succeeded: the tokens that follow travel without Kafka headers.
		if n := Find(m.Fields[m.HeaderFields:], "ErrorCode"); n != nil && n.Value == int64(0) {
			cv.saslRaw = true
		}
	}
	r := Result{Msg: m, Request: &p}
	if p.session != nil {
		r.Session = cv.sessions.fetchResponse(m, p.session, p.sessionNext)
	}
	return r
}

// groupProtocol returns the protocol type of the group of request m, "" when it is not known
// or m is not a JoinGroup or SyncGroup request, and remembers what a JoinGroup states.
func (cv *Conversation) groupProtocol(m *Message) string {
	if m.APIKey != KeyJoinGroup && m.APIKey != KeySyncGroup || m.HeaderFields > len(m.Fields) {
		return ""
	}
	group := ""
	if n := Find(m.Fields[m.HeaderFields:], "GroupId"); n != nil {
		group, _ = n.Value.(string)
	}
	typ, stated := m.ProtocolType()
	switch {
	case !stated:
		return cv.groups[group]
	case m.APIKey == KeyJoinGroup:
		if cv.groups == nil {
			cv.groups = map[string]string{}
		}
		if _, ok := cv.groups[group]; !ok && len(cv.groups) >= maxGroups {
			clear(cv.groups) // a client in hundreds of groups on one connection: start again
		}
		cv.groups[group] = typ
	}
	return typ
}

// forget drops a pending request.
func (cv *Conversation) forget(corr int32) {
	delete(cv.pending, corr)
	for i, c := range cv.order {
		if c == corr {
			cv.order = append(cv.order[:i], cv.order[i+1:]...)
			break
		}
	}
}

// remember puts an API version first in cv.seen, which keeps the 16 most recent. The list is
// changed in place: a client's requests would otherwise each copy it.
func (cv *Conversation) remember(key, version int16) {
	const most = 16
	p := Pending{APIKey: key, Version: version}
	i := slices.IndexFunc(cv.seen, func(s Pending) bool { return s.APIKey == key && s.Version == version })
	switch {
	case i == 0:
		return
	case i < 0 && len(cv.seen) < most:
		cv.seen = append(cv.seen, Pending{})
		i = len(cv.seen) - 1
	case i < 0:
		i = most - 1 // the least recent goes
	}
	copy(cv.seen[1:i+1], cv.seen[:i])
	cv.seen[0] = p
}

// infer decodes a response whose request was not captured, when exactly one of the API versions
// this client is known to use decodes it cleanly: every byte consumed, no warning. A guess is
// said to be one.
func (cv *Conversation) infer(frame []byte, corr int32) *Message {
	var found *Message
	for _, s := range cv.seen {
		m := cv.c.DecodeResponse(frame, s.APIKey, s.Version)
		if len(m.Warnings) > 0 {
			continue
		}
		if found != nil && found.APIKey != m.APIKey {
			return nil // ambiguous
		}
		if found == nil {
			found = m
		}
	}
	if found != nil {
		found.Warnings = append(found.Warnings, Warning{Offset: 4, Msg: fmt.Sprintf(
			"the request with correlation id %d was not captured; decoded as %s v%d, the API this client uses that fits the bytes", corr, found.APIName, found.Version)})
	}
	return found
}

// Expects reports whether a frame from the broker answers a request this conversation has
// seen (or is a SASL token). A response that arrives before its request, as happens when
// reassembly delivers one direction late, can be held until the request has been seen.
func (cv *Conversation) Expects(frame []byte) bool {
	if cv.saslRaw || len(frame) < 8 {
		return true
	}
	_, ok := cv.pending[int32(binary.BigEndian.Uint32(frame[4:]))]
	return ok
}

// Answers reports whether a frame from the broker carries the correlation id of a frame from
// the client, read from where the headers put them, so that the pairing can tell a response
// that waits for this very request from one whose request was not captured.
func Answers(response, request []byte) bool {
	return len(response) >= 8 && len(request) >= 12 &&
		binary.BigEndian.Uint32(response[4:]) == binary.BigEndian.Uint32(request[8:])
}

// saslMessage describes a raw SASL token frame (after SaslHandshake v0): a size prefix and the
// token, with no Kafka header.
func (c *Codec) saslMessage(frame []byte, fromBroker bool) *Message {
	m := &Message{Response: fromBroker, APIKey: -1, APIName: "SASL token", Size: len(frame), HeaderFields: 1}
	m.Fields = []*Node{{Name: "message_size", Type: wire.Int32, Size: 4, Value: int64(len(frame) - 4)}}
	if len(frame) > 4 {
		n := &Node{Name: "token", Type: wire.Bytes, Offset: 4, Size: len(frame) - 4, Value: frame[4:]}
		decodeSASL(n, c.ShowSecrets)
		m.Fields, m.sasl = append(m.Fields, n), true
	}
	return m
}

// Check judges whether head (the first bytes of a candidate frame, size prefix included)
// starts a Kafka frame sent by the client (toServer) or by the broker. synced says the framer is
// in step with the stream; otherwise it is looking for a frame after a gap or at a mid-stream
// start, and the check is strict.
func (cv *Conversation) Check(toServer bool, head []byte, synced bool) wire.Verdict {
	if len(head) < 4 {
		return wire.NeedMore
	}
	size := int64(int32(binary.BigEndian.Uint32(head)))
	if toServer {
		return cv.checkRequest(head, size, synced)
	}
	if size < 0 || size > wire.MaxFrameSize {
		return wire.No
	}
	if cv.saslRaw && len(cv.pending) == 0 {
		return wire.Yes // a raw SASL token, which may be empty (the broker's answer to PLAIN)
	}
	if size < 4 {
		return wire.No
	}
	if len(head) < 8 {
		return wire.NeedMore
	}
	corr := int32(binary.BigEndian.Uint32(head[4:]))
	if synced {
		return wire.Yes
	}
	// Out of step, a response is never more than Weak, even with a pending correlation id: its
	// header is only a size and a correlation id, and inside a body (after a gap) eight bytes
	// of small numbers pass for both (0 is often pending). Believing one would swallow the
	// frames after it; the framer believes a Weak frame only when a plausible frame follows.
	// Clients number their requests upwards: a correlation id far above every request seen on
	// the connection answers none of them, which keeps most such bytes out. (Not just above:
	// the client's requests may wait behind a gap of their own.)
	if corr < 0 || (cv.sawRequest && int64(corr) > int64(cv.maxCorr)+maxCorrLead) {
		return wire.No
	}
	// The whole frame is there: a response to a pending request is believed when it decodes
	// as one, without a warning, and refused otherwise.
	if p, ok := cv.pending[corr]; ok && int64(len(head)) >= 4+size && size <= maxDecodeCheck {
		if len(cv.c.decodeResponse(head[:4+size], p.APIKey, p.Version, nil).Warnings) == 0 {
			return wire.Yes
		}
		return wire.No
	}
	return wire.Weak
}

func (cv *Conversation) checkRequest(head []byte, size int64, synced bool) wire.Verdict {
	if size < 0 || size > wire.MaxFrameSize {
		return wire.No
	}
	if cv.saslRaw {
		return wire.Yes // a raw SASL token, of any size
	}
	if size < 8 {
		return wire.No
	}
	if len(head) < 12 {
		return wire.NeedMore
	}
	key := int16(binary.BigEndian.Uint16(head[4:]))
	version := int16(binary.BigEndian.Uint16(head[6:]))
	corr := int32(binary.BigEndian.Uint32(head[8:]))
	if key < 0 || version < 0 {
		return wire.No
	}
	if synced {
		return wire.Yes // unknown keys and newer versions are shown, not refused
	}
	a := cv.c.Schemas.API(key)
	if a == nil || a.Request == nil || !a.Request.Has(version) || corr < 0 {
		return wire.No
	}
	// Clients number their requests upwards: after a gap, the next request has a higher
	// correlation id than every request seen. Runs of zeros inside a body (key 0, version 0,
	// correlation id 0) are kept out by this.
	if cv.sawRequest && corr <= cv.maxCorr {
		return wire.No
	}
	if cv.c.RequestHeaderVersion(key, version) == 0 {
		return wire.Weak
	}
	if len(head) < 14 {
		return wire.NeedMore
	}
	n := int(int16(binary.BigEndian.Uint16(head[12:])))
	if n < -1 || int64(n) > size-10 {
		return wire.No
	}
	if n > 0 {
		// The framer shows at most 64 bytes: a long client id is judged by its first bytes
		// (16 are enough), or it would never be judged at all.
		id := head[14:min(len(head), 14+n)]
		if len(id) < min(n, 16) {
			return wire.NeedMore
		}
		for len(id) > 0 {
			r, w := utf8.DecodeRune(id)
			if r == utf8.RuneError && w <= 1 {
				if !utf8.FullRune(id) && len(head) < 14+n {
					break // a character cut by the end of head
				}
				return wire.No
			}
			if r < 0x20 || r == 0x7f {
				return wire.No
			}
			id = id[w:]
		}
	}
	v := wire.Yes
	if n <= 0 {
		v = wire.Weak // an empty or null client id proves little: zeros are everywhere
	}
	// The whole frame is there: one that decodes without a warning is believed; one that does
	// not needs more than its header to be.
	if int64(len(head)) >= 4+size && size <= maxDecodeCheck {
		if len(cv.c.decodeRequest(head[:4+size], nil).Warnings) == 0 {
			return wire.Yes
		}
		if v == wire.Weak {
			return wire.No
		}
		return wire.Weak
	}
	return v
}

// detectWhole is the largest first frame detection waits for in full; a larger one is judged
// on its header alone.
const detectWhole = 60 << 10

// DetectRequest judges whether b, the first bytes one side of a connection on an unknown port
// sent, start with a Kafka request, and says why. It is stricter than Check: the API key and
// version must be known, the client id printable, and a frame that is all there must decode
// with no warning. strict (the bytes may start anywhere, not at the start of the stream)
// also refuses judging a frame on its header alone.
func (c *Codec) DetectRequest(b []byte, strict bool) (wire.Verdict, string) {
	if len(b) < 4 {
		return wire.NeedMore, ""
	}
	size := int64(int32(binary.BigEndian.Uint32(b)))
	if size < 8 || size > wire.MaxFrameSize {
		return wire.No, ""
	}
	if len(b) < 12 {
		return wire.NeedMore, ""
	}
	h, err := c.parseRequestHeader(b[:min(int64(len(b)), 4+size)])
	if err == errShortHeader && int64(len(b)) < 4+size {
		return wire.NeedMore, ""
	}
	if err != nil || !h.Known || h.CorrelationID < 0 || h.HeaderVersion == 0 {
		return wire.No, ""
	}
	if h.ClientID != nil && !Printable([]byte(*h.ClientID)) {
		return wire.No, ""
	}
	reason := fmt.Sprintf("%s v%d request", c.APIName(h.APIKey), h.Version)
	if h.ClientID != nil {
		reason += fmt.Sprintf(" from client id %q", *h.ClientID)
	}
	if int64(len(b)) >= 4+size {
		if len(c.decodeRequest(b[:4+size], nil).Warnings) > 0 {
			return wire.No, ""
		}
		return wire.Yes, reason
	}
	if size <= detectWhole {
		return wire.NeedMore, ""
	}
	if strict || h.ClientID == nil || *h.ClientID == "" {
		return wire.No, ""
	}
	return wire.Yes, reason + " (judged on its header: the frame is large)"
}
