// Package analysis reads a conversation as a whole and answers the questions people bring to a
// capture: consumer lag, end-to-end latency, group rebalances, producers, transactions, latency
// per broker, topic and client, rates. Each analysis is told of every message shown, in order
// (requests before their responses), and makes model.Tables at the end; render writes them.
package analysis

import (
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// Analysis is one question answered over a whole capture.
type Analysis interface {
	// Add is told of each message shown, in the order shown. The entry and its message are
	// the caller's again when Add returns (trees are released, frames reused): an analysis
	// copies what it keeps.
	Add(e *model.Entry)
	// Tables returns the analysis's tables, once every message has been added.
	Tables() []model.Table
}

// A FieldReader is an Analysis that reads fields of messages beyond their facts. Summaries
// decode shallow (codec.Codec.Shallow: only the fields facts read get nodes); with analyses,
// the fields they name are kept too.
type FieldReader interface {
	Analysis
	Reads() []Read
}

// Read names fields an analysis reads in one API's requests or responses, by their names in
// the message definitions (at any depth: "FetchOffset", "HighWatermark"). It is what a
// shallow decode is told to keep (codec.Codec.Keep, dissect.Plan.Keep): one type for both.
type Read = codec.Kept
