package dissect

import (
	"slices"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
)

// CodecOptions are the user's choices on decoding that are not a matter of performance (those
// are the Plan's).
type CodecOptions struct {
	// MaxDecompressed caps one batch's decompressed size.
	MaxDecompressed int64
	// ShowSecrets keeps passwords, proofs and tokens visible.
	ShowSecrets bool
}

// NewCodec returns a codec of the definitions in set that decodes what plan says is read, and
// nothing more (Plan.Records, Shallow, Keep, BatchHeaders, LazyRecords).
func NewCodec(set *schema.Set, plan Plan, o CodecOptions) *codec.Codec {
	c := codec.New(set)
	c.Shallow = plan.Shallow
	c.Keep = plan.Keep
	if plan.Records == "full" || plan.Records == "headers" {
		c.Records = records.New(records.Options{MaxDecompressed: o.MaxDecompressed, HeadersOnly: plan.Records == "headers",
			CountsOnly: c.Shallow, BatchFields: batchFields(plan.Keep)})
	}
	c.ShowSecrets = o.ShowSecrets
	c.LazyRecords = plan.LazyRecords
	return c
}

// batchFields are the fields of record batches' headers that keep names
// (records.BatchHeaderField), each once.
func batchFields(keep []codec.Kept) []string {
	var fs []string
	for _, k := range keep {
		for _, f := range k.Fields {
			if records.BatchHeaderField(f) && !slices.Contains(fs, f) {
				fs = append(fs, f)
			}
		}
	}
	return fs
}
