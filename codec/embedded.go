package codec

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
)

// The consumer protocol inside the group APIs. A classic group's members exchange their
// subscriptions and assignments as bytes the coordinator does not read: JoinGroup carries each
// member's metadata, SyncGroup the leader's assignments, DescribeGroups both. What the bytes
// hold depends on the group's protocol type; for "consumer" groups (Kafka's consumers, and
// every client that interoperates with them) it is a structure that package schema defines as
// data (ConsumerProtocolSubscription, ConsumerProtocolAssignment): an int16 version, then the
// fields in the classic encoding. The interpreter decodes such bytes by those definitions into
// children of the bytes node, at their offsets in the frame; the node keeps its value.

// ProtocolConsumer is the protocol type of groups whose members are consumers.
const ProtocolConsumer = "consumer"

// Names of the data definitions of the consumer protocol.
const (
	subscriptionDef = "ConsumerProtocolSubscription"
	assignmentDef   = "ConsumerProtocolAssignment"
)

// Group API keys whose messages carry the consumer protocol's bytes.
const (
	KeyJoinGroup      int16 = 11
	KeySyncGroup      int16 = 14
	KeyDescribeGroups int16 = 15
)

// embeddedField is a bytes field that carries a consumer protocol structure: the names from
// the message's body down to the field (an array's elements are walked through), and the
// definition of what the bytes hold. The group's protocol type is the nearest ProtocolType
// field on the way, if there is one.
type embeddedField struct {
	key      int16
	response bool
	path     []string
	def      string
}

var embeddedFields = [...]embeddedField{
	{KeyJoinGroup, false, []string{"Protocols", "Metadata"}, subscriptionDef},
	{KeyJoinGroup, true, []string{"Members", "Metadata"}, subscriptionDef},
	{KeySyncGroup, false, []string{"Assignments", "Assignment"}, assignmentDef},
	{KeySyncGroup, true, []string{"Assignment"}, assignmentDef},
	{KeyDescribeGroups, true, []string{"Groups", "Members", "MemberMetadata"}, subscriptionDef},
	{KeyDescribeGroups, true, []string{"Groups", "Members", "MemberAssignment"}, assignmentDef},
}

// protocolField is the name of the field that says a group's protocol type.
const protocolField = "ProtocolType"

// ProtocolType returns the protocol type m states in its body (JoinGroup requests, JoinGroup
// responses from v7, SyncGroup from v5); ok is false when it states none, or a null one.
func (m *Message) ProtocolType() (typ string, ok bool) {
	if m.HeaderFields > len(m.Fields) {
		return "", false
	}
	return protocolType(m.Fields[m.HeaderFields:])
}

// protocolType returns the value of a ProtocolType field among nodes.
func protocolType(nodes []*Node) (string, bool) {
	for _, n := range nodes {
		if n.Name == protocolField {
			s, ok := n.Value.(string)
			return s, ok
		}
	}
	return "", false
}

// decodeEmbedded decodes the consumer protocol's bytes in m, whose frame is frame. known is
// the group's protocol type as the conversation knows it ("" when it does not): for messages
// that do not state it themselves. Bytes of a group whose protocol type is not "consumer" are
// left alone; bytes of a group whose type is not known at all are decoded only when they
// parse exactly, at a version the definition knows. A shallow decode decodes only the bytes
// fields that Keep names: those an analysis reads.
func (c *Codec) decodeEmbedded(m *Message, frame []byte, known string) {
	if m.nodes == nil || m.HeaderFields > len(m.Fields) {
		return
	}
	for i := range embeddedFields {
		e := &embeddedFields[i]
		if e.key != m.APIKey || e.response != m.Response {
			continue
		}
		if c.Shallow && !slices.Contains(c.kept(m.APIKey, m.Response), e.path[len(e.path)-1]) {
			continue
		}
		def := c.Schemas.Data(e.def)
		if def == nil {
			continue
		}
		em := embedder{c: c, m: m, frame: frame, def: def}
		em.walk(m.Fields[m.HeaderFields:], e.path, known)
	}
}

// embedder decodes one kind of embedded field in one message.
type embedder struct {
	c     *Codec
	m     *Message
	frame []byte
	def   *schema.Message
}

// walk finds the fields path names among nodes (through arrays of structs) and decodes them;
// typ is the protocol type known so far.
func (em *embedder) walk(nodes []*Node, path []string, typ string) {
	if t, ok := protocolType(nodes); ok {
		typ = t
	}
	for _, n := range nodes {
		if n.Name != path[0] {
			continue
		}
		if len(path) == 1 {
			em.decode(n, typ)
			continue
		}
		for _, e := range n.Children {
			em.walk(e.Children, path[1:], typ)
		}
	}
}

// decode gives the bytes node n the nodes of the structure its bytes hold, when they hold one.
func (em *embedder) decode(n *Node, typ string) {
	data, ok := n.Value.([]byte)
	if !ok || len(data) == 0 || n.Secret || (typ != "" && typ != ProtocolConsumer) {
		return
	}
	start, size := n.Content()
	if size != len(data) || start < 0 || start+size > len(em.frame) {
		return // not the frame's bytes (cannot be, for a field the interpreter decoded)
	}
	exact := typ == "" // unknown protocol type: only a structure that fits every byte is taken
	children, note := em.structure(start, start+size, exact)
	if children != nil {
		n.Children = children
		em.m.embedded = true
	}
	if note != "" && (children != nil || !exact) {
		n.Note = note
	}
}

// structure decodes the frame's bytes from start to end as a version and em's definition at
// it. It returns the nodes, or nil when the bytes are not such a structure, and a note saying
// what they are or why they are not. A version newer than the definition's is read as the
// newest it knows, as Kafka's consumers do (newer versions only add fields at the end): its
// unknown bytes are left as "undecoded". exact refuses that, and any byte left over.
func (em *embedder) structure(start, end int, exact bool) ([]*Node, string) {
	name := em.def.Name
	if end-start < 2 {
		return nil, fmt.Sprintf("not a %s: %d byte, too short for its version", name, end-start)
	}
	version := int16(binary.BigEndian.Uint16(em.frame[start:]))
	v := version
	if !em.def.Has(v) {
		if exact || v < em.def.ValidVersions.Lo {
			return nil, fmt.Sprintf("not a %s: version %d", name, version)
		}
		v = em.def.ValidVersions.Latest()
	}
	def := em.def.At(v)
	var warnings []Warning
	d := &decoder{b: em.frame, pos: start + 2, end: end, version: v, flex: def.Flexible(v),
		warnings: &warnings, nodes: em.m.nodes, show: em.c.ShowSecrets, sasl: &em.m.sasl}
	kids := append(d.children(bodyCap(def.Body, nil)+2),
		d.node(Node{Name: "Version", Type: wire.Int16, Offset: start, Size: 2, Value: intValue(int64(version))}))
	kids = d.structBody(def.Body, nil, kids)
	switch {
	case d.failed || exact && len(warnings) > 0:
		return nil, fmt.Sprintf("not a %s v%d: %s", name, version, warnings[len(warnings)-1].Msg)
	case d.pos < end && exact:
		return nil, fmt.Sprintf("not a %s v%d: %d bytes after its fields", name, version, end-d.pos)
	case d.pos < end:
		kids = append(kids, d.node(Node{Name: "undecoded", Type: wire.Bytes, Offset: d.pos, Size: end - d.pos, Value: em.frame[d.pos:end]}))
	}
	note := fmt.Sprintf("%s v%d", name, version)
	if v != version {
		note += fmt.Sprintf(", read as v%d", v)
	}
	for _, w := range warnings {
		note += "; " + w.Msg // what the message's own warnings would say of a field of its own
	}
	return kids, note
}
