// Package wire is the vocabulary that kdissect's packages share about the Kafka wire: the
// encodings a decoded field can have (Type), the compression codecs and attribute bits of record
// batches, the names of array elements, the bound on believable frames and the verdict on the
// first bytes of a candidate frame. It names things and decodes nothing. It imports nothing of kdissect, so that codec, reassembly
// and render can all use it without pointing back up the data flow.
package wire

import "strconv"

// Type is the wire encoding of a decoded field: what the diagram's type column and the JSON
// "type" show. Outputs print its name (String), never its number.
type Type uint8

// The types of Kafka's message definitions, then those of the record format, then kdissect's
// own (a decoded SASL token's parts).
const (
	// None is the type of a node made without one; its name is empty.
	None Type = iota

	Bool
	Int8
	Int16
	Uint16
	Int32
	Uint32
	Int64
	Float64
	UUID
	Uvarint // a tagged field's tag and size

	String
	NullableString
	CompactString
	CompactNullableString
	Bytes
	NullableBytes
	CompactBytes
	CompactNullableBytes
	Records
	CompactRecords
	Array
	CompactArray
	Struct
	NullableStruct
	TaggedFields // a flexible struct's tagged section
	TaggedField  // one field of a tagged section: tag, size, value

	RecordBatch       // a record batch (magic 2)
	RecordData        // a batch's records, not compressed: decoded (its children) or not (none)
	CompressedRecords // a compressed payload, a leaf of the frame holding decompressed nodes
	Record
	Message // a legacy message (magic 0 and 1)
	Header  // a record header
	Varint
	Varlong
	VarintString
	VarintBytes
	VarintArray

	SASL // a part of a decoded SASL token

	numTypes
)

var typeNames = [numTypes]string{
	None: "", Bool: "bool", Int8: "int8", Int16: "int16", Uint16: "uint16", Int32: "int32",
	Uint32: "uint32", Int64: "int64", Float64: "float64", UUID: "uuid", Uvarint: "uvarint",
	String: "string", NullableString: "nullable_string", CompactString: "compact_string",
	CompactNullableString: "compact_nullable_string", Bytes: "bytes", NullableBytes: "nullable_bytes",
	CompactBytes: "compact_bytes", CompactNullableBytes: "compact_nullable_bytes",
	Records: "records", CompactRecords: "compact_records", Array: "array", CompactArray: "compact_array",
	Struct: "struct", NullableStruct: "nullable_struct", TaggedFields: "tagged_fields",
	TaggedField: "tagged_field", RecordBatch: "record_batch", RecordData: "record_data",
	CompressedRecords: "compressed_records", Record: "record", Message: "message", Header: "header",
	Varint: "varint", Varlong: "varlong", VarintString: "varint_string", VarintBytes: "varint_bytes",
	VarintArray: "varint_array", SASL: "sasl",
}

// String is the type's name as the outputs print it: int32, compact_nullable_string,
// record_batch, ...
func (t Type) String() string {
	if t < numTypes {
		return typeNames[t]
	}
	return "type" + strconv.Itoa(int(t))
}

// MarshalText writes the type's name, so that a Type in a JSON document reads as its name.
func (t Type) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// IsArray reports whether t counts elements: array, compact_array and a record's headers.
func (t Type) IsArray() bool { return t == Array || t == CompactArray || t == VarintArray }

// IsString reports whether t is a length-prefixed string.
func (t Type) IsString() bool {
	switch t {
	case String, NullableString, CompactString, CompactNullableString, VarintString:
		return true
	}
	return false
}

// IsBytes reports whether t is length-prefixed bytes.
func (t Type) IsBytes() bool {
	switch t {
	case Bytes, NullableBytes, CompactBytes, CompactNullableBytes, VarintBytes:
		return true
	}
	return false
}

// IsRecords reports whether t holds record data: a records field, or a compressed payload.
func (t Type) IsRecords() bool { return t == Records || t == CompactRecords || t == CompressedRecords }

// Nullable reports whether t's name says that it may be null (nullable_string,
// compact_nullable_bytes, nullable_struct, ...). Arrays and records may be null without saying so.
func (t Type) Nullable() bool {
	switch t {
	case NullableString, CompactNullableString, NullableBytes, CompactNullableBytes, NullableStruct:
		return true
	}
	return false
}

// Variable returns the type of a string (or, with bytes set, bytes) value in the encoding
// given: compact (unsigned varint length + 1) or classic, nullable or not.
func Variable(bytes, nullable, compact bool) Type {
	t := String
	if bytes {
		t = Bytes
	}
	// The four encodings of each follow one another: plain, nullable, compact, compact nullable.
	if nullable {
		t++
	}
	if compact {
		t += 2
	}
	return t
}

// IndexName is the name of element i of an array: "[0]", "[1]", ...
func IndexName(i int) string {
	if i >= 0 && i < len(indexNames) {
		return indexNames[i]
	}
	return "[" + strconv.Itoa(i) + "]"
}

// indexNames holds the names of the first array elements, so that decoding a large array does
// not format a name per element. It is filled once and never written again. The names are
// parts of one string ("[0][1][2]..."): every run makes them before it reads a packet, and a
// string each took two thousand allocations.
var indexNames = func() []string {
	s := make([]string, 1024)
	var b []byte
	ends := make([]int, len(s))
	for i := range s {
		b = append(strconv.AppendInt(append(b, '['), int64(i), 10), ']')
		ends[i] = len(b)
	}
	all, start := string(b), 0
	for i, end := range ends {
		s[i], start = all[start:end], end
	}
	return s
}()

// Codec is a compression codec of a record batch or a legacy wrapper message: the low three
// bits of its attributes.
type Codec uint8

// Kafka's compression codecs.
const (
	NoCompression Codec = iota
	Gzip
	Snappy
	LZ4
	Zstd
)

// codecNames holds the name of every value three bits can take.
var codecNames = [8]string{"none", "gzip", "snappy", "lz4", "zstd", "codec5", "codec6", "codec7"}

// String is the codec's name: none, gzip, snappy, lz4, zstd; codec5 to codec7 for the values
// Kafka does not define.
func (c Codec) String() string {
	if int(c) < len(codecNames) {
		return codecNames[c]
	}
	return "codec" + strconv.Itoa(int(c))
}

// Known reports whether Kafka defines c.
func (c Codec) Known() bool { return c <= Zstd }

// Attributes are the attributes of a record batch (magic 2); legacy messages share the codec
// bits and the timestamp type.
type Attributes int64

// The bits of Attributes.
const (
	CodecBits     Attributes = 0x07
	LogAppendTime Attributes = 0x08 // timestamps are the broker's, not the producer's
	Transactional Attributes = 0x10
	Control       Attributes = 0x20 // the batch holds control records (transaction markers)
)

// Codec is the batch's compression codec.
func (a Attributes) Codec() Codec { return Codec(a & CodecBits) }

// Has reports whether all the bits of b are set in a.
func (a Attributes) Has(b Attributes) bool { return a&b == b }

// MaxFrameSize bounds the frames kdissect believes (bytes after the size prefix): Kafka brokers
// refuse requests over socket.request.max.bytes (100 MiB by default), and a response this large
// is implausible on a capture.
const MaxFrameSize = 256 << 20

// Verdict is a judgement on the first bytes of a candidate frame: the protocol (codec) gives
// it, the framer (reassembly) acts on it.
type Verdict uint8

// The verdicts, weakest first.
const (
	// No: these bytes do not start a frame.
	No Verdict = iota
	// NeedMore: more bytes are needed to judge.
	NeedMore
	// Weak: the size and header are plausible but prove nothing alone; the framer believes
	// such a frame only when a plausible frame follows it.
	Weak
	// Yes: a frame starts here.
	Yes
)
