package render

import (
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/internal/inert"
)

// newTable is a bordered table with the headers as written, left-aligned, and cols columns of
// which the first is right-aligned when numeric (keys, codes). Every cell is shown under
// package inert's rule.
func newTable(w io.Writer, cols int, numeric bool) *tablewriter.Table {
	align := make([]tw.Align, cols)
	for i := range align {
		align[i] = tw.AlignLeft
	}
	if numeric {
		align[0] = tw.AlignRight
	}
	return tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithHeaderFilter(tw.CellFilter{Global: inertCells}),
		tablewriter.WithRowFilter(tw.CellFilter{Global: inertCells}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}))
}

// inertCells shows a table's cells under package inert's rule.
func inertCells(cells []string) []string {
	for i, c := range cells {
		cells[i] = inert.String(c)
	}
	return cells
}

// APITable writes every API: key, name, valid versions, and the first flexible version
// ("v9+", or "never").
func APITable(w io.Writer, apis []*schema.API) error {
	t := newTable(w, 4, true)
	t.Header("key", "name", "valid versions", "flexible from")
	for _, a := range apis {
		if err := t.Append(strconv.Itoa(int(a.Key)), a.Name, a.Versions().String(), flexibleFrom(a)); err != nil {
			return err
		}
	}
	return t.Render()
}

// flexibleFrom is "v9+" for an API flexible from v9 on, or "never".
func flexibleFrom(a *schema.API) string {
	m := a.Request
	if m == nil {
		m = a.Response
	}
	if m == nil || m.FlexibleVersions.Empty() {
		return "never"
	}
	return "v" + m.FlexibleVersions.String()
}

type apiJSON struct {
	Key           int16  `json:"key"`
	Name          string `json:"name"`
	ValidVersions string `json:"valid_versions"`
	FlexibleFrom  string `json:"flexible_from"`
}

// APIJSON writes the API table as a JSON array.
func APIJSON(w io.Writer, apis []*schema.API) error {
	out := make([]apiJSON, 0, len(apis))
	for _, a := range apis {
		out = append(out, apiJSON{Key: a.Key, Name: a.Name, ValidVersions: a.Versions().String(), FlexibleFrom: flexibleFrom(a)})
	}
	return writeJSON(w, out)
}

// ErrorTable writes Kafka's error codes: code, name, whether a client may retry, and what the
// error means.
func ErrorTable(w io.Writer, codes []codec.ErrorCode) error {
	t := newTable(w, 4, true)
	t.Header("code", "name", "retriable", "meaning")
	for _, c := range codes {
		r := "no"
		if c.Retriable {
			r = "yes"
		}
		if err := t.Append(strconv.Itoa(int(c.Code)), c.Name, r, c.About); err != nil {
			return err
		}
	}
	return t.Render()
}

// DiffJSON writes the changes between two layouts as a JSON array.
func DiffJSON(w io.Writer, a, b *Layout) error {
	changes := Diff(a, b)
	if changes == nil {
		changes = []Change{}
	}
	return writeJSON(w, changes)
}

// DiffTable writes the changes between two layouts of a message, a at version va and b at vb.
func DiffTable(w io.Writer, a, b *Layout) error {
	changes := Diff(a, b)
	if _, err := fmt.Fprintf(w, "%s %s v%d..v%d: %d changes\n", inert.String(b.API), directionTitle(b.Direction), a.Version, b.Version, len(changes)); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	t := newTable(w, 4, false)
	t.Header("change", "field", fmt.Sprintf("v%d", a.Version), fmt.Sprintf("v%d", b.Version))
	for _, c := range changes {
		if err := t.Append(c.Kind, c.Path, c.From, c.To); err != nil {
			return err
		}
	}
	return t.Render()
}
