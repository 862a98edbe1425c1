// Package model holds what kdissect knows of a capture once it is decoded, as every part of
// kdissect shares it: a message and where it was seen (Entry), something the reader should know
// that is not a message (Notice). The dissect package makes them, filter reads them, render
// writes them, serve shows them. It knows nothing of TCP: an Entry says where and when a
// message was seen in plain values.
package model

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
	// ClientID is, on a response whose request was captured, the request's client id (nil
	// without one), so that the response's line says whose it is.
	ClientID *string
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
