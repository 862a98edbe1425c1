package schema

// Entity is what a field names, by Kafka's entityType annotation: a topic, a group, a broker, ...
type Entity uint8

// The entities kdissect knows; others are NoEntity.
const (
	NoEntity Entity = iota
	TopicName
	GroupID
	BrokerID
	TransactionalID
	ProducerID
)

// Entity is what f names (its EntityType as a typed value).
func (f *Field) Entity() Entity {
	switch f.EntityType {
	case "topicName":
		return TopicName
	case "groupId":
		return GroupID
	case "brokerId":
		return BrokerID
	case "transactionalId":
		return TransactionalID
	case "producerId":
		return ProducerID
	}
	return NoEntity
}
