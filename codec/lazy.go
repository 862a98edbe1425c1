package codec

// Records decoded when they are shown (Codec.LazyRecords). A Fetch response of a consumer
// reading a backlog holds megabytes of records, and its whole tree would be held from the
// moment it is decoded until the last byte of its output is written, in every message in flight
// between the shards and the output. With LazyRecords the interpreter leaves each records field
// unexpanded: its node is complete (name, type, offset, size, prefix, value) but has no
// children, and the message remembers where its bytes are. A renderer that writes the tree
// expands one records field at a time into nodes of its own, writes them and reuses the nodes
// for the next (Message.ExpandRecords); whoever needs the whole tree expands all of it
// (Message.Expand). Either way the nodes and the warnings are those of a decode without
// LazyRecords.

// lazyRecords is a records field left unexpanded.
type lazyRecords struct {
	node *Node
	data []byte // the field's content, in the frame
	base int    // frame offset of data[0]
	// warn is where the field's warnings go in Message.Warnings: the number of warnings
	// before it in a decode without LazyRecords.
	warn int
	// done: its warnings are in Message.Warnings.
	done bool
}

// lazy records n, whose content is b, as a records field to expand later.
func (d *decoder) lazy(n *Node, b []byte) {
	n.later = true
	*d.lazyRecords = append(*d.lazyRecords, lazyRecords{node: n, data: b, base: n.Offset + int(n.PrefixSize), warn: len(*d.warnings)})
}

// Unexpanded reports whether m holds records fields not expanded yet (Codec.LazyRecords).
func (m *Message) Unexpanded() bool { return len(m.lazy) > 0 }

// Expand expands every records field of m that is still unexpanded into m's own tree, as a
// decode without Codec.LazyRecords would have: for those that read the whole tree (facts,
// filters, statistics).
func (m *Message) Expand() {
	for i := range m.lazy {
		l := &m.lazy[i]
		l.node.Children, l.node.later = m.expand(i, m.nodes), false
	}
	m.lazy = nil
}

// ExpandRecords returns the children of n. For a records field that m holds unexpanded, they
// are decoded now, from nodes taken from scratch, and n is left as it was: the caller writes
// them, then calls scratch.Reset before the next records field (the nodes, not the values
// taken from them, are reused). The first expansion of a field adds its warnings to
// m.Warnings, where a decode without LazyRecords puts them; so a renderer writes the warnings
// after the fields. For any other node, ExpandRecords returns n.Children, and lazy is false.
func (m *Message) ExpandRecords(n *Node, scratch *Nodes) (children []*Node, lazy bool) {
	if !n.later {
		return n.Children, false
	}
	// Renderers walk the tree in the order it was decoded: the field is mostly the one after
	// the last expanded.
	for k := range m.lazy {
		i := (m.lazyNext + k) % len(m.lazy)
		if m.lazy[i].node == n {
			m.lazyNext = i + 1
			return m.expand(i, scratch), true
		}
	}
	return n.Children, false
}

// expand decodes lazy field i into nodes, and puts its warnings in m.Warnings the first time.
func (m *Message) expand(i int, nodes *Nodes) []*Node {
	l := &m.lazy[i]
	children, ws := m.records.DecodeRecords(l.data, l.base, nodes)
	if l.done || len(ws) == 0 {
		l.done = true
		return children
	}
	l.done = true
	m.Warnings = append(m.Warnings[:l.warn], append(ws, m.Warnings[l.warn:]...)...)
	for j := i + 1; j < len(m.lazy); j++ {
		m.lazy[j].warn += len(ws) // the fields after it keep their warnings after its
	}
	return children
}

// Reset gives back every node taken from a, to be taken again: nodes and child lists taken
// before must not be used after it.
func (a *Nodes) Reset() { a.release() }

// lazyRecordSet counts the records of n, a records field m holds unexpanded, into r without
// expanding it: from its batches' headers when the decoder can count them (RecordsCounter),
// else from a decode into scratch. Its warnings are left for the expansion to add. It reports
// whether the field holds any entry (a record set is counted only then).
func (m *Message) lazyRecordSet(n *Node, r *RecordSet, scratch *Nodes) bool {
	for i := range m.lazy {
		if l := &m.lazy[i]; l.node == n {
			var children []*Node
			if c, ok := m.records.(RecordsCounter); ok {
				children = c.CountRecords(l.data, l.base, scratch)
			} else {
				children, _ = m.records.DecodeRecords(l.data, l.base, scratch)
			}
			r.count(children, false)
			scratch.Reset()
			return len(children) > 0
		}
	}
	return false
}
