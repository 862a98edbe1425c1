// Package tlsdec decrypts the TLS records of one TCP connection with the secrets of an NSS key
// log (SSLKEYLOGFILE), so that what TLS carried can be dissected.
//
// A Conn takes the bytes of both directions of a connection, in order per direction, reads
// the records, takes the client random, SNI, version and cipher suite from the hellos, finds
// the connection's secrets in the key log, and hands out the plaintext of each application
// data record with the input offset just past the record's last byte, so that the caller can
// tie the plaintext to the packet that completed the record.
//
// TLS 1.2 with the AEAD suites (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305) and a
// CLIENT_RANDOM master secret; TLS 1.3 (TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384,
// TLS_CHACHA20_POLY1305_SHA256) with the handshake and traffic secrets, KeyUpdate included.
// Not decrypted: CBC and other non-AEAD suites, TLS 1.0 and 1.1, TLS 1.3 0-RTT early data,
// renegotiation, connections whose handshake was not captured, and records after lost bytes.
package tlsdec

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/kdissect/kdissect/internal/plural"
)

// State says how far a connection's decryption got.
type State uint8

// The states of a Conn. Handshake leads to one of the others; Decrypting may still lead to
// Failed.
const (
	// Handshake: the hellos are being read, nothing is decided yet.
	Handshake State = iota
	// Decrypting: the secrets were found and records are being decrypted.
	Decrypting
	// NoKeys: the key log has no (or not all) secrets for this connection.
	NoKeys
	// Unsupported: a version or cipher suite that kdissect cannot decrypt.
	Unsupported
	// Failed: a record did not authenticate (a wrong secret), or the stream is not TLS as
	// expected; Err says why.
	Failed
)

func (s State) String() string {
	switch s {
	case Handshake:
		return "handshake"
	case Decrypting:
		return "decrypting"
	case NoKeys:
		return "no keys"
	case Unsupported:
		return "unsupported"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Handler receives what a Conn finds. Sides are the caller's numbers for the two directions,
// 0 and 1; offsets count the bytes given to Feed for that side, from 0.
type Handler struct {
	// Data receives the plaintext of an application data record; end is the offset just past
	// the record's last byte. data belongs to the receiver.
	Data func(side int, data []byte, end int64)
	// State is called when the state changes, with the record that changed it: its side and
	// the offset just past its last byte (or of the last byte seen, at the end).
	State func(st State, side int, end int64)
}

// Info is what the hellos said about a connection.
type Info struct {
	// Version is the negotiated version (0x0303 for TLS 1.2, 0x0304 for TLS 1.3), and Suite
	// the cipher suite; both 0 until the ServerHello.
	Version, Suite uint16
	// SNI is the server name the client asked for, if it did.
	SNI string
	// ClientRandom is the ClientHello's random, which names the connection in a key log.
	ClientRandom []byte
	// Client is the side that sent the ClientHello (-1 before it).
	Client int
	// Missing lists the key log labels not found, when State is NoKeys.
	Missing []string
}

// String is "TLS 1.3 TLS_AES_128_GCM_SHA256" (or less, before the ServerHello).
func (i Info) String() string {
	if i.Version == 0 {
		return "TLS"
	}
	return VersionName(i.Version) + " " + SuiteName(i.Suite)
}

// Describe is "TLS 1.3, SNI broker.example, cipher TLS_AES_128_GCM_SHA256": what the hellos
// said, for a notice.
func (i Info) Describe() string {
	parts := []string{"TLS"}
	if i.Version != 0 {
		parts[0] = VersionName(i.Version)
	}
	if i.SNI != "" {
		parts = append(parts, "SNI "+i.SNI)
	}
	if i.Version != 0 {
		parts = append(parts, "cipher "+SuiteName(i.Suite))
	}
	return strings.Join(parts, ", ")
}

// DecryptError reports a record that did not authenticate: the secret is wrong.
type DecryptError struct {
	// FromClient says which side sent the record; Seq is its sequence number under Secret,
	// the key log label (or derived secret) its keys came from.
	FromClient bool
	Seq        uint64
	Secret     string
	Err        error
}

func (e *DecryptError) Error() string {
	who := "server"
	if e.FromClient {
		who = "client"
	}
	if errors.Is(e.Err, errAuth) {
		return fmt.Sprintf("authentication failed on the %s's record %d (keys from %s): the key log's secret for this connection is wrong",
			who, e.Seq, e.Secret)
	}
	return fmt.Sprintf("the %s's record %d (keys from %s): %v", who, e.Seq, e.Secret, e.Err)
}

func (e *DecryptError) Unwrap() error { return e.Err }

// maxPending bounds the bytes a direction holds while it waits (for the other direction's
// hello, or for secrets that a followed key log may still receive).
const maxPending = 1 << 20

// half is one direction.
type half struct {
	buf []byte
	off int64 // input offset of buf[0]
	hs  hsReader
	// prot removes the protection of this direction's records; nil while they are plaintext.
	prot *protector
	// secret is the TLS 1.3 traffic secret prot comes from, and label its name.
	secret []byte
	label  string
	// app: TLS 1.3 records use the application traffic keys (after this side's Finished).
	app bool
	// lost: bytes were lost, so this direction is no longer read.
	lost bool
	// hello: the first handshake message was seen.
	hello bool
}

// Conn decrypts one connection. It is not safe for concurrent use.
type Conn struct {
	keys  *KeyLog
	h     Handler
	half  [2]half
	info  Info
	suite suite
	// serverRandom, and the TLS 1.2 protectors waiting for each side's ChangeCipherSpec.
	serverRandom []byte
	next12       [2]*protector
	hasKeys      bool
	state        State
	err          error
	closed       bool
}

// NewConn returns a Conn that finds secrets in keys (which may be nil) and reports to h.
func NewConn(keys *KeyLog, h Handler) *Conn {
	return &Conn{keys: keys, h: h, info: Info{Client: -1}}
}

// State is the connection's state.
func (c *Conn) State() State { return c.state }

// Err says why the state is Failed.
func (c *Conn) Err() error { return c.err }

// Info is what the hellos said.
func (c *Conn) Info() Info { return c.info }

// Pending is the offset of the first byte of side that has not been consumed yet.
func (c *Conn) Pending(side int) int64 { return c.half[side].off }

// active reports whether records are still read.
func (c *Conn) active() bool { return c.state == Handshake || c.state == Decrypting }

// Feed gives the next bytes of one side.
func (c *Conn) Feed(side int, data []byte) {
	h := &c.half[side]
	if !c.active() || h.lost || c.closed {
		h.off += int64(len(data))
		return
	}
	if len(h.buf)+len(data) > maxPending+MaxRecordLen+RecordHeaderLen {
		c.fail(side, h.off+int64(len(h.buf)), fmt.Errorf("%s of TLS records waited for what they need and never got it", plural.Count(len(h.buf), "byte")))
		return
	}
	h.buf = append(h.buf, data...)
	c.run()
}

// Lost reports that bytes of side were lost: its records cannot be read any more.
func (c *Conn) Lost(side int, n int) {
	h := &c.half[side]
	if h.lost {
		return
	}
	end := h.off + int64(len(h.buf))
	h.lost, h.buf = true, nil
	if c.state == Handshake && !c.closed {
		c.fail(side, end, fmt.Errorf("%s of the TLS stream %s lost (not captured) before the handshake was complete", plural.Count(n, "byte"), plural.Pick(n, "was", "were")))
	}
}

// Close ends the connection: what waits for secrets that never came is decided.
func (c *Conn) Close() {
	if c.closed {
		return
	}
	c.closed = true
	if c.state == Handshake && c.info.Version != 0 && !c.hasKeys {
		side := c.info.Client
		if side < 0 {
			side = 0
		}
		c.noKeys(side, c.half[side].off+int64(len(c.half[side].buf)))
	}
	c.half[0].buf, c.half[1].buf = nil, nil
}

func (c *Conn) setState(st State, side int, end int64) {
	if c.state == st {
		return
	}
	c.state = st
	if st != Handshake && st != Decrypting {
		c.half[0].buf, c.half[1].buf = nil, nil
	}
	if c.h.State != nil {
		c.h.State(st, side, end)
	}
}

func (c *Conn) fail(side int, end int64, err error) {
	if !c.active() {
		return
	}
	c.err = err
	c.setState(Failed, side, end)
}

// run reads the records of both sides until neither can go on.
func (c *Conn) run() {
	for progress := true; progress && c.active(); {
		progress = false
		for s := range 2 {
			if c.step(s) {
				progress = true
			}
		}
	}
}

// step reads the complete records of one side; it reports whether it read any.
func (c *Conn) step(s int) bool {
	h := &c.half[s]
	read := false
	for c.active() && !h.lost {
		rec, n, err := ParseRecord(h.buf)
		if err != nil {
			c.fail(s, h.off+int64(min(len(h.buf), RecordHeaderLen)), err)
			return read
		}
		if n == 0 {
			break
		}
		end := h.off + int64(n)
		if !c.record(s, rec, end) || !c.active() {
			break // waits for the other side or for secrets, or the end
		}
		h.buf = h.buf[n:]
		h.off = end
		read = true
	}
	if len(h.buf) == 0 {
		h.buf = nil
	}
	return read
}

// record handles one record; false means it cannot be handled yet and stays in the buffer.
func (c *Conn) record(s int, r Record, end int64) bool {
	h := &c.half[s]
	if !h.hello && r.Type != TypeHandshake {
		if r.Type == TypeApplicationData && c.info.ClientRandom == nil {
			c.fail(s, end, errors.New("the connection's first record is application data: its handshake was not captured"))
			return false
		}
		if c.info.Version == 0 && r.Type != TypeAlert {
			// The other side's hello has not been read yet.
			return false
		}
	}
	if c.info.Version == 0 {
		switch r.Type {
		case TypeHandshake:
			return c.plainHandshake(s, r, end)
		case TypeAlert:
			return true
		case TypeChangeCipherSpec:
			// From the server before its ServerHello: only after a HelloRetryRequest, in
			// TLS 1.3's middlebox compatibility mode. From the client, it waits for the
			// ServerHello, which says what it means.
			return s != c.info.Client && c.info.Client >= 0
		}
		return false // data before the ServerHello was read
	}
	if c.suite.tls13 {
		return c.record13(s, r, end)
	}
	return c.record12(s, r, end)
}

// plainHandshake reads handshake messages sent in the clear: the hellos.
func (c *Conn) plainHandshake(s int, r Record, end int64) bool {
	h := &c.half[s]
	err := h.hs.feed(r.Payload, func(typ byte, body []byte) error {
		first := !h.hello
		h.hello = true
		switch typ {
		case hsClientHello:
			ch, err := parseClientHello(body)
			if err != nil {
				return err
			}
			if c.info.ClientRandom == nil {
				c.info.ClientRandom, c.info.SNI, c.info.Client = ch.random, ch.sni, s
			}
		case hsServerHello:
			sh, err := parseServerHello(body)
			if err != nil {
				return err
			}
			if c.info.Client < 0 {
				c.info.Client = 1 - s
			}
			if sh.retry {
				return nil // a second ClientHello follows, with the same random
			}
			if c.info.Version == 0 {
				c.serverHello(s, sh, end)
			}
		default:
			if first {
				return fmt.Errorf("the first handshake message is of type %d, not a hello", typ)
			}
		}
		return nil
	})
	if err != nil {
		c.fail(s, end, err)
	}
	return true
}

// serverHello takes the version and suite and decides whether the connection can be read.
func (c *Conn) serverHello(s int, sh *serverHello, end int64) {
	c.info.Version, c.info.Suite, c.serverRandom = sh.version, sh.suite, sh.random
	st, ok := suites[sh.suite]
	if !ok || (sh.version == 0x0304) != st.tls13 || (sh.version != 0x0303 && sh.version != 0x0304) {
		c.setState(Unsupported, s, end)
		return
	}
	c.suite = st
	if c.info.ClientRandom == nil {
		c.fail(s, end, errors.New("the ClientHello was not captured, so the connection's secrets cannot be found"))
		return
	}
	if !c.findKeys() && c.active() && !c.keys.following() {
		// Secrets can still come from a followed key log; from anything else, not.
		c.noKeys(s, end)
	}
}

// findKeys looks the connection's secrets up and prepares the record protectors; it reports
// whether it found them all.
func (c *Conn) findKeys() bool {
	if c.hasKeys {
		return true
	}
	cr := c.info.ClientRandom
	client := c.info.Client
	if !c.suite.tls13 {
		master, ok := c.keys.Lookup(LabelClientRandom, cr)
		if !ok {
			c.info.Missing = []string{LabelClientRandom}
			return false
		}
		if len(master) != 48 {
			c.fail(client, c.half[client].off, fmt.Errorf("the key log's CLIENT_RANDOM secret has %s, not 48", plural.Count(len(master), "byte")))
			return false
		}
		cp, sp, err := keys12(c.suite, master, cr, c.serverRandom)
		if err != nil {
			c.fail(client, c.half[client].off, err)
			return false
		}
		c.next12[client], c.next12[1-client] = cp, sp
	} else {
		labels := [2][2]string{{LabelClientHandshake, LabelClientTraffic0}, {LabelServerHandshake, LabelServerTraffic0}}
		var secrets [2][2][]byte
		c.info.Missing = nil
		for i := range labels {
			for j, l := range labels[i] {
				sec, ok := c.keys.Lookup(l, cr)
				if !ok {
					c.info.Missing = append(c.info.Missing, l)
				}
				secrets[i][j] = sec
			}
		}
		if len(c.info.Missing) > 0 {
			return false
		}
		for i, side := range []int{client, 1 - client} {
			h := &c.half[side]
			p, err := keys13(c.suite, secrets[i][0])
			if err != nil {
				c.fail(side, h.off, err)
				return false
			}
			h.prot, h.secret, h.label = p, secrets[i][1], labels[i][0]
		}
	}
	c.info.Missing = nil
	c.hasKeys = true
	c.setState(Decrypting, client, c.half[client].off)
	return true
}

// needKeys is called by a record that needs the secrets. It reports whether they are there;
// when they are not, the connection waits for a followed key log to receive them, until the
// client's first encrypted record (the client has written its secrets before sending it).
func (c *Conn) needKeys(s int, end int64) bool {
	if c.findKeys() {
		return true
	}
	if c.active() && (s == c.info.Client || len(c.half[s].buf) > maxPending) {
		c.noKeys(s, end)
	}
	return false
}

func (c *Conn) noKeys(s int, end int64) {
	if len(c.info.Missing) == 0 {
		c.info.Missing = []string{LabelClientRandom}
		if c.suite.tls13 {
			c.info.Missing = []string{LabelClientHandshake, LabelServerHandshake, LabelClientTraffic0, LabelServerTraffic0}
		}
	}
	c.setState(NoKeys, s, end)
}

// open decrypts a record of side s, or fails the connection.
func (c *Conn) open(s int, p *protector, r Record, end int64, secret string) (byte, []byte, bool) {
	seq := p.seq
	typ, plain, err := p.open(r.Header, r.Payload)
	if err != nil {
		c.fail(s, end, &DecryptError{FromClient: s == c.info.Client, Seq: seq, Secret: secret, Err: err})
		return 0, nil, false
	}
	return typ, plain, true
}

func (c *Conn) record12(s int, r Record, end int64) bool {
	h := &c.half[s]
	if h.prot == nil {
		switch r.Type {
		case TypeHandshake:
			return c.plainHandshake(s, r, end)
		case TypeAlert:
			return true
		case TypeChangeCipherSpec:
			if !c.needKeys(s, end) {
				return false
			}
			h.prot, h.label = c.next12[s], LabelClientRandom
			return true
		}
		c.fail(s, end, fmt.Errorf("a record of type %d before ChangeCipherSpec", r.Type))
		return false
	}
	typ, plain, ok := c.open(s, h.prot, r, end, h.label)
	if !ok {
		return false
	}
	return c.content(s, typ, plain, end)
}

func (c *Conn) record13(s int, r Record, end int64) bool {
	h := &c.half[s]
	switch r.Type {
	case TypeChangeCipherSpec:
		return true // middlebox compatibility (RFC 8446 appendix D.4)
	case TypeHandshake:
		if h.prot != nil && h.app {
			c.fail(s, end, errors.New("a handshake record in the clear after the handshake"))
			return false
		}
		return c.plainHandshake(s, r, end)
	case TypeAlert:
		return true
	case TypeApplicationData:
	default:
		c.fail(s, end, fmt.Errorf("a record of type %d", r.Type))
		return false
	}
	if !c.needKeys(s, end) {
		return false
	}
	typ, plain, ok := c.open(s, h.prot, r, end, h.label)
	if !ok {
		return false
	}
	return c.content(s, typ, plain, end)
}

// content handles a decrypted record.
func (c *Conn) content(s int, typ byte, plain []byte, end int64) bool {
	h := &c.half[s]
	switch typ {
	case TypeApplicationData:
		if c.suite.tls13 && !h.app {
			c.fail(s, end, errors.New("application data before the handshake's end (0-RTT early data is not decrypted)"))
			return false
		}
		if len(plain) > 0 && c.h.Data != nil {
			c.h.Data(s, plain, end)
		}
	case TypeHandshake:
		// Keys change at record boundaries (RFC 8446 section 5.1): after this record.
		var finished, update bool
		err := h.hs.feed(plain, func(typ byte, body []byte) error {
			switch typ {
			case hsFinished:
				finished = true
			case hsKeyUpdate:
				if len(body) != 1 {
					return errors.New("malformed KeyUpdate")
				}
				update = true
			}
			return nil
		})
		if err != nil {
			c.fail(s, end, err)
			return false
		}
		if c.suite.tls13 {
			switch {
			case finished && !h.app:
				h.app = true
				h.label = LabelClientTraffic0
				if s != c.info.Client {
					h.label = LabelServerTraffic0
				}
				return c.rekey(s, end)
			case update && h.app:
				h.secret = nextSecret(c.suite, h.secret)
				h.label = "a KeyUpdate"
				return c.rekey(s, end)
			}
		}
	case TypeAlert, TypeChangeCipherSpec, TypeHeartbeat:
	default:
		c.fail(s, end, fmt.Errorf("decrypted record of type %d", typ))
		return false
	}
	return true
}

// rekey switches a TLS 1.3 side to the keys of h.secret.
func (c *Conn) rekey(s int, end int64) bool {
	h := &c.half[s]
	p, err := keys13(c.suite, h.secret)
	if err != nil {
		c.fail(s, end, err)
		return false
	}
	h.prot = p
	return true
}

// ClientRandomHex is the client random in hex, shortened, for messages.
func (i Info) ClientRandomHex() string {
	if len(i.ClientRandom) < 8 {
		return hex.EncodeToString(i.ClientRandom)
	}
	return hex.EncodeToString(i.ClientRandom[:8]) + "…"
}
