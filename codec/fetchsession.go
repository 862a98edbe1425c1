package codec

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/kdissect/kdissect/codec/wire"
)

// Fetch sessions (KIP-227, Fetch v7+): a consumer or follower opens a session with a full Fetch
// (session id 0, epoch 0); the broker answers with a session id; each later request names the
// session and the next epoch, and lists only the partitions it adds or changes, and in
// ForgottenTopicsData those it drops. Epoch -1 with a session id closes the session. The
// conversation of a connection follows its sessions, so that each request can be shown with
// the session's whole set of partitions.

// Fetch-session error codes.
const (
	ErrFetchSessionIDNotFound   int16 = 70
	ErrInvalidFetchSessionEpoch int16 = 71
)

// SessionAction is what a Fetch request does with its session.
type SessionAction uint8

const (
	SessionOpen        SessionAction = iota + 1 // epoch 0: a full fetch that opens a session (closing the one it names, if any)
	SessionIncremental                          // epoch > 0: the changes to a session
	SessionClose                                // epoch -1 with a session id: closes it; a full fetch without a session
)

var sessionActions = [...]string{SessionOpen: "open", SessionIncremental: "incremental", SessionClose: "close"}

func (a SessionAction) String() string {
	if int(a) < len(sessionActions) && sessionActions[a] != "" {
		return sessionActions[a]
	}
	return fmt.Sprintf("SessionAction(%d)", a)
}

// SessionPartition is a partition of a fetch session, named by topic name (Fetch up to v12) or
// topic id (v13+).
type SessionPartition struct {
	Topic     string
	TopicID   UUID
	Partition int32
}

// TopicKey names the partition's topic: its name, or its id as Kafka prints it.
func (p SessionPartition) TopicKey() string {
	if p.Topic != "" {
		return p.Topic
	}
	return p.TopicID.String()
}

// sessionKey identifies a partition in a session: by id when the request names topics by id.
type sessionKey struct {
	topic     string
	id        UUID
	partition int32
}

func (p SessionPartition) key() sessionKey {
	if p.TopicID != (UUID{}) {
		return sessionKey{id: p.TopicID, partition: p.Partition}
	}
	return sessionKey{topic: p.Topic, partition: p.Partition}
}

// SessionStep is what one Fetch request does to its fetch session, as the conversation followed
// it; the response gets a step of its own that says how the broker answered.
type SessionStep struct {
	// ID is the session; 0 in a request that opens a new one (its response's step has the id
	// the broker gave it).
	ID     int32
	Epoch  int32 // the request's epoch
	Action SessionAction
	// Added are the partitions the request adds to the session, Updated those of the session
	// it lists again (their fetch position changed), Forgotten those it drops.
	Added, Updated, Forgotten []SessionPartition
	// Partitions is the session's set after the request, as the conversation followed it: the
	// whole set when Followed, else only what this capture showed of it. The steps of a
	// session that leave its set as it was share one list: it is never written (ResolveSession
	// replaces it).
	Partitions []SessionPartition
	// Followed: the session was opened on this connection within the capture. Closed: the
	// request names a session closed before it (by the client or the broker).
	Followed, Closed bool
	// Response marks a response's step; ErrorCode is then the response's top-level error. The
	// step of a response that opens a session has its request's Added and Partitions.
	Response  bool
	ErrorCode int16
}

// fetchSession is what a conversation knows of one session.
type fetchSession struct {
	epoch int32 // the epoch of the last request the broker accepted
	set   map[sessionKey]SessionPartition
	// sorted is set's partitions in order (sortedPartitions), once an incremental fetch asked
	// for them: most fetches leave the set as it is, and their steps copy it rather than sort.
	// Never written once made, like set.
	sorted   []SessionPartition
	followed bool
}

// sessionState follows the fetch sessions of one connection.
type sessionState struct {
	open map[int32]*fetchSession
	// closed holds the sessions closed on this connection, with how: "by a request with epoch
	// -1" or the broker's error.
	closed map[int32]string
	// chunk is where the lists of partitions that requests name are carved from (carve): a
	// connection's fetches share its chunks rather than allocate a list each.
	chunk []SessionPartition
}

// sessionSteps are a Fetch request's step and the conversation's copy of it, allocated
// together; the copy becomes the response's step (fetchResponse).
type sessionSteps [2]SessionStep

// fetchRequest reads a Fetch request's session fields, checks them against what the
// conversation knows, and returns the step (nil for a fetch without a session), with warnings
// added to m, as the first of steps; the second is the conversation's, for the caller to copy
// the step into. The session's set changes only when the response accepts the request.
func (s *sessionState) fetchRequest(m *Message) (*sessionSteps, *fetchSession) {
	if m.APIKey != KeyFetch || m.Version < 7 || m.HeaderFields > len(m.Fields) {
		return nil, nil
	}
	body := m.Fields[m.HeaderFields:]
	id, epoch, at, ok := sessionFields(body)
	if !ok || epoch == -1 && id == 0 {
		return nil, nil // no session: a full fetch, as before KIP-227
	}
	steps := &sessionSteps{{ID: int32(id), Epoch: int32(epoch)}}
	st := &steps[0]
	listed := s.partitions(topLevel(body, "Topics"), false)
	warn := func(format string, a ...any) {
		m.Warnings = append(m.Warnings, Warning{Offset: at, Msg: fmt.Sprintf(format, a...)})
	}
	switch {
	case epoch == 0:
		st.Action, st.ID = SessionOpen, 0
		st.Added, st.Partitions, st.Followed = listed, sortedPartitions(listed), true
		next := &fetchSession{set: map[sessionKey]SessionPartition{}, followed: true}
		for _, p := range listed {
			next.set[p.key()] = p
		}
		return steps, next
	case epoch == -1:
		st.Action = SessionClose
		if how, ok := s.closed[st.ID]; ok {
			warn("fetch session %d is closed already (%s)", st.ID, how)
		}
		return steps, nil
	case epoch < 0:
		warn("fetch session %d: epoch %d is not a valid epoch", st.ID, epoch)
		return steps, nil
	}
	st.Action = SessionIncremental
	if how, ok := s.closed[st.ID]; ok {
		warn("fetch session %d was closed (%s): the broker will answer FETCH_SESSION_ID_NOT_FOUND", st.ID, how)
		st.Closed, st.Followed = true, true
		return steps, nil
	}
	return steps, s.incremental(st, listed, s.partitions(topLevel(body, "ForgottenTopicsData"), true), warn)
}

// sessionFields finds a Fetch request's SessionId and SessionEpoch, and where warnings about
// them point (the epoch); ok is false when either is missing.
func sessionFields(body []*Node) (id, epoch int64, at int, ok bool) {
	haveID, haveEpoch := false, false
	at = 4
	for _, n := range body {
		if v, isInt := n.Value.(int64); isInt && n.Type == wire.Int32 {
			switch n.Name {
			case "SessionId":
				id, haveID = v, true
			case "SessionEpoch":
				epoch, haveEpoch, at = v, true, n.Offset
			}
		}
	}
	return id, epoch, at, haveID && haveEpoch
}

// incremental fills in st, an incremental fetch of an open session listing partitions and
// forgetting others, and returns the session it would make; warn says when its epoch is not
// the next.
func (s *sessionState) incremental(st *SessionStep, listed, forgotten []SessionPartition, warn func(string, ...any)) *fetchSession {
	cur := s.open[st.ID]
	if cur == nil {
		cur = &fetchSession{set: map[sessionKey]SessionPartition{}}
	} else if want := nextEpoch(cur.epoch); st.Epoch != want {
		if st.Epoch > want {
			warn("fetch session %d: epoch %d skips epoch %d (the broker will answer INVALID_FETCH_SESSION_EPOCH)", st.ID, st.Epoch, want)
		} else {
			warn("fetch session %d: epoch %d was used already, the next is %d (the broker will answer INVALID_FETCH_SESSION_EPOCH)", st.ID, st.Epoch, want)
		}
	}
	next := cur
	if len(forgotten) == 0 && holdsAll(cur.set, listed) {
		// The usual fetch, listing only partitions of the session as they are: it updates
		// them all and leaves the session as it was. The session is its own next, which
		// differs only by the epoch its response sets (fetchResponse).
		st.Updated = listed
	} else {
		// A session's set is never changed once made: the next one is a copy, changed.
		next = &fetchSession{epoch: cur.epoch, set: make(map[sessionKey]SessionPartition, len(cur.set)+len(listed)), followed: cur.followed}
		for k, p := range cur.set {
			next.set[k] = p
		}
		for _, p := range listed {
			if _, ok := next.set[p.key()]; ok {
				st.Updated = append(st.Updated, p)
			} else {
				st.Added = append(st.Added, p)
			}
			next.set[p.key()] = p
		}
		for _, p := range forgotten {
			delete(next.set, p.key())
		}
	}
	st.Forgotten = forgotten
	st.Followed = cur.followed
	if next.sorted == nil {
		next.sorted = sortedPartitions(slicesOf(next.set))
	}
	st.Partitions = next.sorted // shared by the steps that leave the set as it is: never written
	return next
}

// holdsAll reports whether set holds every partition of listed, as it is.
func holdsAll(set map[sessionKey]SessionPartition, listed []SessionPartition) bool {
	for _, p := range listed {
		if q, ok := set[p.key()]; !ok || q != p {
			return false
		}
	}
	return true
}

// fetchResponse takes the response to a request whose step was st (the conversation's copy)
// and whose session would be next: it opens, advances or closes the session as the broker's
// answer says, adds a warning to m on the fetch-session errors, and returns the response's
// step, made in st's memory.
func (s *sessionState) fetchResponse(m *Message, st *SessionStep, next *fetchSession) *SessionStep {
	r := SessionStep{ID: st.ID, Epoch: st.Epoch, Action: st.Action, Followed: st.Followed, Response: true}
	var newID int64
	at := 4 // where warnings point: the error code
	if m.HeaderFields <= len(m.Fields) {
		for _, n := range m.Fields[m.HeaderFields:] {
			if v, ok := n.Value.(int64); ok {
				switch n.Name {
				case "ErrorCode":
					r.ErrorCode, at = int16(v), n.Offset
				case "SessionId":
					newID = v
				}
			}
		}
	}
	warn := func(format string, a ...any) {
		m.Warnings = append(m.Warnings, Warning{Offset: at, Msg: fmt.Sprintf(format, a...)})
	}
	if s.open == nil {
		s.open, s.closed = map[int32]*fetchSession{}, map[int32]string{}
	}
	switch {
	case r.ErrorCode == ErrFetchSessionIDNotFound:
		warn("the broker does not know fetch session %d (FETCH_SESSION_ID_NOT_FOUND): the client must open a new one", st.ID)
		delete(s.open, st.ID)
		if _, ok := s.closed[st.ID]; !ok {
			s.closed[st.ID] = "the broker answered FETCH_SESSION_ID_NOT_FOUND"
		}
	case r.ErrorCode == ErrInvalidFetchSessionEpoch:
		warn("the broker refused epoch %d of fetch session %d (INVALID_FETCH_SESSION_EPOCH): the client must open a new session", st.Epoch, st.ID)
	case r.ErrorCode != 0:
		// Another error: the session is unchanged.
	case st.Action == SessionOpen:
		if st.ID != 0 {
			delete(s.open, st.ID)
			s.closed[st.ID] = "by a request with epoch 0 that opened another"
		}
		if newID != 0 && next != nil {
			r.ID, r.Added, r.Partitions = int32(newID), st.Added, st.Partitions
			s.open[r.ID] = next
			delete(s.closed, r.ID) // an id the broker gives again
		}
	case st.Action == SessionClose:
		delete(s.open, st.ID)
		s.closed[st.ID] = "by a request with epoch -1"
	case st.Action == SessionIncremental && next != nil:
		next.epoch = st.Epoch
		s.open[st.ID] = next
	}
	*st = r
	return st
}

// nextEpoch is the epoch that follows e: epochs wrap from the largest int32 to 1.
func nextEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// partitions reads the partitions of a Fetch request's Topics (structs with a Partitions array
// of structs holding Partition) or ForgottenTopicsData (a Partitions array of int32).
func (s *sessionState) partitions(arr *Node, forgotten bool) []SessionPartition {
	if arr == nil {
		return nil
	}
	// The list is made once, of the right size: a fetch lists the partitions of several topics.
	n := 0
	for _, t := range arr.Children {
		if parts := childNamed(t, "Partitions"); parts != nil {
			n += len(parts.Children)
		}
	}
	if n == 0 {
		return nil
	}
	out := carve(&s.chunk, n)[:0]
	for _, t := range arr.Children {
		var topic SessionPartition
		var parts *Node
		for _, c := range t.Children {
			switch v := c.Value.(type) {
			case string:
				if c.Name == "Topic" {
					topic.Topic = v
				}
			case UUID:
				if c.Name == "TopicId" {
					topic.TopicID = v
				}
			}
			if c.Name == "Partitions" {
				parts = c
			}
		}
		if parts == nil {
			continue
		}
		for _, p := range parts.Children {
			v, ok := p.Value.(int64)
			if !forgotten {
				ok = false
				for _, c := range p.Children {
					if x, isInt := c.Value.(int64); isInt && c.Name == "Partition" {
						v, ok = x, true
					}
				}
			}
			if ok {
				sp := topic
				sp.Partition = int32(v)
				out = append(out, sp)
			}
		}
	}
	if len(out) == 0 {
		return nil // no partition read: nil, not an empty list
	}
	return out
}

func slicesOf(m map[sessionKey]SessionPartition) []SessionPartition {
	out := make([]SessionPartition, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	return out
}

// sortedPartitions sorts a copy of ps by topic and partition, for output that does not depend
// on map order.
func sortedPartitions(ps []SessionPartition) []SessionPartition {
	out := slices.Clone(ps)
	slices.SortFunc(out, comparePartitions)
	return out
}

// comparePartitions orders partitions by TopicKey, then number, without making the strings of
// topic ids (a sort compares each partition several times).
func comparePartitions(a, b SessionPartition) int {
	var ka, kb [64]byte
	return cmp.Or(bytes.Compare(a.appendTopicKey(ka[:0]), b.appendTopicKey(kb[:0])), cmp.Compare(a.Partition, b.Partition))
}

// appendTopicKey appends TopicKey to b.
func (p SessionPartition) appendTopicKey(b []byte) []byte {
	if p.Topic != "" {
		return append(b, p.Topic...)
	}
	b, _ = p.TopicID.AppendText(b)
	return b
}
