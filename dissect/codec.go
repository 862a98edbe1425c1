package dissect

import (
	"fmt"
	"slices"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/render"
)

// CodecOptions are the user's choices on decoding.
type CodecOptions struct {
	// Records is how deep record batches are decoded: "full" (every record, decompressed),
	// "headers" (batch headers and record counts), "none" (raw bytes), or "" for the
	// format's default.
	Records string
	// MaxDecompressed caps one batch's decompressed size.
	MaxDecompressed int64
	// ShowSecrets keeps passwords, proofs and tokens visible.
	ShowSecrets bool
	// Trees: something besides the format reads the field tree (a display filter naming
	// req or resp, Selection.ReadsBodies), so messages are decoded in full, records too
	// unless Records says otherwise.
	Trees bool
	// Keep names the fields that analyses read (codec.Codec.Keep): shallow decodes keep them,
	// and give record batches their whole headers when they name a header field.
	Keep []codec.Kept
}

// NewCodec returns a codec of the definitions in set that decodes what format f shows, and
// nothing more: a format that never shows the field tree gets a shallow decode.
func NewCodec(set *schema.Set, f render.Format, o CodecOptions) (*codec.Codec, error) {
	c := codec.New(set)
	mode := o.Records
	switch {
	case mode == "" && o.Trees:
		mode = "full" // a filter may ask about any record
	case mode == "":
		mode = f.Records
	}
	c.Shallow = !f.Needs.Tree && !o.Trees
	c.Keep = o.Keep
	switch mode {
	case "full", "headers":
		c.Records = records.New(records.Options{MaxDecompressed: o.MaxDecompressed, HeadersOnly: mode == "headers",
			CountsOnly: c.Shallow && !keepsBatchHeaders(o.Keep)})
	case "none":
	default:
		return nil, fmt.Errorf("--records %q: full, headers or none", o.Records)
	}
	c.ShowSecrets = o.ShowSecrets
	// Records wait to be decoded until they are written, by a format that expands them; a
	// filter on bodies reads the whole tree first.
	c.LazyRecords = f.Needs.Expands && !o.Trees
	return c, nil
}

// keepsBatchHeaders reports whether keep names a field of record batches' headers.
func keepsBatchHeaders(keep []codec.Kept) bool {
	for _, k := range keep {
		if slices.ContainsFunc(k.Fields, records.BatchHeaderField) {
			return true
		}
	}
	return false
}
