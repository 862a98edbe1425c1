package analysis

import (
	"testing"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// TestRatesBusiestSecond: the busiest second of each measure is found among the seconds the
// records arrive in, apart for each measure, and the rates are over the span of every message
// (the captures of pcaps/ last less than two seconds, so TestRatesTable of cmd/kdissect sees
// one second of records at most).
func TestRatesBusiestSecond(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type msg struct {
		at       time.Duration
		key      int16
		response bool
		records  int
		bytes    int
	}
	msgs := []msg{
		{100 * time.Millisecond, codec.KeyApiVersions, false, 0, 0},  // opens the span
		{200 * time.Millisecond, codec.KeyProduce, false, 3, 300},    // second 5: 3 records, 300 bytes
		{900 * time.Millisecond, codec.KeyProduce, false, 2, 1000},   // second 5: 5, 1300
		{1100 * time.Millisecond, codec.KeyProduce, false, 4, 100},   // second 6: 4, 100
		{1500 * time.Millisecond, codec.KeyProduce, false, 4, 100},   // second 6: 8, 200
		{1600 * time.Millisecond, codec.KeyFetch, true, 6, 600},      // fetched, second 6
		{1700 * time.Millisecond, 3, true, 9, 9999},                  // Metadata: not records of the log
		{2100 * time.Millisecond, codec.KeyApiVersions, false, 0, 0}, // closes the span: 2 s
	}
	r := NewRates()
	for _, m := range msgs {
		e := &model.Entry{Time: start.Add(m.at), Request: !m.response,
			Msg: &codec.Message{APIKey: m.key, Response: m.response}, Facts: &codec.Facts{}}
		if m.records > 0 {
			e.Facts.RecordSets = []codec.RecordSet{{Topic: "orders", Records: m.records, Bytes: m.bytes}}
		}
		r.Add(e)
	}
	ts := r.Tables()
	if len(ts) != 1 || len(ts[0].Rows) != 1 {
		t.Fatalf("tables %+v, want one row", ts)
	}
	want := []any{"orders", 13 / 2.0, 1500 / 2.0, 6 / 2.0, 600 / 2.0, int64(8), int64(1300), int64(6), int64(600)}
	got := ts[0].Rows[0]
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s = %v, want %v", ts[0].Columns[i].Name, got[i], want[i])
		}
	}
}
