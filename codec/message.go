package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/plural"
)

// Codec decodes Kafka frames with one set of definitions. It is safe for concurrent use.
type Codec struct {
	Schemas *schema.Set
	// Records, when set, decodes the contents of records fields (record batches); without it
	// they are shown as bytes.
	Records RecordsDecoder
	// ShowSecrets keeps passwords, SCRAM proofs and token HMACs visible instead of redacted.
	ShowSecrets bool
	// Shallow builds nodes only for the fields that Message.Facts, TopicNames (learning,
	// notes, resolving), the pairing of responses with requests and the statistics read: topic
	// and group names, member and topic ids, error codes, partition numbers, records, Produce's
	// acks, FindCoordinator's keys, ApiVersions' client software and SASL tokens, inside the
	// structs and arrays that hold them (with only those children). Every other field is still
	// walked and checked (the same bytes consumed, the same warnings) but no node is made for
	// it and no string or bytes value is copied. The header is decoded whole. For outputs that
	// never show the field tree: summaries, statistics, filters. Secrets are not redacted in
	// a shallow tree, because their fields are not in it: Message.Redact does not mask them.
	Shallow bool
	// LazyRecords leaves records fields unexpanded in full decodes, to be expanded when they
	// are shown (see lazy.go): for renderers that expand them (Message.ExpandRecords). Others
	// call Message.Expand first. Shallow decodes ignore it.
	LazyRecords bool
	// Keep names fields that a shallow decode keeps besides its own, per API and direction:
	// those that analyses read (see Keeps). Set it before the first decode.
	Keep []Kept

	plans shallowPlans
	// ids says which messages can name topic ids (NameScan).
	ids idNames
	// released holds the Nodes of released messages (Release); recycled, the messages given
	// back whole (Recycle).
	released, recycled sync.Pool
	// values holds the *keptValues that decodes borrow, one each.
	values sync.Pool
}

// RecordsDecoder decodes the bytes of a records field: record batches or legacy message sets.
// Package codec/records provides one; it is an interface so that codec does not depend on the
// compression libraries.
type RecordsDecoder interface {
	// DecodeRecords returns the nodes that describe data, which starts at offset base of the
	// frame, taken from nodes (the message's; nil: fresh ones). The nodes tile data; problems
	// are returned as warnings, never as a panic.
	DecodeRecords(data []byte, base int, nodes *Nodes) ([]*Node, []Warning)
}

// RecordsCounter is a RecordsDecoder that also decodes a records field only as far as its
// record counts need: each batch's attributes and the record count its header states, nothing
// decompressed (legacy message sets, whose wrappers state no count, are decoded whole). Facts
// count a field left unexpanded (Codec.LazyRecords) this way.
type RecordsCounter interface {
	CountRecords(data []byte, base int, nodes *Nodes) []*Node
}

// New returns a Codec for the given definitions.
func New(s *schema.Set) *Codec { return &Codec{Schemas: s} }

// Message is one decoded Kafka request or response frame.
type Message struct {
	Response      bool
	APIKey        int16
	APIName       string // "Unknown(NN)" for a key without a definition
	Version       int16
	HeaderVersion int
	CorrelationID int32
	ClientID      *string // requests with header v1+ only
	Size          int     // bytes in the frame, size prefix included
	// Fields holds the size prefix, the header fields, then the body's fields.
	Fields []*Node
	// HeaderFields is how many of Fields belong to the size prefix and the header.
	HeaderFields int
	Warnings     []Warning
	// nodes holds the tree's nodes, for Codec.Release.
	nodes *Nodes
	// def is the body's definition (nil when the API key has none), for HeaderReason.
	def *schema.Message
	// lazy are the records fields left unexpanded (Codec.LazyRecords), in decode order;
	// records decodes them and lazyNext is where ExpandRecords looks first.
	lazy     []lazyRecords
	records  RecordsDecoder
	lazyNext int
	// paged, when set, holds the frame (Conversation.SetPaged).
	paged Paged
	// sasl reports that the tree holds a SASL token's nodes (decodeSASL): Facts looks for its
	// user only then. embedded reports that it holds the nodes of a structure carried in a
	// bytes field (decodeEmbedded), of another definition than m's.
	sasl, embedded bool
}

// HeaderReason says why m's header has the version it has: the API version's place in the
// definition's flexible versions, or the protocol's exceptions. It is empty for frames without
// a Kafka header (SASL tokens).
func (m *Message) HeaderReason() string {
	if m.HeaderFields <= 1 {
		return ""
	}
	kind := "request"
	if m.Response {
		kind = "response"
	}
	return fmt.Sprintf("%s header v%d: %s", kind, m.HeaderVersion, headerReason(m.APIName, m.APIKey, m.Version, m.Response, m.def))
}

// HeaderReason says why version v of API key's requests (or responses) use the header version
// RequestHeaderVersion (or ResponseHeaderVersion) gives them, as Message.HeaderReason does for
// a decoded message.
func (c *Codec) HeaderReason(key, v int16, response bool) string {
	var def *schema.Message
	if a := c.Schemas.API(key); a != nil {
		def = a.Request
		if response {
			def = a.Response
		}
	}
	return headerReason(c.APIName(key), key, v, response, def)
}

// headerReason explains the rule headerRuleOf finds for version v of the API named name; def
// is the message's definition (nil when the key has none).
func headerReason(name string, key, v int16, response bool, def *schema.Message) string {
	switch headerRuleOf(key, v, response, def != nil && def.Flexible(v)) {
	case headerNoClientID:
		return "ControlledShutdown v0 predates the client id"
	case headerAlwaysV0:
		return "ApiVersions responses always use v0, so that a client can read the answer of a broker that does not know the version it asked for"
	}
	switch {
	case def == nil:
		return fmt.Sprintf("no definition for API key %d, so taken as not flexible", key)
	case def.Flexible(v):
		return fmt.Sprintf("%s v%d is flexible (flexible versions %s), so the header ends in a tagged section", name, v, def.FlexibleVersions)
	}
	return fmt.Sprintf("%s v%d is not flexible (flexible versions %s), so the header has no tagged section", name, v, def.FlexibleVersions)
}

// headerRule is why an API version's requests or responses have the header version they have.
type headerRule int

const (
	headerPlain      headerRule = iota // not flexible: request header v1, response header v0
	headerFlexible                     // flexible: the header ends in tagged fields (v2, v1)
	headerNoClientID                   // ControlledShutdown v0 requests: v0, no client id
	headerAlwaysV0                     // ApiVersions responses: v0 whatever the version
)

// headerRuleOf is the one place that holds the protocol's exceptions to "flexible versions
// use the flexible header"; flexible says whether version v is flexible.
func headerRuleOf(key, v int16, response, flexible bool) headerRule {
	switch {
	case !response && key == KeyControlledShutdown && v == 0:
		return headerNoClientID
	case response && key == KeyApiVersions:
		return headerAlwaysV0
	case flexible:
		return headerFlexible
	}
	return headerPlain
}

// version is the header version the rule gives requests (or responses).
func (r headerRule) version(response bool) int {
	switch {
	case r == headerNoClientID || r == headerAlwaysV0:
		return 0
	case response && r == headerFlexible:
		return 1
	case response:
		return 0
	case r == headerFlexible:
		return 2
	}
	return 1
}

// Release gives the memory of m's field tree back to c, for the messages c decodes after it:
// m's nodes, and every node taken from them, must not be used again, and m keeps no fields. A
// caller that is done with a message as soon as it has read it (summaries, statistics) saves
// the allocation and the collection of every tree; no caller has to call it. Strings and other
// values taken from the nodes stay valid.
func (c *Codec) Release(m *Message) {
	a := m.nodes
	m.nodes, m.Fields, m.lazy = nil, nil, nil
	if a == nil {
		return // a tree made without a Nodes (SASL tokens, unexplained responses)
	}
	a.release()
	c.released.Put(a)
}

// Recycle gives m itself back to c, with its tree (see Release), for a message c decodes later:
// m must not be used again, and nothing may hold it, its nodes or its warnings. Strings taken
// from it stay valid. A caller that writes what it shows of a message and forgets it (a
// summary) saves an allocation per message.
func (c *Codec) Recycle(m *Message) {
	c.Release(m)
	*m = Message{}
	c.recycled.Put(m)
}

// newMessage returns a zero message: one given back by Recycle, or a new one.
func (c *Codec) newMessage() *Message {
	if m, ok := c.recycled.Get().(*Message); ok {
		return m
	}
	return new(Message)
}

// Compact moves m's tree out of its Nodes into memory taken from into, just large enough, and
// gives the Nodes back to c as Release does: for a tree that is read some time after it is decoded
// (by the analyses, once the pipeline shows it). Held in its Nodes, such a tree would keep
// slabs sized for the largest trees, however small it is. A tree with records left to expand
// (LazyRecords) or decompressed payloads (Inflated) is left where it is, and so is one that
// fills at least half of the slabs it was decoded into: copying it would save little.
func (c *Codec) Compact(m *Message, into *Arena) {
	a := m.nodes
	if a == nil || m.lazy != nil || len(a.inflated) > 0 {
		return
	}
	if used, held := a.used(); used*2 >= held {
		return
	}
	var nodes, lists int
	Walk(m.Fields, func(n *Node, _ int) bool {
		nodes++
		lists += len(n.Children)
		return true
	})
	t := treeCopy{nodes: take(&into.nodes, nodes), ptrs: take(&into.ptrs, lists+len(m.Fields))}
	m.Fields = t.list(m.Fields)
	m.nodes = nil
	a.release()
	c.released.Put(a)
}

// Arena is memory for the trees that Compact moves: chunks shared by the small trees that
// follow each other, so that each does not cost an allocation of its own. A chunk is collected
// once none of its trees is used. The zero value is ready to use; an Arena is for one
// goroutine at a time.
type Arena struct {
	nodes []Node
	ptrs  []*Node
}

// arenaChunk is the number of elements of an Arena's chunks; larger trees get memory of their
// own.
const arenaChunk = 256

// take returns an empty slice with room for exactly n elements, from the chunk *chunk or from
// a new one.
func take[T any](chunk *[]T, n int) []T {
	if n > arenaChunk/4 {
		return make([]T, 0, n)
	}
	if cap(*chunk)-len(*chunk) < n {
		*chunk = make([]T, 0, arenaChunk)
	}
	l := len(*chunk)
	*chunk = (*chunk)[:l+n]
	return (*chunk)[l : l : l+n]
}

// treeCopy copies trees into nodes and ptrs, whose capacities are what the trees need.
type treeCopy struct {
	nodes []Node
	ptrs  []*Node
}

// list copies the nodes of l, and what they hold; nil stays nil.
func (t *treeCopy) list(l []*Node) []*Node {
	if l == nil {
		return nil
	}
	at := len(t.ptrs)
	t.ptrs = t.ptrs[:at+len(l)]
	out := t.ptrs[at : at+len(l) : at+len(l)]
	for i, n := range l {
		t.nodes = append(t.nodes, *n)
		cp := &t.nodes[len(t.nodes)-1]
		cp.Children = t.list(n.Children)
		out[i] = cp
	}
	return out
}

// Inflated returns the compressed payloads of m's records with their decompressed bytes, in the
// order they were decoded (nil after Release, or when nothing was decompressed).
func (m *Message) Inflated() []Inflated {
	if m.nodes == nil {
		return nil
	}
	return m.nodes.inflated
}

// requestHeader is what the framer and the pairing need from a request: read without building
// a field tree.
type requestHeader struct {
	APIKey        int16
	Version       int16
	CorrelationID int32
	ClientID      *string
	HeaderVersion int
	// Known reports that the API key has a definition and the version is within its valid versions.
	Known bool
}

// errShortHeader is returned for a frame too short to hold a request header.
var errShortHeader = errors.New("frame too short for a Kafka request header")

// RequestHeaderVersion is the request header version an API version uses: 2 for flexible
// versions, 1 otherwise, and 0 for ControlledShutdown v0, which predates the client id.
func (c *Codec) RequestHeaderVersion(key, version int16) int {
	return headerRuleOf(key, version, false, c.flexible(key, version)).version(false)
}

// ResponseHeaderVersion is 1 for flexible versions and 0 otherwise; ApiVersions responses
// always use 0 so that a client can read the broker's answer whatever version it asked for.
func (c *Codec) ResponseHeaderVersion(key, version int16) int {
	return headerRuleOf(key, version, true, c.flexible(key, version)).version(true)
}

// flexible reports whether version v of API key is flexible (false for a key without a
// definition).
func (c *Codec) flexible(key, v int16) bool {
	a := c.Schemas.API(key)
	return a != nil && a.Flexible(v)
}

// parseRequestHeader reads the header of a request frame (size prefix included).
func (c *Codec) parseRequestHeader(frame []byte) (requestHeader, error) {
	if len(frame) < 12 {
		return requestHeader{}, errShortHeader
	}
	h := requestHeader{
		APIKey:        int16(binary.BigEndian.Uint16(frame[4:])),
		Version:       int16(binary.BigEndian.Uint16(frame[6:])),
		CorrelationID: int32(binary.BigEndian.Uint32(frame[8:])),
	}
	h.HeaderVersion = c.RequestHeaderVersion(h.APIKey, h.Version)
	if a := c.Schemas.API(h.APIKey); a != nil && a.Request != nil {
		h.Known = h.Version >= 0 && a.Request.Has(h.Version)
	}
	if h.HeaderVersion >= 1 {
		if len(frame) < 14 {
			return h, errShortHeader
		}
		n := int(int16(binary.BigEndian.Uint16(frame[12:])))
		if n >= 0 {
			if 14+n > len(frame) {
				return h, fmt.Errorf("client id of %s runs past the frame", plural.Count(n, "byte"))
			}
			s := string(frame[14 : 14+n])
			h.ClientID = &s
		} else if n < -1 {
			return h, fmt.Errorf("client id length %d", n)
		}
	}
	return h, nil
}

// APIName names an API key, or says it is unknown.
func (c *Codec) APIName(key int16) string {
	if a := c.Schemas.API(key); a != nil {
		return a.Name
	}
	return fmt.Sprintf("Unknown(%d)", key)
}

// DecodeRequest decodes a whole request frame, size prefix included. The consumer protocol's
// bytes it carries are decoded when the request says its group's protocol type is "consumer"
// or when they parse exactly as the consumer protocol (a Conversation knows more: it follows
// the group from its JoinGroup request).
func (c *Codec) DecodeRequest(frame []byte) *Message {
	m := c.decodeRequest(frame, nil)
	c.decodeEmbedded(m, frame, "")
	return m
}

// decodeRequest is DecodeRequest of a frame that is in paged memory (nil: on the heap).
func (c *Codec) decodeRequest(frame []byte, paged Paged) *Message {
	m := c.newMessage()
	m.Size, m.paged = len(frame), paged
	var key, version int16
	if len(frame) >= 8 {
		key = int16(binary.BigEndian.Uint16(frame[4:]))
		version = int16(binary.BigEndian.Uint16(frame[6:]))
	}
	m.APIKey, m.Version, m.APIName = key, version, c.APIName(key)
	m.HeaderVersion = c.RequestHeaderVersion(key, version)
	var body *schema.Message
	if a := c.Schemas.API(key); a != nil {
		body = a.Request
	}
	m.def = body
	kv := c.keptValues()
	c.decode(m, frame, c.Schemas.RequestHeader, body, kv)
	if n := topLevel(m.Fields[:m.HeaderFields], schema.FieldCorrelationID); n != nil {
		m.CorrelationID = int32(n.Value.(int64))
	}
	if n := topLevel(m.Fields[:m.HeaderFields], schema.FieldClientID); n != nil && n.Value != nil {
		m.ClientID = kv.strings.pointer(n.Value.(string))
	}
	c.values.Put(kv)
	return m
}

// DecodeResponse decodes a whole response frame, size prefix included, as the response to the
// given API key and version (learnt from the paired request). The consumer protocol's bytes
// are decoded as DecodeRequest says.
func (c *Codec) DecodeResponse(frame []byte, key, version int16) *Message {
	m := c.decodeResponse(frame, key, version, nil)
	c.decodeEmbedded(m, frame, "")
	return m
}

// decodeResponse is DecodeResponse of a frame that is in paged memory (nil: on the heap).
func (c *Codec) decodeResponse(frame []byte, key, version int16, paged Paged) *Message {
	m := c.newMessage()
	m.Response, m.Size, m.APIKey, m.Version, m.APIName, m.paged = true, len(frame), key, version, c.APIName(key), paged
	m.HeaderVersion = c.ResponseHeaderVersion(key, version)
	var body *schema.Message
	if a := c.Schemas.API(key); a != nil {
		body = a.Response
	}
	m.def = body
	kv := c.keptValues()
	c.decode(m, frame, c.Schemas.ResponseHeader, body, kv)
	c.values.Put(kv)
	if n := topLevel(m.Fields[:m.HeaderFields], schema.FieldCorrelationID); n != nil {
		m.CorrelationID = int32(n.Value.(int64))
	}
	if key == KeyApiVersions {
		c.nameAPIKeys(m)
	}
	return m
}

// nameAPIKeys notes the API's name beside each key an ApiVersions response lists.
func (c *Codec) nameAPIKeys(m *Message) {
	if arr := Find(m.Fields[m.HeaderFields:], "ApiKeys"); arr != nil {
		for _, e := range arr.Children {
			for _, n := range e.Children {
				if v, ok := n.Value.(int64); ok && n.Name == "ApiKey" {
					n.Note = c.APIName(int16(v))
				}
			}
		}
	}
}

// keptValues borrows values kept across decodes, to be put back in c.values.
func (c *Codec) keptValues() *keptValues {
	if kv, ok := c.values.Get().(*keptValues); ok {
		return kv
	}
	return new(keptValues)
}

// decode fills m from the frame: size prefix, header at m.HeaderVersion, then the body; kv
// keeps the values of UUIDs and strings.
func (c *Codec) decode(m *Message, frame []byte, header, body *schema.Message, kv *keptValues) {
	a, _ := c.released.Get().(*Nodes)
	if a == nil {
		a = &Nodes{}
	}
	m.nodes = a
	d := &decoder{records: c.Records, b: frame, end: len(frame), warnings: &m.Warnings, nodes: a, show: c.ShowSecrets, paged: m.paged,
		sasl: &m.sasl, values: kv}
	if c.LazyRecords && !c.Shallow && c.Records != nil {
		d.lazyRecords, m.records = &m.lazy, c.Records
	}
	if !d.need(4, "message_size", wire.Int32) {
		m.HeaderFields = len(m.Fields)
		return
	}
	// A message merged from several definitions (--schema-dir) has one per version.
	if h := header.At(int16(m.HeaderVersion)); h != nil {
		header = h
	}
	var def *schema.Message
	if body != nil {
		def = body.At(m.Version)
	}
	var plan *shallowPlan
	if c.Shallow && def != nil {
		plan = c.shallowPlan(def.Body)
	}
	// Room for the size, the header, the body and undecoded bytes.
	room := 1 + bodyCap(header.Body, nil) + 1
	if def != nil {
		room += bodyCap(def.Body, plan)
	}
	m.Fields = d.children(room)
	size := int(int32(binary.BigEndian.Uint32(frame)))
	m.Fields = append(m.Fields, d.node(Node{Name: "message_size", Type: wire.Int32, Offset: 0, Size: 4, Value: intValue(int64(size))}))
	d.pos = 4
	if size != len(frame)-4 {
		d.warn(0, "message_size says %s, the frame has %d", plural.Count(size, "byte"), len(frame)-4)
	}
	d.version = int16(m.HeaderVersion)
	d.flex = header.Flexible(d.version)
	m.Fields = d.structBody(header.Body, nil, m.Fields)
	m.HeaderFields = len(m.Fields)
	if d.failed {
		return
	}
	d.version = m.Version
	switch {
	case body == nil:
		d.warn(d.pos, "no definition for API key %d: body not decoded", m.APIKey)
	case def == nil:
		d.warn(d.pos, "%s v%d is outside the known versions %s: body not decoded", body.Name, m.Version, body.ValidVersions)
	default:
		d.flex = def.Flexible(m.Version)
		m.Fields = d.structBody(def.Body, plan, m.Fields)
		if !d.failed && d.pos < d.end {
			d.warn(d.pos, "%s after the end of %s v%d", plural.Count(d.end-d.pos, "byte"), def.Name, m.Version)
		}
	}
	if !d.failed && d.pos < d.end {
		m.Fields = append(m.Fields, d.node(Node{Name: "undecoded", Type: wire.Bytes, Offset: d.pos, Size: d.end - d.pos, Value: frame[d.pos:]}))
	}
}
