// Package analysis reads a conversation as a whole and answers the questions people bring to a
// capture: consumer lag, end-to-end latency, group rebalances, producers, transactions, latency
// per broker, topic and client, rates. Each analysis is told of every message shown, in order
// (requests before their responses), and makes model.Tables at the end; render writes them.
package analysis

import "github.com/kdissect/kdissect/model"

// Analysis is one question answered over a whole capture.
type Analysis interface {
	// Add is told of each message shown, in the order shown. The entry and its message are
	// the caller's again when Add returns (trees are released, frames reused): an analysis
	// copies what it keeps.
	Add(e *model.Entry)
	// Tables returns the analysis's tables, once every message has been added.
	Tables() []model.Table
}
