package codec

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec/wire"
)

// convRequest encodes a request frame with kmsg: the body by kmsg, the header (v1, or v2 for
// flexible versions, or v0 for ControlledShutdown v0) built here. A nil clientID is null.
func convRequest(r kmsg.Request, version int16, corr int32, clientID *string) []byte {
	r.SetVersion(version)
	h := binary.BigEndian.AppendUint16(nil, uint16(r.Key()))
	h = binary.BigEndian.AppendUint16(h, uint16(version))
	h = binary.BigEndian.AppendUint32(h, uint32(corr))
	if !(r.Key() == 7 && version == 0) {
		if clientID == nil {
			h = binary.BigEndian.AppendUint16(h, 0xffff)
		} else {
			h = binary.BigEndian.AppendUint16(h, uint16(len(*clientID)))
			h = append(h, *clientID...)
		}
		if r.IsFlexible() {
			h = append(h, 0) // no tagged fields
		}
	}
	body := r.AppendTo(nil)
	out := binary.BigEndian.AppendUint32(nil, uint32(len(h)+len(body)))
	return append(append(out, h...), body...)
}

// convResponse encodes a response frame: header v1 for flexible versions (but ApiVersions,
// whose responses always use v0), v0 otherwise.
func convResponse(r kmsg.Response, version int16, corr int32) []byte {
	r.SetVersion(version)
	h := binary.BigEndian.AppendUint32(nil, uint32(corr))
	if r.IsFlexible() && r.Key() != 18 {
		h = append(h, 0)
	}
	body := r.AppendTo(nil)
	out := binary.BigEndian.AppendUint32(nil, uint32(len(h)+len(body)))
	return append(append(out, h...), body...)
}

// sized prefixes b with its size, as a raw SASL token travels.
func sized(b string) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

func strp(s string) *string { return &s }

var clientID = strp("kdissect-test")

func metadataReq(version int16, corr int32) []byte {
	r := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = strp("orders")
	r.Topics = append(r.Topics, t)
	return convRequest(r, version, corr, clientID)
}

func metadataResp(version int16, corr int32) []byte {
	r := kmsg.NewPtrMetadataResponse()
	b := kmsg.NewMetadataResponseBroker()
	b.Host, b.Port = "localhost", 9092
	r.Brokers = append(r.Brokers, b)
	return convResponse(r, version, corr)
}

func apiVersionsReq(version int16, corr int32) []byte {
	r := kmsg.NewPtrApiVersionsRequest()
	r.ClientSoftwareName, r.ClientSoftwareVersion = "kdissect", "1.0"
	return convRequest(r, version, corr, clientID)
}

func apiVersionsResp(version int16, corr int32) []byte {
	r := kmsg.NewPtrApiVersionsResponse()
	k := kmsg.NewApiVersionsResponseApiKey()
	k.ApiKey, k.MaxVersion = 3, 12
	r.ApiKeys = append(r.ApiKeys, k)
	return convResponse(r, version, corr)
}

func produceReq(version int16, corr int32, acks int16) []byte {
	r := kmsg.NewPtrProduceRequest()
	r.Acks, r.TimeoutMillis = acks, 1000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = "orders"
	p := kmsg.NewProduceRequestTopicPartition()
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return convRequest(r, version, corr, clientID)
}

func produceResp(version int16, corr int32) []byte {
	return convResponse(kmsg.NewPtrProduceResponse(), version, corr)
}

func saslHandshakeReq(version int16, corr int32) []byte {
	r := kmsg.NewPtrSASLHandshakeRequest()
	r.Mechanism = "PLAIN"
	return convRequest(r, version, corr, clientID)
}

func saslHandshakeResp(version int16, corr int32, errorCode int16) []byte {
	r := kmsg.NewPtrSASLHandshakeResponse()
	r.ErrorCode = errorCode
	r.SupportedMechanisms = []string{"PLAIN"}
	return convResponse(r, version, corr)
}

// clean fails the test if a decoded message has warnings.
func clean(t *testing.T, what string, r Result) {
	t.Helper()
	if r.Msg == nil {
		t.Fatalf("%s: no message", what)
	}
	if len(r.Msg.Warnings) > 0 {
		t.Errorf("%s: warnings %v", what, r.Msg.Warnings)
	}
}

func TestConversationPairing(t *testing.T) {
	c := testCodec(t)
	cv := c.NewConversation()
	// Three requests in flight; the responses come back in another order.
	r1 := cv.ClientFrame(apiVersionsReq(3, 0), "req0")
	r2 := cv.ClientFrame(metadataReq(12, 1), "req1")
	r3 := cv.ClientFrame(metadataReq(4, 2), "req2")
	for i, r := range []Result{r1, r2, r3} {
		clean(t, fmt.Sprint("request ", i), r)
		if r.Msg.Response || r.Request != nil || r.NoResponse || r.SASLToken || r.Msg.CorrelationID != int32(i) {
			t.Errorf("request %d: %+v", i, r)
		}
	}
	if got := fmt.Sprint(cv.unanswered()); got != "[{18 3 0 req0} {3 12 1 req1} {3 4 2 req2}]" {
		t.Errorf("unanswered %s", got)
	}
	for _, tc := range []struct {
		frame        []byte
		key, version int16
		corr         int32
		ref          string
	}{
		{metadataResp(4, 2), 3, 4, 2, "req2"},
		{apiVersionsResp(3, 0), 18, 3, 0, "req0"},
		{metadataResp(12, 1), 3, 12, 1, "req1"},
	} {
		if !cv.Expects(tc.frame) {
			t.Errorf("corr %d not expected", tc.corr)
		}
		r := cv.ServerFrame(tc.frame)
		clean(t, fmt.Sprint("response ", tc.corr), r)
		if r.Request == nil || r.Request.Ref != tc.ref || r.Msg.APIKey != tc.key || r.Msg.Version != tc.version ||
			r.Msg.CorrelationID != tc.corr || !r.Msg.Response {
			t.Errorf("response %d: %+v, request %+v", tc.corr, r.Msg, r.Request)
		}
	}
	if n := len(cv.unanswered()); n != 0 {
		t.Errorf("%d requests unanswered", n)
	}
	// A second response with an answered correlation id has no request.
	again := metadataResp(12, 1)
	if cv.Expects(again) {
		t.Error("an answered correlation id is expected again")
	}
	if r := cv.ServerFrame(again); r.Request != nil {
		t.Errorf("paired twice: %+v", r.Request)
	} else if w := fmt.Sprint(r.Msg.Warnings); !strings.Contains(w, "not captured") && !strings.Contains(w, "no captured request") {
		t.Errorf("unpaired response without a warning that says so: %v", w)
	}
}

// A correlation id used again while its first request is still pending: the newest request is
// the one remembered, and the pending list holds it once.
func TestConversationCorrelationReused(t *testing.T) {
	cv := testCodec(t).NewConversation()
	cv.ClientFrame(metadataReq(12, 5), "first")
	cv.ClientFrame(apiVersionsReq(3, 6), "other")
	cv.ClientFrame(metadataReq(12, 5), "second")
	if got := fmt.Sprint(cv.unanswered()); got != "[{18 3 6 other} {3 12 5 second}]" {
		t.Errorf("unanswered %s", got)
	}
	r := cv.ServerFrame(metadataResp(12, 5))
	if r.Request == nil || r.Request.Ref != "second" {
		t.Errorf("paired with %+v", r.Request)
	}
	if got := fmt.Sprint(cv.unanswered()); got != "[{18 3 6 other}]" {
		t.Errorf("unanswered %s", got)
	}
}

// A response that reaches the conversation before its request (one direction of the
// connection waited behind a gap) is not expected; once the request is seen, it pairs.
func TestConversationResponseBeforeRequest(t *testing.T) {
	cv := testCodec(t).NewConversation()
	resp := metadataResp(12, 7)
	if cv.Expects(resp) {
		t.Fatal("a response is expected before any request")
	}
	cv.ClientFrame(metadataReq(12, 7), "req")
	if !cv.Expects(resp) {
		t.Fatal("the response is not expected after its request")
	}
	if r := cv.ServerFrame(resp); r.Request == nil || r.Request.Ref != "req" {
		t.Errorf("not paired: %+v", r)
	}

	// Shown before its request (the pipeline gave up waiting): not paired, and the request
	// that comes later stays pending.
	cv = testCodec(t).NewConversation()
	cv.ClientFrame(apiVersionsReq(3, 0), "av")
	r := cv.ServerFrame(metadataResp(12, 8))
	if r.Request != nil || r.Msg == nil || !r.Msg.Response || r.Msg.CorrelationID != 8 {
		t.Fatalf("unpaired response: %+v", r)
	}
	if w := fmt.Sprint(r.Msg.Warnings); !strings.Contains(w, "no captured request has correlation id 8") {
		t.Errorf("warnings %s", w)
	}
	cv.ClientFrame(metadataReq(12, 8), "late")
	if got := fmt.Sprint(cv.unanswered()); got != "[{18 3 0 av} {3 12 8 late}]" {
		t.Errorf("unanswered %s", got)
	}
}

// A response whose request was not captured is decoded as the API the client uses when that
// is the only one that fits, and says so.
func TestConversationInference(t *testing.T) {
	cv := testCodec(t).NewConversation()
	cv.ClientFrame(metadataReq(12, 1), "m")
	cv.ServerFrame(metadataResp(12, 1))
	r := cv.ServerFrame(metadataResp(12, 9))
	if r.Request != nil || r.Msg.APIKey != 3 || r.Msg.Version != 12 {
		t.Fatalf("inferred %s v%d, request %+v", r.Msg.APIName, r.Msg.Version, r.Request)
	}
	if w := fmt.Sprint(r.Msg.Warnings); !strings.Contains(w, "correlation id 9 was not captured; decoded as Metadata v12") {
		t.Errorf("warnings %s", w)
	}
	// Bytes no API of this client fits: left undecoded.
	junk := append(binary.BigEndian.AppendUint32(nil, 12), 0, 0, 0, 10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	r = cv.ServerFrame(junk)
	if r.Msg.APIKey != -1 || r.Request != nil || !strings.Contains(fmt.Sprint(r.Msg.Warnings), "API unknown") {
		t.Errorf("junk decoded as %s: %v", r.Msg.APIName, r.Msg.Warnings)
	}
}

func TestConversationProduceAcks(t *testing.T) {
	for _, tc := range []struct {
		acks    int16
		version int16
		pending bool
	}{
		{0, 3, false}, {0, 9, false}, {0, 12, false},
		{1, 9, true}, {-1, 9, true}, {-1, 12, true},
	} {
		t.Run(fmt.Sprintf("acks=%d v%d", tc.acks, tc.version), func(t *testing.T) {
			cv := testCodec(t).NewConversation()
			r := cv.ClientFrame(produceReq(tc.version, 3, tc.acks), "p")
			clean(t, "produce", r)
			if r.NoResponse == tc.pending {
				t.Errorf("NoResponse %v", r.NoResponse)
			}
			if got := len(cv.unanswered()); got != map[bool]int{true: 1, false: 0}[tc.pending] {
				t.Errorf("%d pending", got)
			}
			resp := produceResp(tc.version, 3)
			if cv.Expects(resp) != tc.pending {
				t.Errorf("Expects %v", !tc.pending)
			}
			if r := cv.ServerFrame(resp); (r.Request != nil) != tc.pending {
				t.Errorf("response paired: %+v", r.Request)
			}
		})
	}
}

// SaslHandshake v0 is followed by raw SASL tokens, size-prefixed but without Kafka headers, in
// both directions, until the client sends a Kafka request.
func TestConversationSASL(t *testing.T) {
	cv := testCodec(t).NewConversation()
	cv.ClientFrame(apiVersionsReq(0, 0), nil)
	cv.ServerFrame(apiVersionsResp(0, 0))
	hs := cv.ClientFrame(saslHandshakeReq(0, 1), nil)
	clean(t, "handshake", hs)
	if r := cv.ServerFrame(saslHandshakeResp(0, 1, 0)); r.Request == nil || r.SASLToken {
		t.Fatalf("handshake response %+v", r)
	}
	tokens := []struct {
		fromClient bool
		frame      []byte
	}{
		{true, sized("\x00user\x00pass")},
		{false, sized("")}, // the broker's answer to PLAIN: an empty token
		{true, sized("\x00u\x00p")},
		{false, sized("ok")},
		{true, sized("")},
	}
	for i, tk := range tokens {
		if v := cv.Check(tk.fromClient, tk.frame, true); v != wire.Yes {
			t.Errorf("token %d (%q): verdict %d in step", i, tk.frame, v)
		}
		if v := cv.Check(tk.fromClient, tk.frame, false); v != wire.Yes && v != wire.Weak {
			t.Errorf("token %d (%q): verdict %d out of step", i, tk.frame, v)
		}
		var r Result
		if tk.fromClient {
			r = cv.ClientFrame(tk.frame, nil)
		} else {
			if !cv.Expects(tk.frame) {
				t.Errorf("token %d not expected", i)
			}
			r = cv.ServerFrame(tk.frame)
		}
		if !r.SASLToken || r.Request != nil || r.NoResponse {
			t.Errorf("token %d (%q): %+v", i, tk.frame, r)
		}
	}
	// A Kafka request ends the raw phase.
	m := cv.ClientFrame(metadataReq(12, 2), "m")
	clean(t, "metadata", m)
	if m.SASLToken || m.Msg.APIKey != 3 {
		t.Fatalf("metadata request after SASL: %+v", m)
	}
	if r := cv.ServerFrame(metadataResp(12, 2)); r.SASLToken || r.Request == nil || r.Request.Ref != "m" {
		t.Errorf("metadata response after SASL: %+v", r)
	}
	if v := cv.Check(true, sized("\x00u\x00p"), true); v != wire.No {
		t.Errorf("a short token after the raw phase: verdict %d", v)
	}
	if r := cv.ClientFrame(sized("\x00user\x00pass"), nil); r.SASLToken {
		t.Error("a token after the raw phase is taken as a SASL token")
	}
}

// Without a raw phase: a failed SaslHandshake v0, and SaslHandshake v1 (tokens then travel in
// SaslAuthenticate requests).
func TestConversationNoRawSASL(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version int16
		code    int16
	}{
		{"v0 refused", 0, 33}, // UNSUPPORTED_SASL_MECHANISM
		{"v1", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cv := testCodec(t).NewConversation()
			cv.ClientFrame(saslHandshakeReq(tc.version, 1), nil)
			cv.ServerFrame(saslHandshakeResp(tc.version, 1, tc.code))
			r := cv.ClientFrame(metadataReq(12, 2), nil)
			if r.SASLToken {
				t.Fatal("raw phase after", tc.name)
			}
			if v := cv.Check(false, sized(""), true); v != wire.No {
				t.Errorf("an empty broker frame: verdict %d", v)
			}
		})
	}
}

func TestConversationCheck(t *testing.T) {
	c := testCodec(t)
	cv := c.NewConversation()
	cv.ClientFrame(metadataReq(12, 41), nil) // corr 41 is pending

	md := metadataReq(12, 50)
	withSize := func(b []byte, size uint32) []byte {
		b = append([]byte(nil), b...)
		binary.BigEndian.PutUint32(b, size)
		return b
	}
	set := func(b []byte, off int, v ...byte) []byte {
		b = append([]byte(nil), b...)
		copy(b[off:], v)
		return b
	}
	long := strings.Repeat("streams-app-7f8e2a1c-1b2c-4d5e-9f00-", 3) + "StreamThread-1-consumer"
	longID := convRequest(kmsg.NewPtrMetadataRequest(), 12, 50, &long)
	cut := func(b []byte) []byte { return b[:min(len(b), 64)] } // the framer shows 64 bytes
	umlauts := "k" + strings.Repeat("\u00fc", 40)               // cut inside a character at 64 bytes
	longUTF8 := convRequest(kmsg.NewPtrMetadataRequest(), 12, 50, &umlauts)
	resp := metadataResp(12, 41)

	tests := []struct {
		name     string
		toServer bool
		head     []byte
		synced   wire.Verdict // verdict in step
		unsynced wire.Verdict // verdict out of step
	}{
		{"request", true, md, wire.Yes, wire.Yes},
		{"request, 3 bytes", true, md[:3], wire.NeedMore, wire.NeedMore},
		{"request, 8 bytes", true, md[:8], wire.NeedMore, wire.NeedMore},
		{"request, 13 bytes", true, md[:13], wire.Yes, wire.NeedMore},
		{"request, client id cut", true, md[:16], wire.Yes, wire.NeedMore},
		{"request, size 7", true, withSize(md, 7), wire.No, wire.No},
		{"request, size over the bound", true, withSize(md, wire.MaxFrameSize+1), wire.No, wire.No},
		{"request, negative size", true, withSize(md, 0xfffffff0), wire.No, wire.No},
		{"request, negative key", true, set(md, 4, 0xff, 0xfe), wire.No, wire.No},
		{"request, negative version", true, set(md, 6, 0x80, 0), wire.No, wire.No},
		{"request, unknown key", true, set(md, 4, 0x7f, 0x00), wire.Yes, wire.No},
		{"request, version newer than the schemas", true, set(md, 6, 0x00, 0x63), wire.Yes, wire.No},
		{"request, negative correlation id", true, set(md, 8, 0x80), wire.Yes, wire.No},
		{"request, correlation id not above those seen", true, metadataReq(12, 41), wire.Yes, wire.No},
		{"request, client id with a control character", true, set(md, 15, 0x07), wire.Yes, wire.No},
		{"request, client id not UTF-8", true, set(md, 15, 0xff), wire.Yes, wire.No},
		{"request, client id longer than the frame", true, set(md, 12, 0x70, 0x00), wire.Yes, wire.No},
		{"request, client id length -2", true, set(md, 12, 0xff, 0xfe), wire.Yes, wire.No},
		{"request, null client id", true, convRequest(kmsg.NewPtrMetadataRequest(), 12, 42, nil)[:16], wire.Yes, wire.Weak},
		{"request, empty client id", true, convRequest(kmsg.NewPtrMetadataRequest(), 12, 42, strp(""))[:16], wire.Yes, wire.Weak},
		{"request, whole, null client id", true, convRequest(kmsg.NewPtrMetadataRequest(), 12, 42, nil), wire.Yes, wire.Yes},
		{"request, whole, that does not decode", true, withSize(md[:len(md)-2], uint32(len(md)-6)), wire.Yes, wire.Weak},
		{"request, whole, null client id, that does not decode", true, withSize(md[:16], 12), wire.Yes, wire.No},
		{"request, zeros", true, append(binary.BigEndian.AppendUint32(nil, 300), make([]byte, 20)...), wire.Yes, wire.No},
		{"request, long client id as the framer shows it", true, cut(longID), wire.Yes, wire.Yes},
		{"request, long UTF-8 client id cut inside a character", true, cut(longUTF8), wire.Yes, wire.Yes},
		{"request, long client id with a control character", true, set(cut(longID), 40, 0x01), wire.Yes, wire.No},
		{"request, header v0", true, convRequest(kmsg.NewPtrControlledShutdownRequest(), 0, 50, nil), wire.Yes, wire.Weak},
		{"request, header v1", true, produceReq(3, 50, 1), wire.Yes, wire.Yes},
		{"response, pending", false, resp[:20], wire.Yes, wire.Weak},
		{"response, whole, pending", false, resp, wire.Yes, wire.Yes},
		{"response, whole, pending, that does not decode", false, set(resp, 13, 0x7f), wire.Yes, wire.No},
		{"response, not pending", false, metadataResp(12, 3), wire.Yes, wire.Weak},
		{"response, size 4, pending", false, withSize(resp, 4)[:8], wire.Yes, wire.No},
		{"response, negative correlation id", false, metadataResp(12, -3), wire.Yes, wire.No},
		{"response, above every request sent", false, metadataResp(12, 42), wire.Yes, wire.Weak},
		{"response, far above every request sent", false, metadataResp(12, 41+64+1), wire.Yes, wire.No},
		{"response, 6 bytes", false, resp[:6], wire.NeedMore, wire.NeedMore},
		{"response, size 3", false, withSize(resp, 3), wire.No, wire.No},
		{"response, size 4", false, withSize(metadataResp(12, 3), 4)[:8], wire.Yes, wire.Weak},
		{"response, size over the bound", false, withSize(resp, wire.MaxFrameSize+1), wire.No, wire.No},
		{"response, negative size", false, withSize(resp, 0x80000000), wire.No, wire.No},
		{"TLS ClientHello", true, []byte{0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03, 0x5f, 0x00, 0x00}, wire.No, wire.No},
		{"HTTP", true, []byte("GET / HTTP/1.1\r\nHost: broker\r\n\r\n"), wire.No, wire.No},
	}
	// Before any request, a response's correlation id can be anything but negative.
	fresh := c.NewConversation()
	if v := fresh.Check(false, metadataResp(12, 1<<30), false); v != wire.Weak {
		t.Errorf("a response before any request: verdict %d", v)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if v := cv.Check(tc.toServer, tc.head, true); v != tc.synced {
				t.Errorf("in step: verdict %d, want %d", v, tc.synced)
			}
			if v := cv.Check(tc.toServer, tc.head, false); v != tc.unsynced {
				t.Errorf("out of step: verdict %d, want %d", v, tc.unsynced)
			}
		})
	}
}

// Out of step, a request must have a higher correlation id than the requests seen before it,
// but bytes decoded as a request by mistake (with warnings) do not raise the bar.
func TestConversationCorrelationOrder(t *testing.T) {
	cv := testCodec(t).NewConversation()
	bad := metadataReq(12, 1<<30)
	bad = append(bad[:len(bad)-1], 0x7f) // the last byte no longer ends the body: a warning
	if r := cv.ClientFrame(bad, nil); len(r.Msg.Warnings) == 0 {
		t.Fatal("the damaged request decodes cleanly")
	}
	if v := cv.Check(true, metadataReq(12, 5), false); v != wire.Yes {
		t.Errorf("request after a damaged one: verdict %d", v)
	}
	cv.ClientFrame(metadataReq(12, 5), nil)
	for corr, want := range map[int32]wire.Verdict{4: wire.No, 5: wire.No, 6: wire.Yes, 1000: wire.Yes} {
		if v := cv.Check(true, metadataReq(12, corr), false); v != want {
			t.Errorf("correlation id %d after 5: verdict %d, want %d", corr, v, want)
		}
	}
}

// unanswered returns the requests still waiting for a response, in the order they were sent.
func (cv *Conversation) unanswered() []pendingRequest {
	out := make([]pendingRequest, 0, len(cv.order))
	for _, c := range cv.order {
		p := cv.pending[c]
		out = append(out, pendingRequest{p.APIKey, p.Version, p.CorrelationID, p.Ref})
	}
	return out
}

// pendingRequest is what the tests compare of a Pending.
type pendingRequest struct {
	APIKey, Version int16
	CorrelationID   int32
	Ref             any
}

// TestConversationRemember checks the list of API versions a client used (remember): the most
// recent first, each once, the 16 most recent only; it is changed in place, so it is compared
// with a list built anew for each request.
func TestConversationRemember(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []int16
	}{
		{"one", []int16{3}},
		{"repeated", []int16{3, 3, 3}},
		{"back to an older", []int16{1, 2, 3, 1, 2, 3, 2}},
		{"more than 16", []int16{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 3, 0, 17, 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cv := testCodec(t).NewConversation()
			var want []Pending
			for _, k := range tc.keys {
				cv.remember(k, k%3)
				p := Pending{APIKey: k, Version: k % 3}
				want = slices.DeleteFunc(want, func(s Pending) bool { return s == p })
				want = append([]Pending{p}, want...)
				want = want[:min(len(want), 16)]
				if fmt.Sprint(cv.seen) != fmt.Sprint(want) {
					t.Fatalf("after %d: %v, want %v", k, cv.seen, want)
				}
			}
		})
	}
}
