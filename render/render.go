// Package render writes dissected Kafka messages for people and programs: wire diagrams,
// one-line summaries, JSON lines, statistics tables, and the layouts of message definitions.
// Nothing else in kdissect prints. It knows nothing of TCP: an Entry says where and when a
// message was seen in plain values.
package render

import (
	"time"

	"github.com/kdissect/kdissect/codec"
)

// Entry is one Kafka message (or raw SASL token, which codec decodes as a message of its own)
// and where it was seen.
type Entry struct {
	// Frame is the number of the packet holding the message's last byte, FirstFrame that of the
	// one holding its first: packets counted from 1 and called frames, as Wireshark does and as
	// the JSON's "frame" says; not a Kafka frame.
	Frame, FirstFrame int
	Time              time.Time
	Stream            int
	Src, Dst          string
	// Request is true for messages from the client.
	Request bool
	// Msg is the decoded message; never nil.
	Msg *codec.Message
	// RequestFrame and Latency are set on responses whose request was captured: the packet
	// (as Frame) of the request and the time between the two.
	RequestFrame int
	Latency      time.Duration
	// NoResponse marks a request the broker does not answer (Produce with acks=0).
	NoResponse bool
	// Facts are the message's topics, groups, errors and record counts, with topic ids
	// resolved to names where the capture taught them (nil when nobody asked for them).
	Facts *codec.Facts
	// Bytes holds the message's bytes, size prefix included (for hex dumps). Formats show them
	// through Redacted.
	Bytes []byte
	// TLS is set on messages decrypted from TLS: version and cipher suite
	// ("TLS 1.3 TLS_AES_128_GCM_SHA256").
	TLS string
	// Session is what a Fetch request does to its fetch session (KIP-227), or how the broker
	// answered it; nil without a session.
	Session *codec.SessionStep
}

// Redacted returns Bytes with the bytes of every secret field (a password, a proof, a token)
// masked, as every format that shows raw bytes must show them; Bytes itself when nothing is
// secret. It is where kdissect redacts bytes: values are redacted by the codec as it decodes.
func (e *Entry) Redacted() []byte {
	if len(e.Bytes) == 0 || e.Msg == nil {
		return e.Bytes
	}
	return e.Msg.Redact(e.Bytes)
}

// Notice is something the reader should know that is not a message: lost data, skipped bytes,
// TLS.
type Notice struct {
	Frame    int // the packet, as Entry.Frame
	Time     time.Time
	Stream   int
	Src, Dst string
	Text     string
}

// Renderer writes entries and notices as they come, in order.
type Renderer interface {
	Message(e *Entry) error
	Notice(n *Notice) error
	// Close writes anything pending (totals) and flushes.
	Close() error
	// Flush writes out what has been buffered so far, so that a live capture shows each message
	// as it completes.
	Flush() error
}

// ConnCloser is a Renderer that pairs messages itself (serve's display filters) and so must
// know when a connection ends: no response will come on it any more. The pipeline calls
// ConnClosed, with the connection's stream number, after the connection's last message.
type ConnCloser interface {
	Renderer
	ConnClosed(stream int) error
}

// Discard is the renderer of --format none: it shows nothing (statistics only).
type Discard struct{}

func (Discard) Message(*Entry) error { return nil }
func (Discard) Notice(*Notice) error { return nil }
func (Discard) Flush() error         { return nil }
func (Discard) Close() error         { return nil }
