package schema

import "testing"

// TestEntity reads the entity of fields of the embedded definitions by their annotations.
func TestEntity(t *testing.T) {
	set, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	field := func(s *StructDef, name string) *Field {
		for _, f := range s.Fields {
			if f.Name == name {
				return f
			}
		}
		t.Fatalf("%s has no field %s", s.Name, name)
		return nil
	}
	produce := set.API(0).Request.Body
	topics := field(produce, "TopicData")
	tests := []struct {
		f    *Field
		want Entity
	}{
		{field(topics.Struct, "Name"), TopicName},
		{field(produce, "TransactionalId"), TransactionalID},
		{field(produce, "Acks"), NoEntity},
		{field(set.API(11).Request.Body, "GroupId"), GroupID},       // JoinGroup
		{field(set.API(3).Response.Body, "ControllerId"), BrokerID}, // Metadata
		{field(set.API(22).Request.Body, "ProducerId"), ProducerID}, // InitProducerId
	}
	for _, tt := range tests {
		if got := tt.f.Entity(); got != tt.want {
			t.Errorf("%s (entityType %q): Entity() = %d, want %d", tt.f.Name, tt.f.EntityType, got, tt.want)
		}
	}
}
