package render

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"io"
	"time"

	"github.com/kdissect/kdissect/codec"
)

// JSON writes one JSON object per line per message, with the keys of DESIGN.md, and one object
// with "kind": "notice" per notice.
type JSON struct {
	w   *bufio.Writer
	enc *json.Encoder
	// MaxBytes cuts byte and string values longer than this (0: never).
	MaxBytes int
}

// NewJSON writes to w.
func NewJSON(w io.Writer) *JSON {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &JSON{w: bw, enc: enc}
}

type jsonMessage struct {
	Frame         int         `json:"frame"`
	FirstFrame    int         `json:"first_frame"`
	Time          string      `json:"time"`
	Stream        int         `json:"stream"`
	Src           string      `json:"src"`
	Dst           string      `json:"dst"`
	TLS           string      `json:"tls,omitempty"`
	Kind          string      `json:"kind"`
	APIKey        *int16      `json:"api_key,omitempty"`
	APIName       string      `json:"api_name,omitempty"`
	APIVersion    *int16      `json:"api_version,omitempty"`
	CorrelationID *int32      `json:"correlation_id,omitempty"`
	ClientID      *string     `json:"client_id,omitempty"`
	Size          int         `json:"size"`
	RequestFrame  *int        `json:"request_frame,omitempty"`
	LatencyUS     *int64      `json:"latency_us,omitempty"`
	NoResponse    bool        `json:"no_response,omitempty"`
	Fields        []*jsonNode `json:"fields"`
	Warnings      []string    `json:"warnings"`
}

type jsonNode struct {
	Name      string      `json:"name"`
	Type      string      `json:"type"`
	Offset    int         `json:"offset"`
	Size      int         `json:"size"`
	Value     any         `json:"value"`
	Encoding  string      `json:"encoding,omitempty"`
	Truncated bool        `json:"truncated,omitempty"`
	Error     string      `json:"error,omitempty"`
	Note      string      `json:"note,omitempty"`
	Fields    []*jsonNode `json:"fields,omitempty"`
}

// Message writes one line.
func (j *JSON) Message(e *Entry) error {
	o := &jsonMessage{
		Frame: e.Frame, FirstFrame: e.FirstFrame, Time: e.Time.UTC().Format(time.RFC3339Nano),
		Stream: e.Stream, Src: e.Src, Dst: e.Dst, TLS: e.TLS, Warnings: append([]string{}, e.Warnings...),
		Fields: []*jsonNode{},
	}
	if e.Msg == nil {
		o.Kind = "sasl_token"
		o.Size = len(e.SASLToken) + 4
		n := &jsonNode{Name: "token", Type: "bytes", Offset: 4, Size: len(e.SASLToken)}
		j.setBytes(n, e.SASLToken)
		o.Fields = append(o.Fields, n)
		return j.enc.Encode(o)
	}
	m := e.Msg
	o.Kind = "request"
	if m.Response {
		o.Kind = "response"
	}
	if m.APIKey >= 0 {
		o.APIKey, o.APIVersion = &m.APIKey, &m.Version
	}
	o.APIName, o.CorrelationID, o.ClientID, o.Size = m.APIName, &m.CorrelationID, m.ClientID, m.Size
	if m.Response && e.RequestFrame > 0 {
		rf, us := e.RequestFrame, e.Latency.Microseconds()
		o.RequestFrame, o.LatencyUS = &rf, &us
	}
	o.NoResponse = e.NoResponse
	for _, w := range m.Warnings {
		o.Warnings = append(o.Warnings, w.String())
	}
	o.Fields = j.nodes(m.Fields)
	return j.enc.Encode(o)
}

func (j *JSON) nodes(ns []*codec.Node) []*jsonNode {
	out := make([]*jsonNode, 0, len(ns))
	for _, n := range ns {
		jn := &jsonNode{Name: n.Name, Type: n.Type, Offset: n.Offset, Size: n.Size}
		switch v := n.Value.(type) {
		case []byte:
			j.setBytes(jn, v)
		case codec.UUID:
			jn.Value = v.String()
		default:
			jn.Value = v
		}
		jn.Note = n.Note
		if codec.IsErrorCode(n) {
			if c, ok := n.Value.(int64); ok {
				jn.Error = codec.ErrorName(int16(c))
			}
		}
		if len(n.Children) > 0 {
			jn.Fields = j.nodes(n.Children)
		}
		out = append(out, jn)
	}
	return out
}

// setBytes stores b as text when it is printable UTF-8, as hex otherwise.
func (j *JSON) setBytes(n *jsonNode, b []byte) {
	if j.MaxBytes > 0 && len(b) > j.MaxBytes {
		b, n.Truncated = b[:j.MaxBytes], true
	}
	if Printable(b) {
		n.Value, n.Encoding = string(b), "utf8"
	} else {
		n.Value, n.Encoding = hex.EncodeToString(b), "hex"
	}
}

// Printable reports whether b is shown as text: valid, printable UTF-8.
func Printable(b []byte) bool { return codec.Printable(b) }

type jsonNotice struct {
	Kind   string `json:"kind"`
	Frame  int    `json:"frame"`
	Time   string `json:"time"`
	Stream int    `json:"stream"`
	Src    string `json:"src"`
	Dst    string `json:"dst"`
	Text   string `json:"text"`
}

// Notice writes one line with "kind": "notice".
func (j *JSON) Notice(n *Notice) error {
	return j.enc.Encode(&jsonNotice{Kind: "notice", Frame: n.Frame, Time: n.Time.UTC().Format(time.RFC3339Nano),
		Stream: n.Stream, Src: n.Src, Dst: n.Dst, Text: n.Text})
}

// Close flushes.
func (j *JSON) Close() error { return j.w.Flush() }

// Flush writes out the lines buffered so far.
func (j *JSON) Flush() error { return j.w.Flush() }
