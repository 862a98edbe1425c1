package wire

import (
	"math"
	"strconv"
)

// Prefix is how a length or a count is written before what it measures: the encoding of the
// first bytes of a string, bytes, array, records or tagged section.
type Prefix uint8

// The prefixes.
const (
	// NoPrefix: the type has no length or count before its content.
	NoPrefix Prefix = iota
	// Int16Prefix: a big-endian int16 length, -1 for null (classic strings).
	Int16Prefix
	// Int32Prefix: a big-endian int32 length or count, -1 for null (classic bytes, arrays and
	// records; a batch's record count).
	Int32Prefix
	// UvarintPrefix: an unsigned varint; for the compact types length + 1, 0 for null; for a
	// tagged section the count itself.
	UvarintPrefix
	// VarintPrefix: a zigzag varint, -1 for null (the record format's keys, values and headers).
	VarintPrefix
)

var prefixNames = [...]string{"", "int16", "int32", "uvarint", "varint"}

// String is the prefix's name as JSON's "encoding" gives it: int16, int32, uvarint, varint.
func (p Prefix) String() string {
	if int(p) < len(prefixNames) {
		return prefixNames[p]
	}
	return "prefix" + strconv.Itoa(int(p))
}

// Prefix is how a node of type t starts: its length or count prefix. Types without one (fixed
// sizes, structs, records and messages, bytes kdissect cut out of others) have NoPrefix; a node
// of a prefixed type made for bytes that had none says so with a prefix size of 0.
func (t Type) Prefix() Prefix {
	switch t {
	case String, NullableString:
		return Int16Prefix
	case Bytes, NullableBytes, Records, Array:
		return Int32Prefix
	case CompactString, CompactNullableString, CompactBytes, CompactNullableBytes, CompactRecords,
		CompactArray, TaggedFields:
		return UvarintPrefix
	case VarintString, VarintBytes, VarintArray:
		return VarintPrefix
	}
	return NoPrefix
}

// PlusOne reports whether t's prefix is its length or count plus one (0 then means null): the
// compact types of flexible versions.
func (t Type) PlusOne() bool { return t.Prefix() == UvarintPrefix && t != TaggedFields }

// PrefixValue is the number a prefix of type t holds for a length or count n, or for null.
func (t Type) PrefixValue(n int64, null bool) int64 {
	switch {
	case null && t.PlusOne():
		return 0
	case null:
		return -1
	case t.PlusOne():
		return n + 1
	}
	return n
}

// Length is the inverse of PrefixValue: the length or count that prefix value v of type t
// stands for, or null.
func (t Type) Length(v int64) (n int64, null bool) {
	if t.PlusOne() {
		return v - 1, v == 0
	}
	return v, v == -1
}

// IsVarint reports whether t is a varint of its own (a tagged field's tag and size, the record
// format's integers), whose bytes are worth showing beside the value.
func (t Type) IsVarint() bool { return t == Uvarint || t == Varint || t == Varlong }

// Zigzag reports whether t's varint is zigzag-encoded (signed): the record format's.
func (t Type) Zigzag() bool { return t == Varint || t == Varlong || t.Prefix() == VarintPrefix }

// ZigzagEncode maps a signed value to the unsigned one its zigzag varint carries: 0, -1, 1, -2
// become 0, 1, 2, 3.
func ZigzagEncode(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// ZigzagDecode is the inverse of ZigzagEncode.
func ZigzagDecode(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// encodings says, per type, how it is written: the schema command's encoding lines.
var encodings = [numTypes]string{
	Bool:                  "1 byte, 0 = false, anything else = true",
	Int8:                  "1 byte, signed",
	Int16:                 "2 bytes, big-endian, signed",
	Uint16:                "2 bytes, big-endian, unsigned",
	Int32:                 "4 bytes, big-endian, signed",
	Uint32:                "4 bytes, big-endian, unsigned",
	Int64:                 "8 bytes, big-endian, signed",
	Float64:               "8 bytes, IEEE 754 double, big-endian",
	UUID:                  "16 bytes",
	Uvarint:               "unsigned varint: 7 bits a byte, low bits first, high bit set on all but the last byte",
	String:                "int16 length, then UTF-8 bytes",
	NullableString:        "int16 length, -1 = null, then UTF-8 bytes",
	CompactString:         "uvarint length+1, then UTF-8 bytes",
	CompactNullableString: "uvarint length+1, 0 = null, then UTF-8 bytes",
	Bytes:                 "int32 length, then the bytes",
	NullableBytes:         "int32 length, -1 = null, then the bytes",
	CompactBytes:          "uvarint length+1, then the bytes",
	CompactNullableBytes:  "uvarint length+1, 0 = null, then the bytes",
	Records:               "int32 length, -1 = null, then record batches",
	CompactRecords:        "uvarint length+1, 0 = null, then record batches",
	Array:                 "int32 count, -1 = null, then the elements",
	CompactArray:          "uvarint count+1, 0 = null, then the elements",
	Struct:                "its fields in order, nothing before them",
	NullableStruct:        "int8 marker, -1 = null, 1 = present, then the fields",
	TaggedFields:          "uvarint count, then per field: uvarint tag, uvarint size, the value's bytes",
	TaggedField:           "uvarint tag, uvarint size, then size bytes of value",
	RecordBatch:           "61-byte header (baseOffset .. record count), then the records, compressed or not",
	Record:                "varint length, int8 attributes, varlong timestampDelta, varint offsetDelta, key, value, headers",
	Message:               "int64 offset, int32 size, int32 crc, int8 magic, int8 attributes, [int64 timestamp,] int32-length key and value",
	Header:                "varint-length key (UTF-8), varint-length value",
	Varint:                "zigzag varint (32-bit): (n << 1) ^ (n >> 31), 7 bits a byte, low bits first",
	Varlong:               "zigzag varint (64-bit): (n << 1) ^ (n >> 63), 7 bits a byte, low bits first",
	VarintString:          "zigzag varint length, -1 = null, then UTF-8 bytes",
	VarintBytes:           "zigzag varint length, -1 = null, then the bytes",
	VarintArray:           "zigzag varint count, then the elements",
}

// Encoding says in one line how a value of type t is written on the wire ("uvarint length+1, 0
// = null, then UTF-8 bytes"); empty for types that are kdissect's own.
func (t Type) Encoding() string {
	if t < numTypes {
		return encodings[t]
	}
	return ""
}

// BitField names the bits of an integer field whose bits mean things of their own.
type BitField uint8

// The bit fields.
const (
	NoBits BitField = iota
	// BatchAttributes: a record batch's attributes (magic 2).
	BatchAttributes
	// RecordAttributes: a record's attributes, all unused.
	RecordAttributes
	// MessageAttributes: a legacy message's attributes (magic 1).
	MessageAttributes
	// MessageAttributesV0: a magic 0 message's attributes, which have no timestamp type.
	MessageAttributesV0
	// ACLOperations: a set of ACL operations, one bit per operation code
	// (AuthorizedOperations); the smallest int32 means that none were asked for.
	ACLOperations
	numBitFields
)

var bitFieldNames = [numBitFields]string{"", "batchAttributes", "recordAttributes", "messageAttributes", "messageAttributesV0", "aclOperations"}

// String is the name a definition marks a field with ("bitField": "aclOperations").
func (f BitField) String() string {
	if f < numBitFields {
		return bitFieldNames[f]
	}
	return "bits" + strconv.Itoa(int(f))
}

// LookupBitField finds a bit field by its name; NoBits for an unknown name.
func LookupBitField(name string) BitField {
	for f := NoBits + 1; f < numBitFields; f++ {
		if bitFieldNames[f] == name {
			return f
		}
	}
	return NoBits
}

// Bit is a named bit, or group of bits, of a bit field's value.
type Bit struct {
	Name string
	// Low and High are the first and last bit numbers (equal for a single bit).
	Low, High int
	// Value is the group's value, shifted down to bit 0.
	Value int64
	// Meaning is what Value says, when there is more to say than the number ("gzip").
	Meaning string
}

// aclOperations names the ACL operation codes, the bit numbers of AuthorizedOperations.
var aclOperations = []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER",
	"DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE",
	"CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}

// Bits breaks v into the named bits of f, lowest first; nil for NoBits.
func (f BitField) Bits(v int64) []Bit { return f.AppendBits(nil, v) }

// MaxBits is the most groups a bit field breaks into: a buffer of this many lets AppendBits
// allocate nothing.
const MaxBits = 17

// AppendBits appends the named bits of v to b, as Bits returns them.
func (f BitField) AppendBits(b []Bit, v int64) []Bit {
	group := func(name string, low, high int) Bit {
		return Bit{Name: name, Low: low, High: high, Value: v >> low & (1<<(high-low+1) - 1)}
	}
	timestampType := func() Bit {
		t := group("timestampType", 3, 3)
		t.Meaning = "create"
		if t.Value == 1 {
			t.Meaning = "log-append"
		}
		return t
	}
	compression := func() Bit {
		c := group("compression", 0, 2)
		c.Meaning = Codec(c.Value).String()
		return c
	}
	switch f {
	case BatchAttributes:
		return append(b, compression(), timestampType(), group("isTransactional", 4, 4),
			group("isControlBatch", 5, 5), group("hasDeleteHorizonMs", 6, 6), group("unused", 7, 15))
	case RecordAttributes:
		return append(b, group("unused", 0, 7))
	case MessageAttributes:
		return append(b, compression(), timestampType(), group("unused", 4, 7))
	case MessageAttributesV0:
		return append(b, compression(), group("unused", 3, 7))
	case ACLOperations:
		if v == math.MinInt32 {
			return append(b, Bit{Name: "omitted", Low: 31, High: 31, Value: 1, Meaning: "not asked for"})
		}
		for i, name := range aclOperations {
			b = append(b, group(name, i, i))
		}
		if v>>len(aclOperations) != 0 {
			b = append(b, group("unknown", len(aclOperations), 31))
		}
	}
	return b
}
