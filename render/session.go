package render

import (
	"slices"
	"strconv"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/internal/inert"
	"github.com/kdissect/kdissect/internal/plural"
)

// Fetch sessions (KIP-227) as summaries, diagrams and JSON lines show them; the conversation
// follows them (codec.SessionStep).

// appendSession appends the account of a fetch-session step: "session 1 epoch 2: adds
// orders[0], forgets payments[1]; 3 partitions" for a request, "session 1 opened" for the
// answer to one that opens it. all lists the session's whole set rather than counting it.
func appendSession(b []byte, s *codec.SessionStep, all bool) []byte {
	if s.Response {
		switch {
		case s.ErrorCode != 0:
			return append(strconv.AppendInt(append(b, "session "...), int64(s.ID), 10), " refused"...)
		case s.Action == codec.SessionOpen && s.ID != 0:
			return append(strconv.AppendInt(append(b, "session "...), int64(s.ID), 10), " opened"...)
		case s.Action == codec.SessionClose:
			return append(strconv.AppendInt(append(b, "session "...), int64(s.ID), 10), " closed"...)
		}
		return strconv.AppendInt(append(b, "session "...), int64(s.ID), 10)
	}
	switch s.Action {
	case codec.SessionOpen:
		b = append(b, "new session"...)
		if s.ID != 0 {
			b = strconv.AppendInt(append(b, " (closes "...), int64(s.ID), 10)
			b = append(b, ')')
		}
	case codec.SessionClose:
		return append(strconv.AppendInt(append(b, "session "...), int64(s.ID), 10), " close (epoch -1)"...)
	default:
		b = strconv.AppendInt(append(b, "session "...), int64(s.ID), 10)
		b = strconv.AppendInt(append(b, " epoch "...), int64(s.Epoch), 10)
	}
	if s.Closed {
		return append(b, " (a closed session)"...)
	}
	b = append(b, ':')
	if s.Action == codec.SessionIncremental {
		sep := ""
		for _, part := range []struct {
			verb string
			ps   []codec.SessionPartition
		}{{" adds ", s.Added}, {" forgets ", s.Forgotten}, {" updates ", s.Updated}} {
			if len(part.ps) > 0 {
				b = appendPartitions(append(append(b, sep...), part.verb...), part.ps, 3)
				sep = ","
			}
		}
		if sep == "" {
			b = append(b, " no change"...)
		}
		b = append(b, ';')
	}
	b = append(b, ' ')
	if all {
		if s.Action == codec.SessionIncremental {
			b = append(b, "session now "...)
		}
		if len(s.Partitions) > 0 {
			b = append(appendPartitions(b, s.Partitions, 0), ' ')
		}
		b = append(b, '(')
	}
	b = strconv.AppendInt(b, int64(len(s.Partitions)), 10)
	b = plural.AppendNoun(append(b, ' '), len(s.Partitions), "partition")
	if !s.Followed {
		b = append(b, " known (the session opened before the capture or on another connection)"...)
	}
	if all {
		b = append(b, ')')
	}
	return b
}

// appendPartitions appends partitions grouped by topic, in order of first appearance:
// "orders[0,1] payments[2]"; with most > 0, at most that many topics, then "+N more".
func appendPartitions(b []byte, ps []codec.SessionPartition, most int) []byte {
	if len(ps) <= fewPartitions {
		return appendFewPartitions(b, ps, most)
	}
	return appendManyPartitions(b, ps, most)
}

// appendManyPartitions is appendPartitions for any number of partitions, grouped through a map.
func appendManyPartitions(b []byte, ps []codec.SessionPartition, most int) []byte {
	var topics []string
	byTopic := map[string][]int32{}
	for _, p := range ps {
		k := topicKey(p)
		if _, ok := byTopic[k]; !ok {
			topics = append(topics, k)
		}
		byTopic[k] = append(byTopic[k], p.Partition)
	}
	for i, t := range topics {
		if most > 0 && i == most {
			return appendMore(b, len(topics)-most)
		}
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(inert.Append(b, t), '[')
		for j, p := range byTopic[t] {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(p), 10)
		}
		b = append(b, ']')
	}
	return b
}

// fewPartitions is the most partitions appendFewPartitions groups: most steps list a few, and
// a summary shows a step on every fetch.
const fewPartitions = 32

// appendFewPartitions is appendPartitions for a few partitions, grouped by looking back rather
// than through a map, without allocating.
func appendFewPartitions(b []byte, ps []codec.SessionPartition, most int) []byte {
	var buf [fewPartitions]int
	firsts := buf[:0] // where each topic is first named
	for i, p := range ps {
		if !slices.ContainsFunc(firsts, func(f int) bool { return sameTopic(ps[f], p) }) {
			firsts = append(firsts, i)
		}
	}
	for n, f := range firsts {
		if most > 0 && n == most {
			return appendMore(b, len(firsts)-most)
		}
		if n > 0 {
			b = append(b, ' ')
		}
		if t := ps[f]; t.Topic != "" {
			b = inert.Append(b, t.Topic)
		} else {
			b, _ = t.TopicID.AppendText(append(b, "id:"...))
		}
		b = append(b, '[')
		for j, p := range ps[f:] {
			if j == 0 || sameTopic(ps[f], p) {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(p.Partition), 10)
			}
		}
		b = append(b, ']')
	}
	return b
}

// topicKey names a partition's topic as the summary's topics do: by name, else "id:" and its
// id.
func topicKey(p codec.SessionPartition) string {
	if p.Topic != "" {
		return p.Topic
	}
	return "id:" + p.TopicID.String()
}

// sameTopic reports whether two partitions have the same topicKey, making no string for
// either unless one is named and the other is not.
func sameTopic(p, q codec.SessionPartition) bool {
	switch {
	case p.Topic != "" && q.Topic != "":
		return p.Topic == q.Topic
	case p.Topic == "" && q.Topic == "":
		return p.TopicID == q.TopicID
	}
	return topicKey(p) == topicKey(q)
}

// appendMore appends " +N more", for the topics not shown.
func appendMore(b []byte, n int) []byte {
	return append(strconv.AppendInt(append(b, " +"...), int64(n), 10), " more"...)
}

// session appends the "fetch_session" key of a JSON line.
func (j *JSON) session(b []byte, s *codec.SessionStep) []byte {
	b = append(b, `,"fetch_session":{"session_id":`...)
	b = strconv.AppendInt(b, int64(s.ID), 10)
	b = append(b, `,"epoch":`...)
	b = strconv.AppendInt(b, int64(s.Epoch), 10)
	b = append(append(append(b, `,"action":"`...), s.Action.String()...), '"')
	if s.Response {
		b = append(b, `,"error_code":`...)
		b = strconv.AppendInt(b, int64(s.ErrorCode), 10)
	} else {
		b = j.sessionPartitions(append(b, `,"added":`...), s.Added)
		b = j.sessionPartitions(append(b, `,"updated":`...), s.Updated)
		b = j.sessionPartitions(append(b, `,"forgotten":`...), s.Forgotten)
		b = j.sessionPartitions(append(b, `,"partitions":`...), s.Partitions)
	}
	b = append(b, `,"followed":`...)
	b = strconv.AppendBool(b, s.Followed)
	if s.Closed {
		b = append(b, `,"closed":true`...)
	}
	return append(b, '}')
}

// sessionPartitions appends a JSON array of partitions: topic (its name, when known), topic_id
// (Fetch v13+) and partition.
func (j *JSON) sessionPartitions(b []byte, ps []codec.SessionPartition) []byte {
	b = append(b, '[')
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		if p.Topic != "" {
			b = j.str(append(b, `"topic":`...), p.Topic)
			b = append(b, ',')
		}
		if p.TopicID != (codec.UUID{}) {
			b = j.str(append(b, `"topic_id":`...), p.TopicID.String())
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `"partition":`...), int64(p.Partition), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}
