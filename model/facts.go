package model

import (
	"slices"
	"strconv"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/internal/inert"
	"github.com/kdissect/kdissect/internal/plural"
)

// Fact is one thing the facts of a message (codec.Facts) say, declared once for every output:
// the summary line shows it, the Parquet files have a column of it, -Y names it, and the JSON
// lines of responses carry the few that make a request/response pair one line. The table is
// here rather than in codec because it says how the outputs name and show the facts, which is
// not the codec's business; codec.Facts says what a message holds, Facts what is made of it.
type Fact struct {
	// Name is the fact's JSON key, -Y name and Parquet column (Column, where set, names the
	// column instead: a column named before the table was).
	Name, Column string
	// About says what the fact holds, as the documentation says it.
	About string
	Kind  FactKind
	// Add adds the fact of a message to v: appends to the list of v that Kind says (names
	// without repeats), adds to its count, sets its text unless it has one. So one call on a
	// reset Value gives a message's fact, and one call per message a pair's.
	Add func(v *Value, f *codec.Facts)
	// Pair, where set, is what -Y's name holds of each message instead of Add's.
	Pair func(v *Value, f *codec.Facts)
	// Label starts the fact's part of a summary line, and Show appends the rest, or nothing
	// when the message does not have the fact. Without Show, the summary shows the fact inside
	// another's part (topic ids and partitions with the topics) or not at all.
	Label string
	Show  func(b []byte, f *codec.Facts) []byte
	// JSON: the JSON line of a response carries the fact. Only a FactList made of the error
	// codes alone can be: the JSON lines have no other facts unless another output asked for
	// them (they take codec.Message.Errors).
	JSON bool
}

// ColumnName is the fact's Parquet column.
func (f *Fact) ColumnName() string {
	if f.Column != "" {
		return f.Column
	}
	return f.Name
}

// FactKind says what a fact's values are, and so which field of a Value holds them.
type FactKind uint8

const (
	FactText         FactKind = iota // Value.Text; "" when the message has none
	FactCount                        // Value.Count
	FactList                         // Value.List: names
	FactCodes                        // Value.Codes: error codes
	FactPartitions                   // Value.Partitions
	FactRecordSets                   // Value.RecordSets
	FactCoordinators                 // Value.Coordinators
)

// Value holds a fact's value in the field its Kind says. Reset keeps its lists' memory, so that
// a Value used for message after message allocates only while its lists grow.
type Value struct {
	Text         string
	Count        int64
	List         []string
	Codes        []int16
	Partitions   []Partition
	RecordSets   []RecordSet
	Coordinators []codec.Coordinator
}

// Reset empties v.
func (v *Value) Reset() {
	*v = Value{List: v.List[:0], Codes: v.Codes[:0], Partitions: v.Partitions[:0], RecordSets: v.RecordSets[:0],
		Coordinators: v.Coordinators[:0]}
}

// Partition is one partition a message names, and its topic (its name, or its id as Kafka
// prints it).
type Partition struct {
	Topic     string
	Partition int32
}

// RecordSet counts the records of one records field: Records the data records, Control the
// control records (transaction markers); Bytes is the field's size on the wire.
type RecordSet struct {
	Topic                   string
	Partition               int32
	Records, Control, Bytes int64
	Codecs                  []string
}

// Facts is the table of facts, in the order a summary line shows them. It is shared: callers
// read it and never write it.
func Facts() []Fact { return facts }

// facts is never written: Facts hands it out. A new fact is a row here, and a field of
// render's parquetRow for its column, of its kind's type (render refuses to start without).
var facts = []Fact{
	{Name: "topics", Kind: FactList, Label: "topics ", Show: showTopics, Pair: addAllTopics,
		About: "the topics named, first seen first (topic ids resolved to names where the capture taught them); for -Y, their ids too, as Kafka prints them",
		Add:   func(v *Value, f *codec.Facts) { v.List = addOnce(v.List, f.Topics) }},
	{Name: "topic_ids", Kind: FactList, About: "the topic ids named, as Kafka prints them", Add: addTopicIDs},
	{Name: "partitions", Kind: FactPartitions, About: "the partitions named, with their topics: topic, partition", Add: addPartitions},
	{Name: "records", Kind: FactCount, Show: showRecords,
		About: "data records in the record batches, as their headers count them (also where a batch does not decompress)",
		Add: func(v *Value, f *codec.Facts) {
			v.Count += sumRecords(f, func(r *codec.RecordSet) int { return r.Records - r.Control })
		}},
	{Name: "control_records", Kind: FactCount, About: "control records (transaction markers)",
		Add: func(v *Value, f *codec.Facts) {
			v.Count += sumRecords(f, func(r *codec.RecordSet) int { return r.Control })
		}},
	{Name: "records_bytes", Kind: FactCount, About: "bytes of the records fields on the wire",
		Add: func(v *Value, f *codec.Facts) {
			v.Count += sumRecords(f, func(r *codec.RecordSet) int { return r.Bytes })
		}},
	{Name: "codecs", Kind: FactList, About: "the compression codecs of the batches: none, gzip, snappy, lz4, zstd", Add: addCodecs},
	{Name: "record_sets", Kind: FactRecordSets, About: "records per records field: topic, partition, records, control_records, bytes, codecs", Add: addRecordSets},
	{Name: "groups", Kind: FactList, Label: "group ", Show: showGroups, About: "consumer group ids",
		Add: func(v *Value, f *codec.Facts) { v.List = addOnce(v.List, f.Groups) }},
	{Name: "members", Kind: FactList, Label: "member ", Show: showMember, About: "group member ids",
		Add: func(v *Value, f *codec.Facts) { v.List = addOnce(v.List, f.Members) }},
	{Name: "txn", Kind: FactText, Label: "txn ", About: "how an EndTxn request ends its transaction: commit or abort",
		Add: func(v *Value, f *codec.Facts) { setText(v, f.Txn) }, Show: func(b []byte, f *codec.Facts) []byte { return inert.Append(b, f.Txn) }},
	{Name: "coordinators", Kind: FactCoordinators, Label: "coordinator ", Show: showCoordinators,
		About: "the coordinators a FindCoordinator response names: key, node_id, host, port, error_code",
		Add:   func(v *Value, f *codec.Facts) { v.Coordinators = append(v.Coordinators, f.Coordinators...) }},
	{Name: "sasl_mechanism", Kind: FactText, Label: "mechanism ", About: "the SASL mechanism a SaslHandshake request asks for",
		Add:  func(v *Value, f *codec.Facts) { setText(v, f.SASLMechanism) },
		Show: func(b []byte, f *codec.Facts) []byte { return inert.Append(b, f.SASLMechanism) }},
	{Name: "sasl_user", Kind: FactText, Label: "user ", About: "the user name a SASL token carries (PLAIN, SCRAM)",
		Add: func(v *Value, f *codec.Facts) { setText(v, f.SASLUser) }, Show: showUser},
	{Name: "error_codes", Kind: FactCodes, About: "the non-zero error codes, each once", Add: addCodes},
	{Name: "errors", Column: "error_names", Kind: FactList, Label: "errors ", Show: showErrors, JSON: true,
		About: "names of the non-zero error codes, in the same order: \"NOT_COORDINATOR\"", Add: addErrors},
}

// appendNew appends the values of vs that list does not hold yet.
func appendNew(list []string, vs ...string) []string {
	for _, s := range vs {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// addOnce appends vs, a list without repeats, to list: searched only when list has values
// already (a pair's second message), since a message can name many thousands of topics.
func addOnce(list, vs []string) []string {
	if len(list) == 0 {
		return append(list, vs...)
	}
	return appendNew(list, vs...)
}

func setText(v *Value, s string) {
	if v.Text == "" {
		v.Text = s
	}
}

// addAllTopics adds every topic the message names, by name and by id (codec.Facts.AllTopics):
// an expression can then choose a topic whose name the capture does not say.
func addAllTopics(v *Value, f *codec.Facts) { v.List = appendNew(v.List, f.AllTopics()...) }

func addTopicIDs(v *Value, f *codec.Facts) {
	pair := len(v.List) > 0
	for _, id := range f.TopicIDs {
		if s := id.String(); !pair || !slices.Contains(v.List, s) {
			v.List = append(v.List, s)
		}
	}
}

// addPartitions adds the partitions in the order of the topics, then of the topic ids; then
// those of any other key, sorted.
func addPartitions(v *Value, f *codec.Facts) {
	done := 0
	find := codec.NewPartitionsFinder(f)
	add := func(key string) {
		if ps, ok := find.Of(key); ok {
			for _, n := range ps {
				v.Partitions = append(v.Partitions, Partition{Topic: key, Partition: n})
			}
			done++
		}
	}
	for _, t := range f.Topics {
		add(t)
	}
	var buf [24]byte
	for _, id := range f.TopicIDs {
		if k, _ := id.AppendText(buf[:0]); find.Named(string(k)) {
			add(string(k))
		}
	}
	if done == len(f.Partitions) {
		return
	}
	var rest []string
	for _, tp := range f.Partitions {
		k := tp.Topic
		if !slices.Contains(f.Topics, k) && !slices.ContainsFunc(f.TopicIDs, func(id codec.UUID) bool { return id.String() == k }) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		add(k)
	}
}

func sumRecords(f *codec.Facts, n func(*codec.RecordSet) int) int64 {
	sum := int64(0)
	for i := range f.RecordSets {
		sum += int64(n(&f.RecordSets[i]))
	}
	return sum
}

func addCodecs(v *Value, f *codec.Facts) {
	for _, r := range f.RecordSets {
		v.List = appendNew(v.List, r.Codecs...)
	}
}

func addRecordSets(v *Value, f *codec.Facts) {
	for _, r := range f.RecordSets {
		v.RecordSets = append(v.RecordSets, RecordSet{Topic: r.Key(), Partition: r.Partition, Records: int64(r.Records - r.Control),
			Control: int64(r.Control), Bytes: int64(r.Bytes), Codecs: r.Codecs})
	}
}

func addCodes(v *Value, f *codec.Facts) {
	for _, c := range f.Errors {
		if !slices.Contains(v.Codes, c) {
			v.Codes = append(v.Codes, c)
		}
	}
}

func addErrors(v *Value, f *codec.Facts) {
	for _, c := range f.Errors {
		v.List = appendNew(v.List, codec.ErrorName(c))
	}
}

// showTopics shows topics by name, then the topic ids that name partitions; three at most.
// Topic ids are looked up in Partitions without making strings of them.
func showTopics(b []byte, f *codec.Facts) []byte {
	var idKey [24]byte
	find := codec.NewPartitionsFinder(f)
	// Most messages' ids have their names by now, their partitions too: where no topic of the
	// partitions is as long as an id's text, no id names partitions, and none is made text.
	ids := f.TopicIDs
	if !slices.ContainsFunc(f.Partitions, func(p codec.TopicPartitions) bool { return len(p.Topic) == codec.UUIDTextLen }) {
		ids = nil
	}
	total := len(f.Topics)
	for _, id := range ids {
		if k, _ := id.AppendText(idKey[:0]); find.Named(string(k)) {
			total++
		}
	}
	shown := 0
	for _, name := range f.Topics {
		if shown == 3 {
			break
		}
		b = inert.Append(space(b, &shown), name)
		if ps, _ := find.Of(name); len(ps) > 0 {
			b = append(b, '[')
			for i, p := range ps {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(p), 10)
			}
			b = append(b, ']')
		}
	}
	for _, id := range ids {
		if shown == 3 {
			break
		}
		if k, _ := id.AppendText(idKey[:0]); find.Named(string(k)) {
			b = append(append(space(b, &shown), "id:"...), k...)
		}
	}
	if total > 3 {
		b = strconv.AppendInt(append(b, " +"...), int64(total-3), 10)
		b = append(b, " more"...)
	}
	return b
}

// space separates the topics shown after the first.
func space(b []byte, shown *int) []byte {
	if *shown++; *shown > 1 {
		b = append(b, ' ')
	}
	return b
}

// showRecords shows the records of the message's record sets, and their codecs: "2 data + 2
// control records" where there are transaction markers, which are not data.
func showRecords(b []byte, f *codec.Facts) []byte {
	if len(f.RecordSets) == 0 {
		return b
	}
	records, control := 0, 0
	for _, r := range f.RecordSets {
		records += r.Records
		control += r.Control
	}
	if control > 0 {
		b = strconv.AppendInt(b, int64(records-control), 10)
		b = strconv.AppendInt(append(b, " data + "...), int64(control), 10)
		b = append(b, " control"...)
	} else {
		b = strconv.AppendInt(b, int64(records), 10)
	}
	b = plural.AppendNoun(append(b, ' '), records, "record")
	var codecs []string
	for _, r := range f.RecordSets {
		codecs = appendNew(codecs, r.Codecs...)
	}
	for i, c := range codecs {
		if i == 0 {
			b = append(b, " ("...)
		} else {
			b = append(b, ',')
		}
		b = inert.Append(b, c)
	}
	if len(codecs) > 0 {
		b = append(b, ')')
	}
	return b
}

func showGroups(b []byte, f *codec.Facts) []byte {
	for i, g := range f.Groups {
		if i > 0 {
			b = append(b, ',')
		}
		b = inert.Append(b, g)
	}
	return b
}

// showMember shows the first member: a message names one, but for a group's assignments.
func showMember(b []byte, f *codec.Facts) []byte {
	if len(f.Members) == 0 {
		return b
	}
	return inert.Append(b, f.Members[0])
}

func showCoordinators(b []byte, f *codec.Facts) []byte {
	for i, c := range f.Coordinators {
		if i > 0 {
			b = append(b, ", "...)
		}
		if c.Key != "" {
			b = append(inert.Append(b, c.Key), ": "...)
		}
		if c.ErrorCode != 0 {
			b = append(b, codec.ErrorName(c.ErrorCode)...)
			continue
		}
		b = strconv.AppendInt(append(b, "node "...), int64(c.NodeID), 10)
		b = inert.Append(append(b, ' '), c.HostPort())
	}
	return b
}

// showUser quotes the user name: it is the client's to choose.
func showUser(b []byte, f *codec.Facts) []byte {
	if f.SASLUser == "" {
		return b
	}
	return inert.AppendQuote(b, f.SASLUser)
}

func showErrors(b []byte, f *codec.Facts) []byte {
	for i, c := range f.Errors {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, codec.ErrorName(c)...)
	}
	return b
}
