package codec

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
)

// Facts are what a message says about the things people look for in a capture: topics and
// partitions, groups, members, errors and record counts, which come from the definitions'
// entityType annotations and from Kafka's field-naming conventions, for every API alike; and
// the few that one API alone says (client software, a transaction's outcome, coordinators,
// SASL mechanism and user), which apiFacts reads from that API's fields. (model.Facts says
// how kdissect's outputs name and show them.)
type Facts struct {
	Topics   []string // topic names, first seen first, without repeats
	TopicIDs []UUID
	// Partitions lists, per topic name (or topic id as Kafka prints it), the partitions the
	// message names, each topic once (PartitionsOf finds one). A list rather than a map: most
	// messages name one topic, and a map per message cost more than the search.
	Partitions []TopicPartitions
	Groups     []string
	Members    []string
	// Errors holds the non-zero error codes, without repeats.
	Errors []int16
	// RecordSets has one entry per non-empty records field.
	RecordSets []RecordSet
	// Software is the client software an ApiVersions request names: its name and version.
	Software string
	// Txn is how an EndTxn request ends its transaction: "commit" or "abort".
	Txn string
	// Coordinators are the coordinators a FindCoordinator response names: one before v4,
	// one per key asked for since.
	Coordinators []Coordinator
	// SASLMechanism is the mechanism a SaslHandshake request asks for; SASLUser the user name
	// a SASL token carries (PLAIN, SCRAM's client-first message). Secrets are never facts.
	SASLMechanism, SASLUser string
}

// Coordinator is one answer of a FindCoordinator response.
type Coordinator struct {
	Key    string // the group or transactional id (v4+; "" before, where the request names it)
	NodeID int32
	Host   string
	Port   int32
	// ErrorCode is the answer's error (0: none); NodeID is then -1.
	ErrorCode int16
}

// TopicPartitions is the partitions a message names for one topic.
type TopicPartitions struct {
	Topic      string // the topic's name, or its id as Kafka prints it
	Partitions []int32
}

// PartitionsIndex returns the index of key's partitions in f.Partitions, or -1. The search
// starts at from and wraps around: a caller that looks topics up in the order the message
// names them passes the index after the last one found, and finds most at once.
func (f *Facts) PartitionsIndex(key string, from int) int {
	n := len(f.Partitions)
	for j := range n {
		i := from + j
		if i >= n {
			i -= n
		}
		if f.Partitions[i].Topic == key {
			return i
		}
	}
	return -1
}

// PartitionsOf returns the partitions the message names for key (a topic name, or a topic id
// as Kafka prints it); nil for none.
func (f *Facts) PartitionsOf(key string) []int32 {
	if i := f.PartitionsIndex(key, 0); i >= 0 {
		return f.Partitions[i].Partitions
	}
	return nil
}

// ManyTopics is how many topics a message's facts are searched for without an index: past it
// (a Metadata response, a replica's Fetch, can name thousands), lookups go through maps.
const ManyTopics = 16

// PartitionsFinder looks topics' partitions up in a message's facts: by searching them while
// they are few, from where the last was found (topics are mostly looked up in the order the
// message names them), and in an index made once they are many.
type PartitionsFinder struct {
	f     *Facts
	next  int
	index map[string]int
}

// NewPartitionsFinder returns a finder of f's partitions; f must not change while it is used.
func NewPartitionsFinder(f *Facts) PartitionsFinder { return PartitionsFinder{f: f} }

// Of returns key's partitions, and whether the facts hold an entry for key.
func (p *PartitionsFinder) Of(key string) ([]int32, bool) {
	ps := p.f.Partitions
	if len(ps) > ManyTopics {
		if p.index == nil {
			p.index = make(map[string]int, len(ps))
			for i := len(ps) - 1; i >= 0; i-- { // the first entry of a key wins, as in a search
				p.index[ps[i].Topic] = i
			}
		}
		i, ok := p.index[key]
		if !ok {
			return nil, false
		}
		return ps[i].Partitions, true
	}
	i := p.f.PartitionsIndex(key, p.next)
	if i < 0 {
		return nil, false
	}
	p.next = i + 1
	return ps[i].Partitions, true
}

// Named reports whether the facts name partitions for key.
func (p *PartitionsFinder) Named(key string) bool {
	ps, _ := p.Of(key)
	return len(ps) > 0
}

// HostPort is the coordinator's address as "host:port".
func (c Coordinator) HostPort() string { return net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))) }

// factFields names, per API and direction, the fields of a message that its facts and the
// conversation read beyond the generic ones (topics, groups, errors, records): a shallow decode
// keeps them too.
var factFields = map[apiDirection][]string{
	{KeyEndTxn, false}:           {"Committed"},
	{KeyFindCoordinator, true}:   {"NodeId", "Host", "Port", "Coordinators", "Key"},
	{KeySaslHandshake, false}:    {"Mechanism"},
	{KeySaslAuthenticate, false}: {"AuthBytes"},
	// Fetch sessions, which the conversation follows (fetchsession.go).
	{KeyFetch, false}: {"SessionId", "SessionEpoch", "ForgottenTopicsData"},
	{KeyFetch, true}:  {"SessionId"},
}

// apiDirection is an API key and whether the message is its response.
type apiDirection struct {
	key      int16
	response bool
}

// AllTopics lists the topics the message names: their names, including those of its record
// sets, and their topic ids as Kafka prints them, so that a topic whose name the capture does
// not say can be chosen by its id (as the summary and --stats show it).
func (f *Facts) AllTopics() []string {
	out := append([]string(nil), f.Topics...)
	for _, id := range f.TopicIDs {
		out = append(out, id.String())
	}
	for _, r := range f.RecordSets {
		out = append(out, r.Key())
	}
	return out
}

// RecordSet counts the records of one records field.
type RecordSet struct {
	Topic     string // the topic's name, or "" when the message names it by id only
	TopicID   UUID
	Partition int32
	// Records counts every record, Control those of control batches among them (the commit
	// and abort markers of transactions).
	Records, Control int
	Bytes            int      // the field's size on the wire
	Codecs           []string // compression codecs of its batches: none, gzip, snappy, lz4, zstd
}

// Key names the topic of a record set: its name, or its id as Kafka prints it.
func (r RecordSet) Key() string {
	if r.Topic != "" {
		return r.Topic
	}
	return r.TopicID.String()
}

// factRole is what a node's value says to the facts. The decoder notes it in each node it
// decodes by a definition (roleOf), so that the walk (factsWalk) looks no name up; a node
// without a definition says nothing.
type factRole uint8

const (
	roleNone        factRole = iota
	roleErrorCode            // an error code (an int16 field named ...ErrorCode)
	roleTopic                // a topic name (entityType topicName, a string), the topic of its struct
	roleListedTopic          // a topic name in an array of them
	roleGroup                // a group id (entityType groupId), alone or in an array
	roleMember               // a member id (MemberId)
	roleTopicID              // a topic id (TopicId), the topic of its struct
	rolePartition            // a partition number (partitionName, an int32), the partition of its struct
	rolePartitions           // an array of partition numbers (partitionArray, []int32)
)

// roleOf is the role of a node decoded by field f: of one of its elements when elem is set
// (named by their index, they are neither error codes, ids nor partitions).
func roleOf(f *schema.Field, elem bool) factRole {
	if elem {
		if f.Elem != schema.String {
			return roleNone
		}
		switch f.Entity() {
		case schema.TopicName:
			return roleListedTopic
		case schema.GroupID:
			return roleGroup
		}
		return roleNone
	}
	switch f.Kind {
	case schema.Int16:
		if errorCodeName(f.Name) {
			return roleErrorCode
		}
	case schema.String:
		switch {
		case f.Entity() == schema.TopicName:
			return roleTopic
		case f.Entity() == schema.GroupID:
			return roleGroup
		case f.Name == "MemberId":
			return roleMember
		}
	case schema.UUID:
		if f.Name == "TopicId" {
			return roleTopicID
		}
	case schema.Int32:
		if partitionName(f.Name) {
			return rolePartition
		}
	case schema.Array:
		if f.Elem == schema.Int32 && partitionArray(f.Name) {
			return rolePartitions
		}
	}
	return roleNone
}

// partitionName reports whether name is one Kafka gives partition-number fields. (A switch,
// not a map: Facts asks it of every integer of every message.)
func partitionName(name string) bool {
	switch name {
	case "PartitionIndex", "Partition", "Index", "PartitionId":
		return true
	}
	return false
}

// partitionArray reports whether name is one of an int32 array that lists partition numbers.
func partitionArray(name string) bool { return name == "Partitions" || name == "PartitionIndexes" }

// codecLists holds, for each codec, a list of that codec's name alone: most record sets have
// one, and share its list rather than allocate one. Each list's capacity is 1, so that adding a
// second codec copies it. Never written.
var codecLists = func() (l [8][]string) {
	for i := range l {
		l[i] = []string{wire.Codec(i).String()}[:1:1]
	}
	return l
}()

// Facts gathers the message's facts from its field tree.
func (m *Message) Facts() Facts {
	var fw FactsWalker
	return fw.Facts(m)
}

// FactsWalker gathers messages' facts (Message.Facts) one after another, keeping the memory
// of its walk from one message to the next rather than allocating it for each. The zero value
// is ready to use; it is not safe for concurrent use.
type FactsWalker struct{ w factsWalk }

// Facts gathers m's facts, as m.Facts does.
func (fw *FactsWalker) Facts(m *Message) Facts {
	return fw.facts(m, &fw.w.arena)
}

// FactsIn gathers m's facts as Facts does, their lists in store's memory rather than memory the
// walker shares among the facts of many messages.
func (fw *FactsWalker) FactsIn(m *Message, store *FactsStore) Facts {
	return fw.facts(m, &store.a)
}

// FactsStore is memory for the lists of one message's facts at a time (FactsWalker.FactsIn),
// which its owner gives again to the facts of a later message once done with those it holds
// (Reset): facts gathered into it cost no allocation once it has grown to their size. It keeps
// at most maxChunk elements of each kind: a list longer than a quarter of that has memory of
// its own, as in the walker's.
type FactsStore struct{ a factsArena }

// Reset frees s's memory for the facts of another message: the facts gathered into it must not
// be used again. (Their strings, copies, stay valid.) What the lists pointed to is not cleared:
// a store keeps so few elements that it would cost every message more than it could free.
func (s *FactsStore) Reset() {
	a := &s.a
	a.sets, a.names, a.ids, a.parts, a.nums = a.sets[:0], a.names[:0], a.ids[:0], a.parts[:0], a.nums[:0]
}

func (fw *FactsWalker) facts(m *Message, into *factsArena) Facts {
	w := &fw.w
	// What the facts keep (the lists, the partitions of each topic) is made anew for each
	// message; the walk's own state is reused, and so are the lists the partitions of each
	// topic are gathered in, up to a bound.
	for i := range w.topics[:cap(w.topics)] {
		t := &w.topics[:cap(w.topics)][i]
		*t = topicPartitions{partitions: t.partitions[:0]}
		if cap(t.partitions) > maxKeptPartitions {
			t.partitions = nil
		}
	}
	w.topics = w.topics[:0]
	w.sets, w.names, w.topicIDs = reuse(w.sets), reuse(w.names), reuse(w.topicIDs)
	w.messageWalk = messageWalk{m: m, into: into}
	body := m.Fields[min(m.HeaderFields, len(m.Fields)):]
	w.walk(body, factsScope{partition: -1})
	w.place()
	for _, g := range coordinatorGroups(m, body) {
		w.seenGroups.add(&w.f.Groups, g)
	}
	for _, a := range apiFacts {
		if a.apiDirection == (apiDirection{m.APIKey, m.Response}) {
			a.read(&w.f, body)
		}
	}
	if !m.Response && m.sasl {
		// A SASL token: in SaslAuthenticate's AuthBytes, or alone after SaslHandshake v0.
		if n := Find(body, "user"); n != nil && n.Type == wire.SASL {
			w.f.SASLUser, _ = n.Value.(string)
		}
	}
	f := w.f
	w.messageWalk = messageWalk{} // the walker holds neither the facts nor the message
	return f
}

// factsArena hands out the lists of messages' facts from chunks shared by the facts of many
// messages, rather than an allocation or more for each message: a chunk goes when the last
// facts that use it go. Chunks grow from the size of the first list to maxChunk elements, so
// that facts gathered once cost no more than their lists, and facts kept long (a request
// waiting for its response) keep little memory beside theirs; a list longer than a quarter of
// that has an allocation of its own.
type factsArena struct {
	sets  []RecordSet
	names []string
	ids   []UUID
	parts []TopicPartitions
	nums  []int32
}

// maxChunk is the most elements of a factsArena chunk.
const maxChunk = 64

// carve returns a list of n elements taken from *chunk (a new chunk when it has no room), its
// capacity its length: appending to it copies it, and never writes its neighbour.
func carve[T any](chunk *[]T, n int) []T {
	if n > maxChunk/4 {
		return make([]T, n)
	}
	c := *chunk
	if cap(c)-len(c) < n {
		c = make([]T, 0, min(maxChunk, max(n, 2*cap(c))))
	}
	l := len(c)
	c = c[:l+n]
	*chunk = c
	return c[l : l+n : l+n]
}

// cloneInto returns a copy of list carved from *chunk; nil when list is empty.
func cloneInto[T any](chunk *[]T, list []T) []T {
	if len(list) == 0 {
		return nil
	}
	out := carve(chunk, len(list))
	copy(out, list)
	return out
}

// place gives the facts copies of the lists the walk gathered, of the right size (appending
// grew them), carved from the arena the walk was given, and nil where they are empty.
func (w *factsWalk) place() {
	a := w.into
	w.f.RecordSets, w.f.Topics, w.f.TopicIDs = cloneInto(&a.sets, w.sets), cloneInto(&a.names, w.names), cloneInto(&a.ids, w.topicIDs)
	if len(w.names) == 0 && len(w.topicIDs) > 0 {
		// A message that names its topics by id alone gets their names from
		// TopicNames.Resolve: room for them.
		w.f.Topics = carve(&a.names, len(w.topicIDs))[:0]
	}
	if len(w.topics) == 0 { // nil for a message that names no partition: nothing to make
		return
	}
	n := 0
	for _, t := range w.topics {
		n += len(t.partitions)
	}
	w.f.Partitions = carve(&a.parts, len(w.topics))
	// The lists of partitions share one array, each list capped at its length.
	all := carve(&a.nums, n)
	for i, t := range w.topics {
		k := copy(all, t.partitions)
		w.f.Partitions[i] = TopicPartitions{Topic: t.key, Partitions: all[:k:k]}
		all = all[k:]
	}
}

// apiFacts reads, per API and direction, the facts that one API alone says, from the fields
// that factFields names (which a shallow decode keeps) or that are kept anyway. A list rather
// than a map: searching four entries costs every message less than hashing its key.
var apiFacts = []struct {
	apiDirection
	read func(f *Facts, body []*Node)
}{
	{apiDirection{KeyApiVersions, false}, clientSoftware},
	{apiDirection{KeyEndTxn, false}, txnOutcome},
	{apiDirection{KeyFindCoordinator, true}, func(f *Facts, body []*Node) { f.Coordinators = coordinators(body) }},
	{apiDirection{KeySaslHandshake, false}, func(f *Facts, body []*Node) {
		if n := Find(body, "Mechanism"); n != nil {
			f.SASLMechanism, _ = n.Value.(string)
		}
	}},
}

// clientSoftware reads the client software an ApiVersions request names: "name version".
func clientSoftware(f *Facts, body []*Node) {
	name, version := Find(body, "ClientSoftwareName"), Find(body, "ClientSoftwareVersion")
	if name != nil && version != nil {
		f.Software = fmt.Sprintf("%v %v", name.Value, version.Value)
	}
}

// txnOutcome reads how an EndTxn request ends its transaction.
func txnOutcome(f *Facts, body []*Node) {
	if n := Find(body, "Committed"); n != nil {
		if c, ok := n.Value.(bool); ok {
			f.Txn = "abort"
			if c {
				f.Txn = "commit"
			}
		}
	}
}

// Errors appends to dst[:0] the message's non-zero error codes without repeats, as Facts
// gives them, gathering no other fact: for those that need no other (the JSON lines of
// responses), without the allocations of the rest.
func (m *Message) Errors(dst []int16) []int16 {
	return appendErrors(dst[:0], m.Fields[min(m.HeaderFields, len(m.Fields)):])
}

// appendErrors appends the error codes under nodes that dst does not hold, looking where
// factsWalk.walk looks (not in bytes fields' structures nor records, which hold none). A
// function of its own rather than a mode of the walk: the walk's state goes to the heap.
func appendErrors(dst []int16, nodes []*Node) []int16 {
	for _, n := range nodes {
		if v, ok := n.Value.(int64); ok && IsErrorCode(n) && v != 0 && !slices.Contains(dst, int16(v)) {
			dst = append(dst, int16(v))
		}
		if len(n.Children) > 0 && !n.Type.IsBytes() && !n.Type.IsRecords() {
			dst = appendErrors(dst, n.Children)
		}
	}
	return dst
}

// coordinators reads a FindCoordinator response's answers: the top-level NodeId, Host, Port
// and ErrorCode before v4, one Coordinators element per key since.
func coordinators(body []*Node) []Coordinator {
	one := func(nodes []*Node) (Coordinator, bool) {
		var c Coordinator
		found := false
		for _, n := range nodes {
			switch v := n.Value.(type) {
			case int64:
				switch n.Name {
				case "NodeId":
					c.NodeID, found = int32(v), true
				case "Port":
					c.Port = int32(v)
				case "ErrorCode":
					c.ErrorCode = int16(v)
				}
			case string:
				switch n.Name {
				case "Host":
					c.Host = v
				case "Key":
					c.Key = v
				}
			}
		}
		return c, found
	}
	if arr := Find(body, "Coordinators"); arr != nil {
		var out []Coordinator
		for _, e := range arr.Children {
			if c, ok := one(e.Children); ok {
				out = append(out, c)
			}
		}
		return out
	}
	if c, ok := one(body); ok {
		return []Coordinator{c}
	}
	return nil
}

// factsWalk gathers facts (Message.Facts): a struct with methods rather than closures, so that
// a message's walk allocates only what the facts hold.
type factsWalk struct {
	messageWalk
	// scratch holds the nodes of the message's records fields left unexpanded while they are
	// counted.
	scratch Nodes
	// arena holds the facts' lists, from one message to the next.
	arena factsArena
	// topics holds the partitions named for each topic (key) while the walk goes: f.Partitions
	// is made once, at the end, of the right size.
	topics []topicPartitions
	// sets, names and topicIDs gather the record sets, topic names and topic ids, in lists
	// reused from one message to the next (the facts get copies).
	sets     []RecordSet
	names    []string
	topicIDs []UUID
	// ids keeps the strings of the topic ids met, from one message to the next: consumers
	// name the same few ids in every fetch. Emptied when it holds maxIDs.
	ids map[UUID]string
}

// messageWalk is the state of a factsWalk that each message starts afresh.
type messageWalk struct {
	f Facts
	// into is where the facts' lists are carved from (place).
	into *factsArena
	// m is the message walked.
	m                                   *Message
	seenTopics, seenGroups, seenMembers onceSet[string]
	seenIDs                             onceSet[UUID]
	seenErrors                          onceSet[int16]
	// cur is the index in topics of the last topic given partitions; index finds topics once
	// there are many.
	cur   int
	index map[string]int
}

// maxIDs bounds factsWalk.ids: a capture can name any number of ids.
const maxIDs = 1024

// maxKeptPartitions bounds the lists a factsWalk keeps for the next message: a message can
// name millions of partitions.
const maxKeptPartitions = 1024

// reuse empties a list that a factsWalk reuses, unless it grew past maxKeptPartitions.
func reuse[T any](list []T) []T {
	clear(list) // what it pointed to is the facts' now, or garbage
	if cap(list) > maxKeptPartitions {
		return nil
	}
	return list[:0]
}

// idKey is id as Kafka prints it, made once while the walker keeps it.
func (w *factsWalk) idKey(id UUID) string {
	if k, ok := w.ids[id]; ok {
		return k
	}
	if w.ids == nil || len(w.ids) >= maxIDs {
		w.ids = make(map[UUID]string)
	}
	k := id.String()
	w.ids[id] = k
	return k
}

// topicPartitions is the partitions a message names for one topic.
type topicPartitions struct {
	key        string
	partitions []int32
	// seen keeps the partitions free of repeats without searching them all for each: a
	// message can name millions.
	seen onceSet[int32]
}

// factsScope is the topic and partition a walk is inside; key names the topic in
// Facts.Partitions: its name, else its id as Kafka prints it.
type factsScope struct {
	topic     string
	id        UUID
	key       string
	partition int32
}

func (w *factsWalk) addPartition(s *factsScope, p int32) {
	if s.key == "" {
		return
	}
	if w.cur >= len(w.topics) || w.topics[w.cur].key != s.key {
		w.cur = w.topicIndex(s.key)
	}
	t := &w.topics[w.cur]
	t.seen.add(&t.partitions, p)
}

// topicIndex finds a topic in w.topics, adding it if it is not there.
func (w *factsWalk) topicIndex(key string) int {
	if w.index != nil {
		if i, ok := w.index[key]; ok {
			return i
		}
	} else {
		for i := range w.topics {
			if w.topics[i].key == key {
				return i
			}
		}
	}
	if len(w.topics) < cap(w.topics) {
		w.topics = w.topics[:len(w.topics)+1] // a slot whose list of partitions is reused
		w.topics[len(w.topics)-1].key = key
	} else {
		w.topics = append(w.topics, topicPartitions{key: key})
	}
	i := len(w.topics) - 1
	switch {
	case w.index != nil:
		w.index[key] = i
	case len(w.topics) > onceSetScan:
		w.index = make(map[string]int, 2*len(w.topics))
		for j, t := range w.topics {
			w.index[t.key] = j
		}
	}
	return i
}

// walk gathers the facts of nodes, inside scope s, and of the nodes below them.
func (w *factsWalk) walk(nodes []*Node, s factsScope) {
	w.inside(&s, nodes)
	for _, n := range nodes {
		if n.role != roleNone {
			w.leaf(n, &s)
		}
		switch {
		case n.role == rolePartitions:
			for _, c := range n.Children {
				if p, ok := c.Value.(int64); ok && c.Type == wire.Int32 {
					w.addPartition(&s, int32(p))
				}
			}
		case n.Type == wire.Records || n.Type == wire.CompactRecords:
			w.records(n, &s)
		case len(n.Children) > 0 && !n.Type.IsBytes():
			// A bytes field's nodes are a structure of its own (a subscription): not the
			// message's.
			w.walk(n.Children, s)
		}
	}
}

// inside makes s the scope of a struct's fields: its own topic and partition fields set the
// scope of all its children. (s in place: a scope is copied for each struct, not three times.)
func (w *factsWalk) inside(s *factsScope, nodes []*Node) {
	changed := false // the topic
	for _, n := range nodes {
		switch n.role {
		case roleTopic:
			if v, ok := n.Value.(string); ok && v != s.topic {
				s.topic, changed = v, true
			}
		case roleTopicID:
			if v, ok := n.Value.(UUID); ok && v != s.id {
				s.id, changed = v, true
			}
		case rolePartition:
			if v, ok := n.Value.(int64); ok {
				s.partition = int32(v)
			}
		}
	}
	if changed {
		switch {
		case s.topic != "":
			s.key = s.topic
		case s.id != (UUID{}):
			s.key = w.idKey(s.id)
		default:
			s.key = ""
		}
	}
}

// leaf gathers the fact a node's own value says: a topic, group or member, a topic id, an
// error code, a partition.
func (w *factsWalk) leaf(n *Node, s *factsScope) {
	f := &w.f
	switch v := n.Value.(type) {
	case int64:
		switch {
		case n.role == roleErrorCode && v != 0:
			w.seenErrors.add(&f.Errors, int16(v))
		case n.role == rolePartition:
			w.addPartition(s, int32(v))
		}
	case string:
		switch {
		case n.role == roleTopic || n.role == roleListedTopic:
			w.seenTopics.add(&w.names, v)
		case n.role == roleGroup:
			w.seenGroups.add(&f.Groups, v)
		case n.role == roleMember && v != "":
			w.seenMembers.add(&f.Members, v)
		}
	case UUID:
		if n.role == roleTopicID && v != (UUID{}) {
			w.seenIDs.add(&w.topicIDs, v)
		}
	}
}

// records counts a records field's records, decoded or left unexpanded.
func (w *factsWalk) records(n *Node, s *factsScope) {
	switch {
	case len(n.Children) > 0:
		w.sets = append(w.sets, recordSet(n, s.topic, s.id, s.partition))
	case n.Unexpanded():
		r := RecordSet{Topic: s.topic, TopicID: s.id, Partition: s.partition, Bytes: n.Size}
		if w.m.lazyRecordSet(n, &r, &w.scratch) {
			w.sets = append(w.sets, r)
		}
	}
}

// onceSet keeps a list free of repeats: while the list is short it is searched, and past
// onceSetScan values a map remembers them. Most messages name one topic, one group, no error,
// and a few dozen partitions.
type onceSet[T comparable] struct{ m map[T]struct{} }

const onceSetScan = 64

// add appends v to list unless it is there already.
func (s *onceSet[T]) add(list *[]T, v T) {
	if s.m == nil {
		if slices.Contains(*list, v) {
			return
		}
		*list = append(*list, v)
		if len(*list) > onceSetScan {
			s.m = make(map[T]struct{}, 2*len(*list))
			for _, x := range *list {
				s.m[x] = struct{}{}
			}
		}
		return
	}
	if _, ok := s.m[v]; !ok {
		s.m[v] = struct{}{}
		*list = append(*list, v)
	}
}

// coordinatorGroups returns the groups a FindCoordinator request looks for. Its keys are the one
// place where a group id is not annotated as such, because KeyType says what they are: 0 (the
// default, and the only kind before v1) is a group, 1 a transactional id, 2 a share group.
func coordinatorGroups(m *Message, body []*Node) []string {
	if m.APIKey != KeyFindCoordinator || m.Response {
		return nil
	}
	keyType := int64(0)
	for _, n := range body {
		if v, ok := n.Value.(int64); ok && n.Name == "KeyType" {
			keyType = v
		}
	}
	if keyType != 0 {
		return nil
	}
	var out []string
	for _, n := range body {
		switch {
		case n.Name == "Key":
			if s, ok := n.Value.(string); ok {
				out = append(out, s)
			}
		case n.Name == "CoordinatorKeys":
			for _, c := range n.Children {
				if s, ok := c.Value.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// recordSet counts the records under a records node and the codecs of its batches.
func recordSet(n *Node, topic string, id UUID, partition int32) RecordSet {
	r := RecordSet{Topic: topic, TopicID: id, Partition: partition, Bytes: n.Size}
	r.count(n.Children, false)
	return r
}

// count adds the records under nodes, and the codecs of their batches, to r; control says the
// nodes are inside a control batch.
func (r *RecordSet) count(nodes []*Node, control bool) {
	for _, c := range nodes {
		switch c.Type {
		case wire.Record:
			r.Records++
			if control {
				r.Control++
			}
			continue
		case wire.Message:
			// A legacy message counts unless it is a compressed wrapper around others.
			if !holdsCompressed(c.Children) {
				r.Records++
			} else if a := childNamed(c, "attributes"); a != nil {
				r.codec(a)
			}
		case wire.RecordBatch:
			if a := childNamed(c, "attributes"); a != nil {
				r.codec(a)
				if v, ok := a.Value.(int64); ok {
					control = wire.Attributes(v).Has(wire.Control)
				}
			}
			// A batch has the records its header counts, decoded or not: so the counts are
			// the same whether the batches were decoded whole, header only (summaries,
			// statistics) or not yet (Message.lazyRecordSet), even where the records cannot
			// be read (a payload that does not decompress).
			if n, ok := batchCount(c); ok {
				r.Records += n
				if control {
					r.Control += n
				}
				continue
			}
		}
		r.count(c.Children, control)
	}
}

// batchCount is the record count a batch's header states (none that is negative): its
// recordsCount.
func batchCount(batch *Node) (int, bool) {
	for _, c := range batch.Children {
		if c.Name == "recordsCount" {
			v, ok := c.Value.(int64)
			return int(max(v, 0)), ok
		}
	}
	return 0, false
}

// codec adds the codec an attributes node names to r.Codecs.
func (r *RecordSet) codec(attributes *Node) {
	if v, ok := attributes.Value.(int64); ok {
		c := wire.Attributes(v).Codec()
		switch name := c.String(); {
		case len(r.Codecs) == 0:
			r.Codecs = codecLists[c]
		case !slices.Contains(r.Codecs, name):
			r.Codecs = append(r.Codecs, name)
		}
	}
}

// holdsCompressed reports whether a compressed_records node is among nodes or below them.
func holdsCompressed(nodes []*Node) bool {
	for _, x := range nodes {
		if x.Type == wire.CompressedRecords || holdsCompressed(x.Children) {
			return true
		}
	}
	return false
}

func childNamed(n *Node, name string) *Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TopicNames remembers the topic names that messages give for topic ids (Metadata,
// CreateTopics and DescribeTopicPartitions responses, ...), so that messages that name topics by
// id only (Fetch v13+, Produce v13+) can be shown with names. It is not safe for concurrent use.
type TopicNames struct {
	names map[UUID]string
	// all: the names of a whole capture were learnt before it is shown (LearntAll).
	all bool
	// learnt counts the changes to names; sessions holds the fetch sessions' sets of
	// partitions with their names given, as ResolveSession made them while learnt was the
	// same (most fetches of a session share one set).
	learnt   int
	sessions map[*SessionPartition]resolvedSet
	// recent holds names learnt or looked up lately, each in one of the two slots of the
	// pair its id's last byte picks (two, so that two ids that pick the same pair do not
	// take turns): most captures use a few topics over and over, and a look here costs less
	// than the map's hash of 16 bytes. A slot whose name is "" (an empty one) is passed over.
	recent [16][2]recentName
}

// recentName is a slot of TopicNames.recent: an id, its name, and its text, which Resolve
// looks partitions up by.
type recentName struct {
	TopicIDName
	text [UUIDTextLen]byte // as Kafka prints the id
}

// resolvedSet is a session's set of partitions (of n) with the topic names given, as they
// were when names had changed learnt times.
type resolvedSet struct {
	n, learnt int
	ps        []SessionPartition
}

// maxSessionSets bounds TopicNames.sessions: a capture can hold any number of sessions.
const maxSessionSets = 256

// LearntAll says that the names of a whole capture were learnt before its messages are
// annotated: a topic id without a name is then named by no message of it.
func (t *TopicNames) LearntAll() { t.all = true }

// Add records topic names for topic ids, as TopicIDNames gives them.
func (t *TopicNames) Add(names []TopicIDName) {
	for _, n := range names {
		if t.names == nil {
			t.names = map[UUID]string{}
		}
		if old, ok := t.names[n.ID]; !ok || old != n.Name {
			t.names[n.ID] = n.Name
			t.keep(n)
			t.learnt++
		}
	}
}

// Len is how many topic ids have names.
func (t *TopicNames) Len() int { return len(t.names) }

// Fill gives the topic ids that have no name the names o knows for them: names learnt later
// from the whole capture (o) do not replace those learnt along it (t).
func (t *TopicNames) Fill(o *TopicNames) {
	for id, name := range o.names {
		if _, ok := t.names[id]; !ok {
			t.Add([]TopicIDName{{ID: id, Name: name}})
		}
	}
}

// TopicIDName is a topic id and the name a message gives it.
type TopicIDName struct {
	ID   UUID
	Name string
}

// TopicIDNames returns what m teaches of topic names: the id and the name of every struct of m
// that holds both (Metadata, CreateTopics and DescribeTopicPartitions responses, ...).
func (m *Message) TopicIDNames() []TopicIDName { return topicIDNames(m, nil) }

// TopicIDNamer gives what messages teach of topic names (Message.TopicIDNames), one message
// after another, remembering which structures can hold a topic's name and id at which version
// rather than reading their definitions again for every message. Its memory is bounded by the
// definitions. The zero value is ready to use; it is not safe for concurrent use.
type TopicIDNamer struct{ names map[structVersion]bool }

// structVersion is a structure's definition at one version.
type structVersion struct {
	s *schema.StructDef
	v int16
}

// TopicIDNames returns what m teaches of topic names, as m.TopicIDNames does.
func (t *TopicIDNamer) TopicIDNames(m *Message) []TopicIDName { return topicIDNames(m, t) }

// namesTopicIDs is namesTopicIDs(s, v, 0), remembered (t may be nil: not remembered).
func (t *TopicIDNamer) namesTopicIDs(s *schema.StructDef, v int16) bool {
	if t == nil {
		return namesTopicIDs(s, v, 0)
	}
	k := structVersion{s, v}
	named, ok := t.names[k]
	if !ok {
		if t.names == nil {
			t.names = map[structVersion]bool{}
		}
		named = namesTopicIDs(s, v, 0)
		t.names[k] = named
	}
	return named
}

// mayName reports whether a structure of m's body, as m's version defines it, can hold a
// topic's name and id; true when m has no definition at its version. (A definition merged
// from several releases, --schema-dir, has a body per run of versions: At picks the one m
// was decoded by.)
func (t *TopicIDNamer) mayName(m *Message) bool {
	if m.def == nil {
		return true
	}
	def := m.def.At(m.Version)
	return def == nil || t.namesTopicIDs(def.Body, m.Version)
}

// topicIDNames is Message.TopicIDNames, with the structures that can hold names asked of t.
func topicIDNames(m *Message, t *TopicIDNamer) []TopicIDName {
	if t != nil && !m.embedded && !m.sasl && !t.mayName(m) {
		// No structure of m's definition at its version holds a topic's name and id, and m
		// holds no nodes of another definition: nothing to walk for (most messages).
		return nil
	}
	var out []TopicIDName
	Walk(m.Fields, func(n *Node, _ int) bool {
		if d := n.Def; d != nil && (d.Kind == schema.Records || d.Struct != nil && !t.namesTopicIDs(d.Struct, m.Version)) {
			return false // nothing to learn below
		}
		if n.Type != wire.Struct {
			return true
		}
		var name string
		var id UUID
		for _, c := range n.Children {
			if s, ok := c.Value.(string); ok && c.Def != nil && c.Def.Entity() == schema.TopicName && c.Def.Kind == schema.String {
				name = s
			}
			if u, ok := c.Value.(UUID); ok && c.Name == "TopicId" {
				id = u
			}
		}
		if name != "" && id != (UUID{}) {
			out = append(out, TopicIDName{ID: id, Name: name})
		}
		return true
	})
	return out
}

// namesTopicIDs reports whether a struct of definition s at version v, or a struct inside one,
// can hold both a topic name and a topic id: TopicIDNames need not look inside any other. Most
// messages name topics one way only, and are passed over whole.
func namesTopicIDs(s *schema.StructDef, v int16, depth int) bool {
	if depth > 16 {
		return false // only a definition that held itself goes this deep
	}
	name, id := false, false
	for _, f := range s.Fields {
		if !f.Versions.Contains(v) {
			continue
		}
		name = name || f.Entity() == schema.TopicName && f.Kind == schema.String
		id = id || f.Name == "TopicId"
		if f.Struct != nil && namesTopicIDs(f.Struct, v, depth+1) {
			return true
		}
	}
	return name && id
}

// Name returns the name learnt for a topic id.
func (t *TopicNames) Name(id UUID) (string, bool) {
	if r := t.lookup(id); r != nil {
		return r.Name, true
	}
	return "", false
}

// lookup returns the slot of recent that holds id's name, nil when id has no name.
func (t *TopicNames) lookup(id UUID) *recentName {
	pair := t.pair(id)
	for i := range pair {
		if r := &pair[i]; r.ID == id && r.Name != "" {
			return r
		}
	}
	name, ok := t.names[id]
	if !ok {
		return nil
	}
	return t.keep(TopicIDName{ID: id, Name: name})
}

// keep puts n in recent: in the slot of its id, if it has one, else in the first of its
// pair, the one there moving to the second.
func (t *TopicNames) keep(n TopicIDName) *recentName {
	pair := t.pair(n.ID)
	r := &pair[0]
	switch {
	case pair[1].ID == n.ID:
		r = &pair[1]
	case pair[0].ID != n.ID:
		pair[1] = pair[0]
	}
	r.TopicIDName = n
	n.ID.AppendText(r.text[:0])
	return r
}

// pair is the pair of slots of recent that id may be kept in.
func (t *TopicNames) pair(id UUID) *[2]recentName {
	return &t.recent[id[len(id)-1]%byte(len(t.recent))]
}

// Annotate notes the topic name beside every TopicId of msg, or says it is not known yet.
// The note is the one place the name is kept; Node.Topic reads it back for the outputs that
// show the name as a value of its own. named reports whether every id had a name.
func (t *TopicNames) Annotate(msg *Message) (named bool) {
	named = true
	Walk(msg.Fields, func(n *Node, _ int) bool {
		if u, ok := n.Value.(UUID); ok && n.Name == "TopicId" && u != (UUID{}) {
			if name, ok := t.Name(u); ok {
				n.Note = topicNote + name
			} else {
				named = false
				n.Note = unknownTopic + "no Metadata response with this id captured before)"
				if t.all {
					n.Note = unknownTopic + "no message of the capture names this id)"
				}
			}
		}
		return !n.Type.IsRecords() // records hold no topic ids
	})
	return named
}

// topicNote starts the note of a TopicId whose name is known: the name follows. The notes of
// the unknown ones start with unknownTopic.
const (
	topicNote    = "topic "
	unknownTopic = "topic name unknown ("
)

// Topic returns the topic name noted beside a TopicId node (TopicNames.Annotate); ok is false
// for another node, and for an id whose name is not known.
func (n *Node) Topic() (name string, ok bool) {
	if n.Name != "TopicId" || strings.HasPrefix(n.Note, unknownTopic) {
		return "", false
	}
	return strings.CutPrefix(n.Note, topicNote)
}

// ResolveSession names the topics of a fetch session's partitions that are known by id only.
// The step's Added, Updated and Forgotten are its own, and named in place; its Partitions may
// be shared with other steps (SessionStep.Partitions), and are replaced by a named copy.
func (t *TopicNames) ResolveSession(s *SessionStep) {
	for _, ps := range [][]SessionPartition{s.Added, s.Updated, s.Forgotten} {
		for i, p := range ps {
			if p.Topic == "" {
				ps[i].Topic, _ = t.Name(p.TopicID)
			}
		}
	}
	s.Partitions = t.resolveSet(s.Partitions)
}

// resolveSet returns a session's set of partitions with the topics known by id named, in
// order by name: ps when that changes nothing, else a copy, the same one for every step that
// shares ps while the names stay as they are.
func (t *TopicNames) resolveSet(ps []SessionPartition) []SessionPartition {
	if len(ps) == 0 {
		return ps
	}
	if r, ok := t.sessions[&ps[0]]; ok && r.n == len(ps) && r.learnt == t.learnt {
		return r.ps
	}
	out := ps
	for i, p := range ps {
		if p.Topic != "" {
			continue
		}
		if name, _ := t.Name(p.TopicID); name != "" {
			if len(out) > 0 && &out[0] == &ps[0] {
				out = slices.Clone(ps)
			}
			out[i].Topic = name
		}
	}
	// By name, now that the names are known; most sets are in order already (their names
	// were known when the session was).
	if !slices.IsSortedFunc(out, comparePartitions) {
		if &out[0] == &ps[0] {
			out = slices.Clone(ps)
		}
		slices.SortFunc(out, comparePartitions)
	}
	if t.sessions == nil || len(t.sessions) >= maxSessionSets {
		t.sessions = make(map[*SessionPartition]resolvedSet)
	}
	t.sessions[&ps[0]] = resolvedSet{n: len(ps), learnt: t.learnt, ps: out}
	return out
}

// Resolve replaces topic ids by the names learnt for them in f.
func (t *TopicNames) Resolve(f *Facts) {
	for i := range f.RecordSets {
		if r := &f.RecordSets[i]; r.Topic == "" {
			if name, ok := t.Name(r.TopicID); ok {
				r.Topic = name
			}
		}
	}
	if len(f.TopicIDs) > ManyTopics {
		t.resolveMany(f)
	} else {
		t.resolveFew(f)
	}
}

// resolveFew is Resolve's naming of ids, and of their partitions, for a message of few.
func (t *TopicNames) resolveFew(f *Facts) {
	for i, id := range f.TopicIDs {
		r := t.lookup(id)
		if r == nil {
			continue
		}
		name := r.Name
		if j := f.PartitionsIndex(string(r.text[:]), 0); j >= 0 {
			f.Partitions[j].Topic = name
			// Where the name has partitions of its own, the id's join them (each list is
			// capped at its length: append copies) and the id's entry goes.
			if k := f.PartitionsIndex(name, j+1); k != j {
				f.Partitions[k].Partitions = append(f.Partitions[k].Partitions, f.Partitions[j].Partitions...)
				f.Partitions = slices.Delete(f.Partitions, j, j+1)
			}
		}
		if !slices.Contains(f.Topics, name) {
			// Room for the names of the ids left, once: most messages name topics by id only.
			f.Topics = append(slices.Grow(f.Topics, len(f.TopicIDs)-i), name)
		}
	}
}

// resolveMany is Resolve's naming of ids for a message of more than ManyTopics: the same
// result, with each list's entries found through a map (which follows the entries renamed, as
// a PartitionsFinder's index would not), and those merged into another removed at the end.
func (t *TopicNames) resolveMany(f *Facts) {
	at := make(map[string]int, len(f.Partitions))
	for i, p := range f.Partitions {
		at[p.Topic] = i
	}
	named := make(map[string]bool, len(f.Topics)+len(f.TopicIDs))
	for _, name := range f.Topics {
		named[name] = true
	}
	var gone []bool
	for _, id := range f.TopicIDs {
		name, ok := t.Name(id)
		if !ok {
			continue
		}
		if j, ok := at[id.String()]; ok {
			if k, ok := at[name]; ok {
				f.Partitions[k].Partitions = append(f.Partitions[k].Partitions, f.Partitions[j].Partitions...)
				if gone == nil {
					gone = make([]bool, len(f.Partitions))
				}
				gone[j] = true
			} else {
				f.Partitions[j].Topic, at[name] = name, j
			}
		}
		if !named[name] {
			named[name] = true
			f.Topics = append(f.Topics, name)
		}
	}
	if gone != nil {
		kept := f.Partitions[:0]
		for i, p := range f.Partitions {
			if !gone[i] {
				kept = append(kept, p)
			}
		}
		clear(f.Partitions[len(kept):])
		f.Partitions = kept
	}
}
