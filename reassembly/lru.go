package reassembly

import "time"

// lru lists streams, the most recently active first: moving a stream to the front on each of
// its segments keeps the list in order of their last segments, and the least recently active
// are at the back, without visiting the others.
type lru struct {
	head, tail *stream
	n          int
}

// push adds s at the front.
func (l *lru) push(s *stream) {
	s.prev, s.next = nil, l.head
	if l.head != nil {
		l.head.prev = s
	} else {
		l.tail = s
	}
	l.head = s
	l.n++
}

// remove takes s out of the list.
func (l *lru) remove(s *stream) {
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		l.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		l.tail = s.prev
	}
	s.prev, s.next = nil, nil
	l.n--
}

// touch moves s to the front.
func (l *lru) touch(s *stream) {
	if l.head == s {
		return
	}
	l.remove(s)
	l.push(s)
}

// idleBefore reports whether the least recently active stream was last seen before t. Segments
// come in time order (else Assembler.disorder), so no other one was.
func (l *lru) idleBefore(t time.Time) bool {
	return l.tail != nil && l.tail.lastSeen.Before(t)
}

// nth returns the n-th least recently active stream (1: the least), or nil if n < 1.
func (l *lru) nth(n int) *stream {
	if n < 1 {
		return nil
	}
	s := l.tail
	for i := 1; i < n && s != nil; i++ {
		s = s.prev
	}
	return s
}
