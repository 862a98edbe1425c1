package analysis_test

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/kdissect/kdissect/internal/analysis"
	"github.com/kdissect/kdissect/model"
)

// printTable writes a table as tab-separated columns, "-" for values not known.
func printTable(t model.Table) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 1, ' ', 0)
	heads := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		heads[i] = c.Name
	}
	fmt.Fprintln(w, strings.Join(heads, "\t"))
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = "-"
			if v != nil {
				cells[i] = fmt.Sprint(v)
			}
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	w.Flush()
}

// A consumer that falls behind its producer, then catches up: its lag on partition 0 grew to
// 10 records, and is 0 at the end.
func ExampleNewLag() {
	l := analysis.NewLag()
	if err := analyseFile("kgo-lag.pcap", l); err != nil {
		fmt.Println(err)
		return
	}
	printTable(l.Tables()[0])
	// Output:
	// client_id           topic        partition fetches fetch_offset high_watermark lag max_lag last_stable_offset
	// kdissect-lag-reader kdissect-lag 0         1       0            15             15  15      15
	// kdissect-lag-reader kdissect-lag 1         1       0            2              2   2       2
	// kdissect-lag-slow   kdissect-lag 0         17      15           15             0   10      15
	// kdissect-lag-slow   kdissect-lag 1         17      1            2              1   2       2
}

// How long the records of kgo-lag.pcap took from their producer to each consumer: the slow
// consumer got each within a few milliseconds, the reader, which started once the slow one was
// done, later.
func ExampleNewE2E() {
	x := analysis.NewE2E()
	if err := analyseFile("kgo-lag.pcap", x); err != nil {
		fmt.Println(err)
		return
	}
	printTable(x.Tables()[0])
	// Output:
	// topic        partition client_id           records p50_us  p99_us   max_us
	// kdissect-lag 0         kdissect-lag-reader 15      7.36ms  10.183ms 10.183ms
	// kdissect-lag 0         kdissect-lag-slow   15      1.227ms 2.081ms  2.081ms
	// kdissect-lag 1         kdissect-lag-reader 2       6.605ms 7.822ms  7.822ms
	// kdissect-lag 1         kdissect-lag-slow   2       1.151ms 2.305ms  2.305ms
}
