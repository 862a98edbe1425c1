package render

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

// JSON writes one JSON object per line per message, with the keys of DESIGN.md, and one object
// with "kind": "notice" per notice. Lines are built by hand rather than by reflection (a capture
// makes millions of nodes); what the hand-written path does not cover (strings that need
// escaping, floats, unusual values) goes through encoding/json, so the output is encoding/json's.
type JSON struct {
	w *bufio.Writer
	// line is the line being built; other holds encoding/json's encoding of one value.
	line  []byte
	other bytes.Buffer
	enc   *json.Encoder
	// MaxBytes cuts byte and string values longer than this (0: never).
	MaxBytes int
	// file names the capture file the lines come from, when there are several (see File).
	file string
	// msg is the message being written; scratch holds the records it expands as they are
	// written (codec.Message.EachRecord); err is the first error writing a line that is
	// written piece by piece.
	msg     *codec.Message
	scratch codec.Nodes
	err     error
	// ownFacts holds a response's error codes when its entry has no facts; fact holds a
	// fact's value while it is written.
	ownFacts codec.Facts
	fact     model.Value
}

// jsonChunk is how much of a line is built before it is written out: a big message's line is
// written as it is made, not held whole.
const jsonChunk = 64 << 10

// NewJSON writes to w.
func NewJSON(w io.Writer) *JSON {
	j := &JSON{w: bufio.NewWriter(w)}
	j.enc = json.NewEncoder(&inertJSON{w: &j.other})
	j.enc.SetEscapeHTML(false)
	return j
}

// Message writes one line.
func (j *JSON) Message(e *model.Entry) error {
	b := j.facts(j.line[:0], e)
	if e.Msg.Response {
		b = j.pair(b, e)
	}
	b = append(b, `,"fields":`...)
	j.msg, j.err = e.Msg, nil
	b = j.nodes(b, e.Msg.Fields)
	j.msg = nil
	// The warnings come after the fields: expanding records adds theirs.
	b = j.warnings(b, e.Msg.Warnings)
	return j.flush(b)
}

// facts appends the start of a message's object, "{" and its keys from "frame" to "session":
// what a message is, without its fields (the workshop page's list reads the same keys).
func (j *JSON) facts(b []byte, e *model.Entry) []byte {
	b = append(b, `{"frame":`...)
	b = strconv.AppendInt(b, int64(e.Frame), 10)
	b = append(b, `,"first_frame":`...)
	b = strconv.AppendInt(b, int64(e.FirstFrame), 10)
	b = j.head(b, e.Time, e.Stream, e.Src, e.Dst)
	if e.TLS != "" {
		b = append(b, `,"tls":`...)
		b = j.str(b, e.TLS)
	}
	m := e.Msg
	if m.Response {
		b = append(b, `,"kind":"response"`...)
	} else {
		b = append(b, `,"kind":"request"`...)
	}
	if m.APIKey >= 0 {
		b = append(b, `,"api_key":`...)
		b = strconv.AppendInt(b, int64(m.APIKey), 10)
	}
	if m.APIName != "" {
		b = append(b, `,"api_name":`...)
		b = j.str(b, m.APIName)
	}
	if m.APIKey >= 0 {
		b = append(b, `,"api_version":`...)
		b = strconv.AppendInt(b, int64(m.Version), 10)
	}
	b = append(b, `,"correlation_id":`...)
	b = strconv.AppendInt(b, int64(m.CorrelationID), 10)
	if m.ClientID != nil {
		b = append(b, `,"client_id":`...)
		b = j.str(b, *m.ClientID)
	}
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(m.Size), 10)
	if m.Response && e.RequestFrame > 0 {
		b = append(b, `,"request_frame":`...)
		b = strconv.AppendInt(b, int64(e.RequestFrame), 10)
		b = append(b, `,"latency_us":`...)
		b = strconv.AppendInt(b, e.Latency.Microseconds(), 10)
	}
	if e.NoResponse {
		b = append(b, `,"no_response":true`...)
	}
	if e.Session != nil {
		b = j.session(b, e.Session)
	}
	return b
}

// pair appends what a response's line carries so that it says what its pair does: the
// request's client id and the facts of model.Facts marked JSON (its errors).
func (j *JSON) pair(b []byte, e *model.Entry) []byte {
	if e.ClientID != nil {
		b = append(b, `,"client_id":`...)
		b = j.str(b, *e.ClientID)
	}
	f := e.Facts
	if f == nil {
		// Nobody asked the pipeline for facts (summaries, --stats and the filters do): the
		// JSON facts are made of the error codes, which the message gives alone.
		j.ownFacts.Errors = e.Msg.Errors(j.ownFacts.Errors)
		f = &j.ownFacts
	}
	facts := model.Facts()
	for i := range facts {
		fact := &facts[i]
		if !fact.JSON {
			continue
		}
		j.fact.Reset()
		fact.Add(&j.fact, f)
		b = append(append(append(b, `,"`...), fact.Name...), `":[`...)
		for k, s := range j.fact.List {
			if k > 0 {
				b = append(b, ',')
			}
			b = j.str(b, s)
		}
		b = append(b, ']')
	}
	return b
}

// spill writes out the part of the line built so far once it is long, and returns the buffer
// to go on with.
func (j *JSON) spill(b []byte) []byte {
	if len(b) < jsonChunk {
		return b
	}
	if _, err := j.w.Write(b); err != nil && j.err == nil {
		j.err = err
	}
	return b[:0]
}

// head appends the keys messages and notices share, from "time" to "dst".
func (j *JSON) head(b []byte, t time.Time, stream int, src, dst string) []byte {
	b = append(b, `,"time":"`...)
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","stream":`...)
	b = strconv.AppendInt(b, int64(stream), 10)
	b = append(b, `,"src":`...)
	b = j.str(b, src)
	b = append(b, `,"dst":`...)
	b = j.str(b, dst)
	if j.file != "" {
		b = append(b, `,"file":`...)
		b = j.str(b, j.file)
	}
	return b
}

// File says that the lines that follow come from the named capture file: each then carries a
// "file" key. kdissect calls it when it reads several files.
func (j *JSON) File(name string) error {
	j.file = name
	return nil
}

func (j *JSON) warnings(b []byte, ws []codec.Warning) []byte {
	b = append(b, `,"warnings":[`...)
	for i, w := range ws {
		if i > 0 {
			b = append(b, ',')
		}
		b = j.str(b, w.String())
	}
	return append(b, ']')
}

// flush writes the line and keeps its buffer for the next.
func (j *JSON) flush(b []byte) error {
	b = append(b, "}\n"...)
	j.line = b
	_, err := j.w.Write(b)
	if j.err != nil {
		err, j.err = j.err, nil
	}
	return err
}

// nodes appends a JSON array of nodes.
func (j *JSON) nodes(b []byte, ns []*codec.Node) []byte {
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = j.node(b, n)
	}
	return append(b, ']')
}

// node appends one node as a JSON object, its children inside it.
func (j *JSON) node(b []byte, n *codec.Node) []byte {
	b = j.nodeStart(b, n.Name, n.Type.String(), n.Offset, n.Size)
	b = appendPrefix(b, n)
	if v, ok := n.Value.([]byte); ok {
		b = j.bytesValue(b, v)
	} else if v, ok := n.Value.(string); ok && !utf8.ValidString(v) {
		// JSON cannot carry the bytes of such a string: they go as bytes do, in hex.
		b = j.bytesValue(b, []byte(v))
	} else {
		b = append(b, `,"value":`...)
		b = j.value(b, n.Value)
	}
	b = appendParts(b, n)
	if codec.IsErrorCode(n) {
		if c, ok := n.Value.(int64); ok {
			if name := codec.ErrorName(int16(c)); name != "" {
				b = append(b, `,"error":`...)
				b = j.str(b, name)
			}
		}
	}
	if name, ok := n.Topic(); ok {
		b = append(b, `,"topic":`...)
		b = j.str(b, name)
	}
	if n.Note != "" {
		b = append(b, `,"note":`...)
		b = j.str(b, n.Note)
	}
	if j.msg != nil && n.Unexpanded() {
		b = j.records(b, n)
	} else if len(n.Children) > 0 {
		b = append(b, `,"fields":`...)
		b = j.nodes(b, n.Children)
	}
	b = append(b, '}')
	return j.spill(b)
}

// records appends the "fields" of a records field left unexpanded, decoded and written one
// batch at a time (codec.Message.EachRecord). (A closure in node would move node's b to the
// heap at every call.)
func (j *JSON) records(b []byte, n *codec.Node) []byte {
	some := false
	j.msg.EachRecord(n, &j.scratch, func(c *codec.Node) {
		if some {
			b = append(b, ',')
		} else {
			b = append(b, `,"fields":[`...)
			some = true
		}
		b = j.node(b, c)
	})
	if some {
		b = append(b, ']')
	}
	return b
}

func (j *JSON) nodeStart(b []byte, name, typ string, off, size int) []byte {
	b = append(b, `{"name":`...)
	b = j.str(b, name)
	b = append(b, `,"type":`...)
	b = j.str(b, typ)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(off), 10)
	b = append(b, `,"size":`...)
	return strconv.AppendInt(b, int64(size), 10)
}

// appendPrefix appends a node's length or count prefix, if it has one: "prefix": {"offset",
// "size", "encoding", "value"}; the value is left out where the node does not show it (the
// decode stopped at a length the bytes could not hold).
func appendPrefix(b []byte, n *codec.Node) []byte {
	p, ok := n.Prefix()
	if !ok {
		return b
	}
	b = append(b, `,"prefix":{"offset":`...)
	b = strconv.AppendInt(b, int64(p.Offset), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(p.Size), 10)
	b = append(b, `,"encoding":"`...)
	b = append(b, p.Encoding.String()...)
	b = append(b, '"')
	if p.Known {
		b = append(b, `,"value":`...)
		b = strconv.AppendInt(b, p.Value, 10)
	}
	return append(b, '}')
}

// appendParts appends a varint's "raw" bytes (hex) and a bit field's "bits" (name: value).
func appendParts(b []byte, n *codec.Node) []byte {
	if n.Type.IsVarint() {
		var buf [10]byte
		b = append(b, `,"raw":"`...)
		b = hex.AppendEncode(b, n.AppendRaw(buf[:0]))
		b = append(b, '"')
	}
	if v, ok := n.Value.(int64); ok && n.Bits != wire.NoBits {
		b = append(b, `,"bits":{`...)
		var buf [wire.MaxBits]wire.Bit
		for i, bit := range n.Bits.AppendBits(buf[:0], v) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, bit.Name...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, bit.Value, 10)
		}
		b = append(b, '}')
	}
	return b
}

// bytesValue appends the value of a bytes node and its encoding: text when the bytes are
// printable UTF-8, hex otherwise, cut at MaxBytes. A string that is not UTF-8 is written
// by it too, in hex.
func (j *JSON) bytesValue(b []byte, v []byte) []byte {
	truncated := false
	if j.MaxBytes > 0 && len(v) > j.MaxBytes {
		v, truncated = v[:j.MaxBytes], true
	}
	b = append(b, `,"value":`...)
	if text, ok := appendTextValue(b, v); ok {
		b = append(text, `,"encoding":"utf8"`...)
	} else {
		b = append(text, '"')
		for len(v) > 0 { // in pieces: the records of a big message, undecoded, are megabytes
			k := min(len(v), jsonChunk/2)
			b = j.spill(hex.AppendEncode(b, v[:k]))
			v = v[k:]
		}
		b = append(b, `","encoding":"hex"`...)
	}
	if truncated {
		b = append(b, `,"truncated":true`...)
	}
	return b
}

// value appends a node's value.
func (j *JSON) value(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return j.str(b, v)
	case codec.UUID:
		return j.str(b, v.String())
	}
	return j.marshal(b, v)
}

// str appends s as a JSON string.
func (j *JSON) str(b []byte, s string) []byte { return appendJSONString(b, s) }

// marshal appends encoding/json's encoding of v (HTML characters not escaped).
func (j *JSON) marshal(b []byte, v any) []byte {
	j.other.Reset()
	if err := j.enc.Encode(v); err != nil {
		return append(b, "null"...)
	}
	return append(b, bytes.TrimSuffix(j.other.Bytes(), []byte("\n"))...)
}

// Notice writes one line with "kind": "notice".
func (j *JSON) Notice(n *model.Notice) error {
	b := append(j.line[:0], `{"kind":"notice","frame":`...)
	b = strconv.AppendInt(b, int64(n.Frame), 10)
	b = j.head(b, n.Time, n.Stream, n.Src, n.Dst)
	b = append(b, `,"text":`...)
	b = j.str(b, n.Text)
	return j.flush(b)
}

// Close flushes.
func (j *JSON) Close() error { return j.w.Flush() }

// Flush writes out the lines buffered so far.
func (j *JSON) Flush() error { return j.w.Flush() }
