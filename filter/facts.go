package filter

import (
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// The facts of model.Facts are names of an expression: each is patched into a call of the
// method of env that its kind names, with the fact's index, and holds the pair's fact: the
// request's and the response's lists together, their counts added, the first text of the two.

// factMethods names the method of env that gives a fact of each kind.
var factMethods = map[model.FactKind]string{
	model.FactText: "FactText", model.FactCount: "FactCount", model.FactList: "FactList", model.FactCodes: "FactCodes",
	model.FactPartitions: "FactRows", model.FactRecordSets: "FactRows", model.FactCoordinators: "FactRows",
}

// factIndex finds a fact by name.
func factIndex(name string) (int, bool) {
	for i, f := range model.Facts() {
		if f.Name == name {
			return i, true
		}
	}
	return 0, false
}

// pairFact is the pair's value of fact i, computed once per pair.
func (e *env) pairFact(i int) *model.Value {
	if len(e.facts) == 0 {
		e.facts = make([]model.Value, len(model.Facts()))
	}
	v := &e.facts[i]
	if i < 64 { // past the bits of factsBuilt, computed at each call
		if e.factsBuilt&(1<<i) != 0 {
			return v
		}
		e.factsBuilt |= 1 << i
	}
	v.Reset()
	fact := &model.Facts()[i]
	add := fact.Add
	if fact.Pair != nil {
		add = fact.Pair
	}
	for _, m := range []*model.Entry{e.req, e.resp} {
		if m != nil && m.Facts != nil {
			add(v, m.Facts)
		}
	}
	return v
}

// FactText is a text fact: nil when neither message has it.
func (e *env) FactText(i int) any {
	if v := e.pairFact(i); v.Text != "" {
		return v.Text
	}
	return nil
}

func (e *env) FactCount(i int) int { return int(e.pairFact(i).Count) }

func (e *env) FactList(i int) []string { return e.pairFact(i).List }

func (e *env) FactCodes(i int) []int {
	v := e.pairFact(i)
	out := make([]int, len(v.Codes))
	for k, c := range v.Codes {
		out[k] = int(c)
	}
	return out
}

// FactRows is a fact of structs, as maps by the names of their Parquet columns.
func (e *env) FactRows(i int) []any {
	v := e.pairFact(i)
	var out []any
	for _, p := range v.Partitions {
		out = append(out, map[string]any{"topic": p.Topic, "partition": int(p.Partition)})
	}
	for _, r := range v.RecordSets {
		codecs := make([]any, len(r.Codecs))
		for k, c := range r.Codecs {
			codecs[k] = c
		}
		out = append(out, map[string]any{"topic": r.Topic, "partition": int(r.Partition), "records": int(r.Records),
			"control_records": int(r.Control), "bytes": int(r.Bytes), "codecs": codecs})
	}
	for _, c := range v.Coordinators {
		out = append(out, coordinator(c))
	}
	return out
}

func coordinator(c codec.Coordinator) map[string]any {
	return map[string]any{"key": c.Key, "node_id": int(c.NodeID), "host": c.Host, "port": int(c.Port), "error_code": int(c.ErrorCode)}
}
