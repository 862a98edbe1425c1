package codec

import (
	"math"
	"slices"
	"sync"

	"github.com/kdissect/kdissect/codec/schema"
)

// A shallow decode (Codec.Shallow) makes nodes only for the fields that these read:
//
//   - Message.Facts: fields with entityType topicName or groupId, MemberId, TopicId, error codes
//     (IsErrorCode: int16 fields named ...ErrorCode), partition numbers (partitionName, int32)
//     and partition lists (partitionArray, []int32), records fields, and FindCoordinator's
//     KeyType, Key and CoordinatorKeys (coordinatorGroups);
//   - TopicIDNames, TopicNames.Annotate and Resolve: topic names and TopicId, in their structs;
//   - the pairing (Conversation): Produce's Acks, SaslHandshake's ErrorCode;
//   - Message.Facts again, for the statistics: ApiVersions' ClientSoftwareName and
//     ClientSoftwareVersion;
//   - SASL: AuthBytes, whose token is decoded as in a full decode;
//   - Message.Facts, for one API each: the fields factFields names (EndTxn's Committed,
//     FindCoordinator's answers, SaslHandshake's Mechanism).
//
// A struct, or an array of structs, is kept when a field below it is, with only its kept
// children; a kept tagged field keeps its tagged_field node and the section's. The header is
// always decoded whole.

// keptNames are the names of fields kept whatever their type.
var keptNames = map[string]bool{
	"MemberId": true, "TopicId": true, "KeyType": true, "Key": true, "CoordinatorKeys": true,
	"Acks": true, "ClientSoftwareName": true, "ClientSoftwareVersion": true, "AuthBytes": true,
	"ErrorCode": true,
}

// keptItself reports whether a shallow decode keeps field f for what it is, not for what it
// holds. Such a field is decoded whole.
func keptItself(f *schema.Field) bool {
	switch {
	case f.Entity() == schema.TopicName || f.Entity() == schema.GroupID:
		return true
	case keptNames[f.Name]:
		return true
	case f.Kind == schema.Int16 && errorCodeName(f.Name):
		return true
	case f.Kind == schema.Int32 && partitionName(f.Name):
		return true
	case f.Kind == schema.Array && f.Elem == schema.Int32 && partitionArray(f.Name):
		return true
	}
	return f.Kind == schema.Records
}

// shallowPlan says which fields of one struct definition a shallow decode keeps.
type shallowPlan struct {
	// keep and sub are indexed like the struct's Fields. sub holds, for a kept struct field or
	// array of structs, the plan of its struct; nil for a field kept itself (decoded whole).
	keep []bool
	sub  []*shallowPlan
	// kept counts the fields kept.
	kept int
	// layouts are the steps through the struct's body, by version: sorted by from, the first
	// from every version below the second's.
	layouts []planLayout
}

// planLayout is the steps through a struct's body at the versions from from to the next
// layout's.
type planLayout struct {
	from  int16
	steps []planStep
}

// planStep is one step through a struct's body: its fields from first to last-1, those of them
// in the body at the layout's versions. When those are all skipped and of fixed size, skip is
// the bytes they take in all; else skip is 0 and the step is one field, in the body. fixed is
// the size of that field when it is kept and of fixed size (a number, a UUID), else 0; role
// is then its role in the facts.
type planStep struct {
	first, last int
	skip, fixed int
	role        factRole
}

// stepsAt returns the steps through the struct's body at version v; nil for no plan, or a
// plan without layouts (keepNothing), whose fields are walked one by one.
func (p *shallowPlan) stepsAt(v int16) []planStep {
	if p == nil || p.layouts == nil {
		return nil
	}
	for i := len(p.layouts) - 1; i > 0; i-- {
		if v >= p.layouts[i].from {
			return p.layouts[i].steps
		}
	}
	return p.layouts[0].steps
}

// layouts makes the steps through s's body for each range of versions over which the fields
// in it stay the same; keep says which fields are kept.
func layouts(s *schema.StructDef, keep []bool) []planLayout {
	froms := []int16{math.MinInt16}
	for _, f := range s.Fields {
		for _, r := range []schema.Versions{f.Versions, f.TaggedVersions} {
			if r.Empty() {
				continue
			}
			froms = append(froms, r.Lo)
			if r.Hi < schema.MaxVersion {
				froms = append(froms, r.Hi+1)
			}
		}
	}
	slices.Sort(froms)
	froms = slices.Compact(froms)
	out := make([]planLayout, len(froms))
	for i, v := range froms {
		out[i] = planLayout{from: v, steps: bodySteps(s, keep, v)}
	}
	return out
}

// bodySteps makes the steps through s's body at version v: one per field kept or of variable
// size, and one per run of skipped fields of fixed size.
func bodySteps(s *schema.StructDef, keep []bool, v int16) []planStep {
	var steps []planStep
	for i, f := range s.Fields {
		if !f.InBody(v) {
			continue
		}
		size := f.Kind.FixedSize() // 0 for structs, arrays and the variable kinds
		n := len(steps)
		switch {
		case keep[i]:
			steps = append(steps, planStep{first: i, last: i + 1, fixed: size, role: roleOf(f, false)})
		case size == 0:
			steps = append(steps, planStep{first: i, last: i + 1})
		case n > 0 && steps[n-1].skip > 0:
			steps[n-1].last, steps[n-1].skip = i+1, steps[n-1].skip+size
		default:
			steps = append(steps, planStep{first: i, last: i + 1, skip: size})
		}
	}
	return steps
}

// keepNothing is the plan that keeps no field (the zero plan). It is never written.
var keepNothing shallowPlan

// shallowPlans holds a Codec's plans for the bodies of its definitions, made once.
type shallowPlans struct {
	once  sync.Once
	plans map[*schema.StructDef]*shallowPlan // read-only once made
}

// shallowPlan returns the plan of a message body.
func (c *Codec) shallowPlan(body *schema.StructDef) *shallowPlan {
	c.plans.once.Do(func() {
		b := planBuilder{}
		for _, a := range c.Schemas.APIs() {
			for i, m := range []*schema.Message{a.Request, a.Response} {
				if m == nil {
					continue
				}
				// The API's own fact fields; its body's structs are its own, so their plans
				// are made for it. A message merged from several definitions (--schema-dir)
				// has a body per definition.
				b.extra = slices.Concat(factFields[apiDirection{a.Key, i == 1}], c.kept(a.Key, i == 1))
				for _, d := range m.Definitions() {
					b.plan(d.Body)
				}
			}
		}
		c.plans.plans = b.plans
	})
	if p, ok := c.plans.plans[body]; ok {
		return p
	}
	// A definition the set did not have when the plans were made.
	var b planBuilder
	return b.plan(body)
}

// Kept names fields of one API's requests (or responses) that a shallow decode keeps, by
// their names in the definitions, at any depth: "MaxWaitMs", "HighWatermark". A struct or
// array of structs named is not kept for its name; name the fields inside it. APIKey EveryAPI
// names the fields in every API's messages of that direction.
type Kept struct {
	APIKey   int16
	Response bool
	Fields   []string
}

// EveryAPI is the APIKey of a Kept that names fields of every API: ThrottleTimeMs, which every
// response has that a quota can throttle.
const EveryAPI int16 = -1

// of reports whether k names fields of API key's messages of this direction.
func (k Kept) of(key int16, response bool) bool {
	return (k.APIKey == key || k.APIKey == EveryAPI) && k.Response == response
}

// kept are the fields Keep names for an API and direction.
func (c *Codec) kept(key int16, response bool) []string {
	var fs []string
	for _, k := range c.Keep {
		if k.of(key, response) {
			fs = append(fs, k.Fields...)
		}
	}
	return fs
}

// Keeps reports whether Keep names fields of m's API and direction: whoever reads them reads
// m's tree after it is decoded, so it must not be released (Release) before.
func (c *Codec) Keeps(m *Message) bool {
	for _, k := range c.Keep {
		if k.of(m.APIKey, m.Response) {
			return true
		}
	}
	return false
}

// planBuilder makes the plans of struct definitions, each once (common structs are shared).
type planBuilder struct {
	plans map[*schema.StructDef]*shallowPlan
	busy  map[*schema.StructDef]bool // being planned
	// extra names fields kept besides those keptItself keeps, in the message being planned.
	extra []string
}

func (b *planBuilder) plan(s *schema.StructDef) *shallowPlan {
	if p, ok := b.plans[s]; ok {
		return p
	}
	if b.plans == nil {
		b.plans, b.busy = map[*schema.StructDef]*shallowPlan{}, map[*schema.StructDef]bool{}
	}
	p := &shallowPlan{keep: make([]bool, len(s.Fields)), sub: make([]*shallowPlan, len(s.Fields))}
	b.plans[s], b.busy[s] = p, true
	defer delete(b.busy, s)
	for i, f := range s.Fields {
		switch {
		case keptItself(f) || slices.Contains(b.extra, f.Name) && (f.Struct == nil || f.Kind != schema.Array):
			p.keep[i] = true
		case f.Struct != nil && (f.Kind == schema.Struct || f.Elem == schema.Struct):
			if b.busy[f.Struct] {
				// A struct that holds itself, which Kafka's definitions never do: its plan is
				// not made yet, so keep the field whole.
				p.keep[i] = true
				break
			}
			if sub := b.plan(f.Struct); sub.kept > 0 {
				p.keep[i], p.sub[i] = true, sub
			}
		}
		if p.keep[i] {
			p.kept++
		}
	}
	p.layouts = layouts(s, p.keep)
	return p
}
