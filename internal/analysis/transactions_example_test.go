package analysis_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/render"
)

// A capture's transactions: an analysis is told of every message a pipeline shows, then makes
// its table. The consume-transform-produce loop of kgo-txn-groups.pcap aborts its first
// transaction and commits the second, its group's offsets with it.
func ExampleTransactions() {
	set, err := schema.Embedded()
	if err != nil {
		fmt.Println(err)
		return
	}
	f, _ := render.LookupFormat("json")
	sel := dissect.SelectAll()
	plan, err := dissect.NewPlan(f, dissect.Asks{Select: sel})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := dissect.NewCodec(set, plan, dissect.CodecOptions{})
	txns := analysis.NewTransactions()
	p, err := dissect.New(dissect.Config{Codec: c, Out: feed{txns}, Plan: plan, Select: sel,
		IsServerPort: func(port uint16) bool { return port == 19200 }, Warn: func(err error) { fmt.Fprintln(os.Stderr, err) }})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := p.File(capturePath("kgo-txn-groups.pcap")); err != nil {
		fmt.Println(err)
	}
	if err := p.Close(); err != nil {
		fmt.Println(err)
	}
	for _, t := range txns.Tables() {
		for _, row := range t.Rows {
			var cells []string
			for i, col := range t.Columns {
				if col.Kind != model.Time && col.Kind != model.Duration { // times change with each capture
					cells = append(cells, fmt.Sprintf("%s=%v", col.Name, row[i]))
				}
			}
			fmt.Println(strings.Join(cells, " "))
		}
	}
	// Output:
	// transactional_id=kdissect-answers-txn-id producer_id=4837375807551521388 producer_epoch=0 partitions=[kdissect-answers-out[0] kdissect-answers-out[1]] groups=[] records=2 result=abort errors=[]
	// transactional_id=kdissect-answers-txn-id producer_id=4837375807551521388 producer_epoch=0 partitions=[kdissect-answers-out[1] kdissect-answers-out[0]] groups=[kdissect-answers-txn-group] records=2 result=commit errors=[]
}
