package model

// Table is one table of statistics or answers, as every output writes it: the text formats as
// a table under Title, JSON lines as one line per row ({"kind": "stats", "table": Name, column:
// value...}), the page as a table. Analyses make tables; render only writes them.
type Table struct {
	// Name is the table's name in JSON lines ("table") and in --stats: "apis", "lag".
	Name string
	// Title heads the table in text: "Consumer lag per partition".
	Title   string
	Columns []Column
	// Rows hold one value per column, of the column's kind (see Kind); nil is a value not known
	// (JSON null, "-" in text).
	Rows [][]any
	// HideEmpty leaves the table out of text when it has no row (a table most captures do
	// not fill, such as fetch sessions).
	HideEmpty bool
}

// Column is one column of a Table.
type Column struct {
	// Name is the column's JSON key (snake_case: "client_id", "p50_us").
	Name string
	// Head is its heading in text ("" is Name).
	Head string
	Kind Kind
	// Only, when set, writes the column in one kind of output: a value that text shows in one
	// cell ("0 - 7") and JSON as two numbers is three columns, one for text and two for JSON.
	Only Output
	// Optional: a nil value is absent rather than unknown: JSON leaves the key out, text the
	// cell empty.
	Optional bool
}

// Output is a kind of output a Column may be kept to.
type Output uint8

const (
	Every Output = iota // text, JSON lines and the page
	Text                // text and the page
	JSON                // JSON lines
)

// In reports whether the column is written in output o (Text or JSON).
func (c Column) In(o Output) bool { return c.Only == Every || c.Only == o }

// Kind is the type of a column's values.
type Kind uint8

const (
	String   Kind = iota // string
	Int                  // int64
	Float                // float64
	Duration             // time.Duration: JSON as integer microseconds (name the column *_us), text as milliseconds
	Time                 // time.Time: JSON as RFC 3339 in UTC, text as the run's time format
	Strings              // []string: JSON as an array, text joined by commas
	Bool                 // bool
)

// AddRow appends a row; values are given in column order.
func (t *Table) AddRow(values ...any) { t.Rows = append(t.Rows, values) }
