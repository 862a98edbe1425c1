package duckdb_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// example is one of the example queries of docs/parquet.md: a comment naming it, the query in a sql
// block, and its output in the block after.
var example = regexp.MustCompile("(?s)<!-- duckdb example: ([a-z-]+) -->\n```sql\n(.*?)```\n\n```\n(.*?)```")

// parquetPage is the page of the documentation that shows the example queries and the columns.
const parquetPage = "docs/parquet.md"

// TestPageExamples runs the example queries of docs/parquet.md on the Parquet files of the
// captures the page names, written as it says, and requires the output the page shows; with
// -update, it writes the outputs into the page.
func TestPageExamples(t *testing.T) {
	db := open(t)
	page := filepath.Join(root, parquetPage)
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// The captures, written as the page says, from the repository's root, so that the file
	// column names pcaps/FILE.
	m := regexp.MustCompile("<!-- duckdb examples: captures -->\n```\nkdissect (.*)\n```").FindSubmatch(text)
	if m == nil {
		t.Fatal(parquetPage + " does not say how the examples' files are written")
	}
	args := strings.Fields(string(m[1]))
	dir := filepath.Join(t.TempDir(), "parquet") + "/"
	if i := slices.Index(args, "parquet/"); i < 0 {
		t.Fatalf("%s: the command %q writes no parquet/", parquetPage, m[1])
	} else {
		args[i] = dir
	}
	cmd := exec.Command(kdissect, args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kdissect: %v\n%s", err, out)
	}
	found := 0
	updated := example.ReplaceAllFunc(text, func(block []byte) []byte {
		m := example.FindSubmatch(block)
		name, q, want := string(m[1]), string(m[2]), string(m[3])
		found++
		rows, cols := queryTable(t, db, strings.ReplaceAll(q, "'parquet/*.parquet'", quote(dir+"*.parquet")))
		got := formatTable(cols, rows)
		if got != want && !*update {
			t.Errorf("%s: example %s: the query gives\n%s\nthe page shows\n%s", parquetPage, name, got, want)
		}
		return []byte(fmt.Sprintf("<!-- duckdb example: %s -->\n```sql\n%s```\n\n```\n%s```", name, q, got))
	})
	if found < 3 {
		t.Errorf("%d example queries in %s, want 3", found, parquetPage)
	}
	if *update && !bytes.Equal(updated, text) {
		if err := os.WriteFile(page, updated, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// queryTable runs q and returns its rows and its column names.
func queryTable(t *testing.T, db *sql.DB, q string) ([][]any, []string) {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out, cols
}

// formatTable lines up a query's result in columns, numbers on the right, as a terminal
// shows it.
func formatTable(cols []string, rows [][]any) string {
	cells := [][]string{cols}
	numeric := make([]bool, len(cols))
	for _, r := range rows {
		var line []string
		for i, v := range r {
			s, num := cell(v)
			numeric[i] = numeric[i] || num
			line = append(line, s)
		}
		cells = append(cells, line)
	}
	width := make([]int, len(cols))
	for _, line := range cells {
		for i, c := range line {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for n, line := range cells {
		var l strings.Builder
		for i, c := range line {
			if i > 0 {
				l.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if numeric[i] {
				l.WriteString(pad + c)
			} else {
				l.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
		if n == 0 {
			var rule []string
			for _, w := range width {
				rule = append(rule, strings.Repeat("-", w))
			}
			b.WriteString(strings.Join(rule, "  ") + "\n")
		}
	}
	return b.String()
}

// cell writes one value, and says whether it is a number.
func cell(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "NULL", false
	case time.Time:
		return v.UTC().Format("2006-01-02 15:04:05"), false
	case float32, float64:
		return fmt.Sprintf("%.1f", v), true
	case *big.Int:
		return v.String(), true
	case int, int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return fmt.Sprint(v), true
	case []any:
		var parts []string
		for _, x := range v {
			s, _ := cell(x)
			parts = append(parts, s)
		}
		return "[" + strings.Join(parts, ", ") + "]", false
	}
	return fmt.Sprint(v), false
}

// TestPageColumns: the table of columns of docs/parquet.md names every column of the files,
// in order, with the type DuckDB reads.
func TestPageColumns(t *testing.T) {
	db := open(t)
	file := filepath.Join(t.TempDir(), "one.parquet")
	run(t, "--format", "parquet", "-o", file, filepath.Join(root, "pcaps", "kgo-produce-fetch.pcap"))
	rows := query(t, db, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet("+quote(file)+"))")
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%v %v", r[0], r[1]))
	}
	text, err := os.ReadFile(filepath.Join(root, parquetPage))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(text), "<!-- duckdb columns -->\n")
	table, _, ok2 := strings.Cut(table, "<!-- end of columns -->")
	if !ok || !ok2 {
		t.Fatal("no table of columns in " + parquetPage)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([^|]+) \\|")
	var want []string
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		want = append(want, m[1]+" "+strings.TrimSpace(m[2]))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("columns of the files:\n%s\n%s:\n%s", strings.Join(got, "\n"), parquetPage, strings.Join(want, "\n"))
	}
}
