package model_test

import (
	"fmt"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// An output reads each fact of the table the same way: here the value of each fact an EndTxn
// request and a JoinGroup response have, and the part a summary line shows of it.
func ExampleFacts() {
	messages := []*codec.Facts{
		{Txn: "commit"},
		{Groups: []string{"billing"}, Members: []string{"m-1", "m-2"}, Errors: []int16{79}},
	}
	for _, f := range messages {
		for _, fact := range model.Facts() {
			var v model.Value
			fact.Add(&v, f)
			if v.Text == "" && v.Count == 0 && len(v.List) == 0 && len(v.Codes) == 0 {
				continue
			}
			shown := ""
			if fact.Show != nil {
				shown = fact.Label + string(fact.Show(nil, f))
			}
			fmt.Printf("%s = %q %q %v: %q\n", fact.Name, v.Text, v.List, v.Codes, shown)
		}
	}
	// Output:
	// txn = "commit" [] []: "txn commit"
	// groups = "" ["billing"] []: "group billing"
	// members = "" ["m-1" "m-2"] []: "member m-1"
	// error_codes = "" [] [79]: ""
	// errors = "" ["MEMBER_ID_REQUIRED"] []: "errors MEMBER_ID_REQUIRED"
}
