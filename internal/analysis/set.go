package analysis

import (
	"github.com/kdissect/kdissect/model"
)

// Registered returns the analyses --stats runs, new, in the order their tables are written:
// the counts first, then the answers. A new analysis is one line here.
func Registered() Set {
	return Set{
		NewAPIs(),
		NewErrors(),
		NewConnections(),
		NewTopics(),
		NewFetchSessions(),
		NewLag(),
		NewE2E(),
		NewGroups(),
		NewProducers(),
		NewTransactions(),
		NewLatency(),
		NewRates(),
	}
}

// Set is analyses run together: each is told of every message, and their tables are written
// in the set's order.
type Set []Analysis

// Add tells every analysis of a message.
func (s Set) Add(e *model.Entry) {
	for _, a := range s {
		a.Add(e)
	}
}

// Tables returns the tables of every analysis, in order.
func (s Set) Tables() []model.Table {
	var ts []model.Table
	for _, a := range s {
		ts = append(ts, a.Tables()...)
	}
	return ts
}

// Reads returns the fields the set's FieldReaders read, in their order: what shallow decodes
// must keep (dissect.Asks.Keep).
func (s Set) Reads() []Read {
	var rs []Read
	for _, a := range s {
		if r, ok := a.(FieldReader); ok {
			rs = append(rs, r.Reads()...)
		}
	}
	return rs
}
