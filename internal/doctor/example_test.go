package doctor_test

import (
	"fmt"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/internal/doctor"
	"github.com/kdissect/kdissect/model"
)

// A Doctor is told of every message and notice shown, then says what is wrong: here a Produce
// request with acks=0, which no broker answers.
func ExampleDoctor() {
	client := "app"
	d := doctor.New()
	d.Add(&model.Entry{Frame: 12, Stream: 3, Request: true, NoResponse: true, Time: time.Unix(0, 0),
		Msg: &codec.Message{APIKey: codec.KeyProduce, ClientID: &client}})
	for _, f := range d.Findings() {
		fmt.Println(f.Severity, f.ID, f.Title, f.Evidence.Frames)
	}
	// Output:
	// warning produce-acks-0 1 Produce request with acks=0 (1 connection) [12]
}
