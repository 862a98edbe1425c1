package codec

// Facts are what a message says about the things people look for in a capture: topics, groups,
// members and errors. They come from the definitions' entityType annotations and from Kafka's
// field-naming conventions, never from per-API code.
type Facts struct {
	Topics   []string // topic names, first seen first, without repeats
	TopicIDs []UUID
	Groups   []string
	Members  []string
	// Errors holds the non-zero error codes, without repeats.
	Errors []int16
}

// Facts gathers the message's facts from its field tree.
func (m *Message) Facts() Facts {
	var f Facts
	seen := map[any]bool{}
	add := func(kind string, v any) bool {
		k := [2]any{kind, v}
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}
	Walk(m.Fields[min(m.HeaderFields, len(m.Fields)):], func(n *Node, _ int) bool {
		switch v := n.Value.(type) {
		case string:
			switch {
			case n.Def != nil && n.Def.EntityType == "topicName":
				if add("t", v) {
					f.Topics = append(f.Topics, v)
				}
			case n.Def != nil && n.Def.EntityType == "groupId":
				if add("g", v) {
					f.Groups = append(f.Groups, v)
				}
			case n.Name == "MemberId" && v != "":
				if add("m", v) {
					f.Members = append(f.Members, v)
				}
			}
		case UUID:
			if n.Name == "TopicId" && v != (UUID{}) && add("i", v) {
				f.TopicIDs = append(f.TopicIDs, v)
			}
		case int64:
			if IsErrorCode(n) && v != 0 && add("e", v) {
				f.Errors = append(f.Errors, int16(v))
			}
		}
		return true
	})
	return f
}
