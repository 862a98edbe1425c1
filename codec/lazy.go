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
	n.flags |= later
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
		l.node.Children = m.expand(i, m.nodes)
		l.node.flags &^= later
	}
	m.lazy = nil
}

// ExpandRecords returns the children of n. For a records field that m holds unexpanded, they
// are decoded now, from nodes taken from scratch, and n is left as it was: the caller writes
// them, then calls scratch.Reset before the next records field (the nodes, not the values
// taken from them, are reused; but a scratch that EachRecord has used may decompress into
// the buffer of a batch it gave back). The first expansion of a field adds its warnings to
// m.Warnings, where a decode without LazyRecords puts them; so a renderer writes the warnings
// after the fields. For any other node, ExpandRecords returns n.Children, and lazy is false.
func (m *Message) ExpandRecords(n *Node, scratch *Nodes) (children []*Node, lazy bool) {
	if !n.Unexpanded() {
		return n.Children, false
	}
	if i := m.find(n); i >= 0 {
		return m.expand(i, scratch), true
	}
	return n.Children, false
}

// find returns the index of n in m.lazy, or -1.
func (m *Message) find(n *Node) int {
	// Renderers walk the tree in the order it was decoded: the field is mostly the one after
	// the last expanded.
	for k := range m.lazy {
		i := (m.lazyNext + k) % len(m.lazy)
		if m.lazy[i].node == n {
			m.lazyNext = i + 1
			return i
		}
	}
	return -1
}

// RecordIterator is a RecordsDecoder that can also hand a records field's top-level entries
// (record batches, legacy messages) over one at a time, keeping none (codec/records does).
type RecordIterator interface {
	EachRecord(data []byte, base int, nodes *Nodes, fn func(*Node)) []Warning
}

// Paged is memory that can give pages back and read them again when they are read: a frame
// kept in a mapped file (reassembly.Spilled). A message decoded from a frame in paged memory
// (Conversation.SetPaged) gives back the memory of each records field once it is decoded, and
// EachRecord that of each record batch once it is handed over.
type Paged interface {
	// Evict says that b will not be read again soon.
	Evict(b []byte)
}

// EachRecord calls fn with each child of n in order, as ExpandRecords returns them, but a records
// field that m holds unexpanded is decoded one top-level entry (record batch or legacy message)
// at a time, into nodes taken from scratch that are given back after fn returns: fn must be
// done with each entry and its subtree when it returns, and keep no bytes value of its nodes
// uncopied, since the next batch is decompressed into the same buffer. Memory then holds one
// batch of a records field of any size, not all of them. Warnings go to
// m.Warnings as with ExpandRecords. lazy reports whether n was such a field.
func (m *Message) EachRecord(n *Node, scratch *Nodes, fn func(*Node)) (lazy bool) {
	i := -1
	if n.Unexpanded() {
		i = m.find(n)
	}
	it, ok := m.records.(RecordIterator)
	if i < 0 || !ok {
		children, lazy := m.ExpandRecords(n, scratch)
		for _, c := range children {
			fn(c)
		}
		if lazy {
			scratch.Reset()
		}
		return lazy
	}
	l := &m.lazy[i]
	ws := it.EachRecord(l.data, l.base, scratch, func(c *Node) {
		lo, hi := c.Offset-l.base, c.Offset-l.base+c.Size // before the node is given back
		fn(c)
		scratch.recycleInflated()
		scratch.Reset()
		if m.paged != nil && lo >= 0 && lo <= hi && hi <= len(l.data) {
			m.paged.Evict(l.data[lo:hi])
		}
	})
	m.noteWarnings(i, ws)
	return true
}

// expand decodes lazy field i into nodes, and puts its warnings in m.Warnings the first time.
func (m *Message) expand(i int, nodes *Nodes) []*Node {
	children, ws := m.records.DecodeRecords(m.lazy[i].data, m.lazy[i].base, nodes)
	m.noteWarnings(i, ws)
	return children
}

// noteWarnings puts the warnings of lazy field i in m.Warnings, where a decode without
// LazyRecords puts them, the first time it is expanded.
func (m *Message) noteWarnings(i int, ws []Warning) {
	l := &m.lazy[i]
	if l.done || len(ws) == 0 {
		l.done = true
		return
	}
	l.done = true
	m.Warnings = append(m.Warnings[:l.warn], append(ws, m.Warnings[l.warn:]...)...)
	for j := i + 1; j < len(m.lazy); j++ {
		m.lazy[j].warn += len(ws) // the fields after it keep their warnings after its
	}
}

// Reset gives back every node taken from a, to be taken again: nodes and child lists taken
// before must not be used after it.
func (a *Nodes) Reset() { a.release() }

// lazyRecordSet counts the records of n, a records field m holds unexpanded, into r without
// expanding it: from its batches' headers when the decoder can count them (RecordsCounter),
// else from a decode into scratch. Its warnings are left for the expansion to add. It reports
// whether the field holds any entry (a record set is counted only then).
func (m *Message) lazyRecordSet(n *Node, r *RecordSet, scratch *Nodes) bool {
	i := m.find(n)
	if i < 0 {
		return false
	}
	l := &m.lazy[i]
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
