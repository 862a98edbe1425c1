package tlsdec

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	certOnce sync.Once
	cert     tls.Certificate
)

// testCert is a self-signed ECDSA P-256 certificate, made once.
func testCert(t testing.TB) tls.Certificate {
	certOnce.Do(func() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "broker.example"},
			DNSNames: []string{"broker.example"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			panic(err)
		}
		cert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	})
	return cert
}

// chunk is what one side wrote to the connection, in the order of the writes.
type chunk struct {
	side int // 0: client, 1: server
	data []byte
}

type wire struct {
	mu     sync.Mutex
	chunks []chunk
}

type recConn struct {
	net.Conn
	side int
	w    *wire
}

func (c recConn) Write(p []byte) (int, error) {
	c.w.mu.Lock()
	c.w.chunks = append(c.w.chunks, chunk{c.side, bytes.Clone(p)})
	c.w.mu.Unlock()
	return c.Conn.Write(p)
}

// session is a real TLS connection made by crypto/tls, as it went over the wire.
type session struct {
	chunks []chunk
	keyLog []byte
	// sent holds what each side wrote as application data.
	sent  [2][]byte
	state tls.ConnectionState
}

type sessionOptions struct {
	client, server *tls.Config
	// msgs are what the client, then the server, write (each one a Write call).
	clientMsgs, serverMsgs [][]byte
}

// runSession connects a crypto/tls client and server over loopback TCP and records the bytes
// each one writes.
func runSession(t testing.TB, o sessionOptions) *session {
	t.Helper()
	var keyLog bytes.Buffer
	var klMu sync.Mutex
	ccfg, scfg := o.client.Clone(), o.server.Clone()
	ccfg.KeyLogWriter = writerFunc(func(p []byte) (int, error) {
		klMu.Lock()
		defer klMu.Unlock()
		return keyLog.Write(p)
	})
	ccfg.InsecureSkipVerify = true
	scfg.Certificates = []tls.Certificate{testCert(t)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback TCP: %v", err)
	}
	defer ln.Close()
	w := &wire{}
	s := &session{}
	for _, m := range o.clientMsgs {
		s.sent[0] = append(s.sent[0], m...)
	}
	for _, m := range o.serverMsgs {
		s.sent[1] = append(s.sent[1], m...)
	}
	errc := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			errc <- err
			return
		}
		tc := tls.Server(recConn{c, 1, w}, scfg)
		defer tc.Close()
		buf := make([]byte, len(s.sent[0]))
		if _, err := io.ReadFull(tc, buf); err != nil {
			errc <- fmt.Errorf("server read: %w", err)
			return
		}
		for _, m := range o.serverMsgs {
			if _, err := tc.Write(m); err != nil {
				errc <- err
				return
			}
		}
		// Wait for the client's close_notify.
		_, err = io.Copy(io.Discard, tc)
		errc <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(recConn{c, 0, w}, ccfg)
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if err := tc.Handshake(); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	for _, m := range o.clientMsgs {
		if _, err := tc.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, len(s.sent[1]))
	if _, err := io.ReadFull(tc, buf); err != nil {
		t.Fatalf("client read: %v", err)
	}
	s.state = tc.ConnectionState()
	tc.Close()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	s.chunks = w.chunks
	w.mu.Unlock()
	klMu.Lock()
	s.keyLog = keyLog.Bytes()
	klMu.Unlock()
	return s
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// result is what a Conn handed out.
type result struct {
	data   [2][]byte
	states []State
	ends   [2][]int64
}

// decrypt feeds a session's bytes to a Conn, each write cut into random pieces; sides are
// numbered with the client as 1 when swap is set.
func decrypt(t testing.TB, s *session, keys *KeyLog, swap bool, seed uint64) (*Conn, *result) {
	t.Helper()
	r := &result{}
	var fed [2]int64
	c := NewConn(keys, Handler{
		Data: func(side int, data []byte, end int64) {
			if end > fed[side] || (len(r.ends[side]) > 0 && end <= r.ends[side][len(r.ends[side])-1]) {
				t.Errorf("side %d: record end %d after %d bytes fed, previous end %v", side, end, fed[side], r.ends[side])
			}
			r.data[side] = append(r.data[side], data...)
			r.ends[side] = append(r.ends[side], end)
		},
		State: func(st State, side int, end int64) {
			r.states = append(r.states, st)
			if end > fed[side] {
				t.Errorf("state %v at offset %d, after %d bytes", st, end, fed[side])
			}
		},
	})
	rng := mrand.New(mrand.NewPCG(seed, 1))
	for _, ch := range s.chunks {
		side := ch.side
		if swap {
			side = 1 - side
		}
		for b := ch.data; len(b) > 0; {
			n := min(len(b), 1+rng.IntN(400))
			if rng.IntN(3) == 0 {
				n = len(b)
			}
			fed[side] += int64(n)
			c.Feed(side, b[:n])
			b = b[n:]
		}
	}
	c.Close()
	return c, r
}

func mustKeys(t testing.TB, b []byte) *KeyLog {
	t.Helper()
	k, err := ParseKeyLog(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func appMessages() (client, server [][]byte) {
	big := make([]byte, 70000) // several records
	for i := range big {
		big[i] = byte(i * 7)
	}
	return [][]byte{[]byte("request one"), big, []byte("request three")},
		[][]byte{[]byte("response"), big[:20000]}
}

// Real sessions of crypto/tls, each version and AEAD it offers, decrypt to exactly what each
// side wrote.
func TestConnCryptoTLS(t *testing.T) {
	cm, sm := appMessages()
	cases := []struct {
		name    string
		version uint16
		suite   uint16
		hrr     bool
	}{
		{"TLS 1.2 AES-128-GCM", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, false},
		{"TLS 1.2 AES-256-GCM", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, false},
		{"TLS 1.2 ChaCha20-Poly1305", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, false},
		{"TLS 1.3", tls.VersionTLS13, 0, false},
		{"TLS 1.3 HelloRetryRequest", tls.VersionTLS13, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ccfg := &tls.Config{ServerName: "broker.example", MinVersion: tc.version, MaxVersion: tc.version}
			scfg := &tls.Config{MinVersion: tc.version, MaxVersion: tc.version}
			if tc.suite != 0 {
				ccfg.CipherSuites = []uint16{tc.suite}
			}
			if tc.hrr {
				// The client's key share is X25519; the server wants P-256.
				ccfg.CurvePreferences = []tls.CurveID{tls.X25519, tls.CurveP256}
				scfg.CurvePreferences = []tls.CurveID{tls.CurveP256}
			}
			s := runSession(t, sessionOptions{client: ccfg, server: scfg, clientMsgs: cm, serverMsgs: sm})
			if tc.hrr && !bytes.Contains(serverBytes(s), helloRetryRandom[:]) {
				t.Fatal("the server sent no HelloRetryRequest")
			}
			keys := mustKeys(t, s.keyLog)
			for i, swap := range []bool{false, true} {
				c, r := decrypt(t, s, keys, swap, uint64(i))
				if c.State() != Decrypting {
					t.Fatalf("state %v: %v", c.State(), c.Err())
				}
				client := 0
				if swap {
					client = 1
				}
				if !bytes.Equal(r.data[client], s.sent[0]) || !bytes.Equal(r.data[1-client], s.sent[1]) {
					t.Fatalf("decrypted %d and %d bytes, want %d and %d", len(r.data[client]), len(r.data[1-client]), len(s.sent[0]), len(s.sent[1]))
				}
				info := c.Info()
				if info.Version != s.state.Version || info.Suite != s.state.CipherSuite || info.SNI != "broker.example" || info.Client != client {
					t.Errorf("info %+v; connection %x %x", info, s.state.Version, s.state.CipherSuite)
				}
				want := VersionName(s.state.Version) + " " + tls.CipherSuiteName(s.state.CipherSuite)
				if info.String() != want {
					t.Errorf("info %q, want %q", info.String(), want)
				}
			}
		})
	}
}

func serverBytes(s *session) []byte {
	var b []byte
	for _, c := range s.chunks {
		if c.side == 1 {
			b = append(b, c.data...)
		}
	}
	return b
}

// TLS 1.2 and 1.3 resumed sessions (an abbreviated TLS 1.2 handshake, where the server
// changes cipher spec first; a TLS 1.3 PSK handshake).
func TestConnResumption(t *testing.T) {
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(VersionName(v), func(t *testing.T) {
			cache := tls.NewLRUClientSessionCache(4)
			ccfg := &tls.Config{ServerName: "broker.example", MaxVersion: v, ClientSessionCache: cache}
			scfg := &tls.Config{MaxVersion: v}
			scfg.SetSessionTicketKeys([][32]byte{{1, 2, 3}})
			cm, sm := [][]byte{[]byte("first")}, [][]byte{[]byte("answer")}
			first := runSession(t, sessionOptions{client: ccfg, server: scfg, clientMsgs: cm, serverMsgs: sm})
			s := runSession(t, sessionOptions{client: ccfg, server: scfg, clientMsgs: cm, serverMsgs: sm})
			if !s.state.DidResume {
				t.Fatal("the second session was not resumed")
			}
			keyLog := s.keyLog
			if v == tls.VersionTLS12 {
				// crypto/tls logs no CLIENT_RANDOM line for a resumed TLS 1.2 session (NSS
				// does): the master secret is the first session's, the random the new one.
				master := strings.Fields(string(first.keyLog))[2]
				random := s.chunks[0].data[11 : 11+32]
				keyLog = fmt.Appendf(nil, "CLIENT_RANDOM %x %s\n", random, master)
			}
			c, r := decrypt(t, s, mustKeys(t, keyLog), false, 7)
			if c.State() != Decrypting || string(r.data[0]) != "first" || string(r.data[1]) != "answer" {
				t.Fatalf("state %v (%v): %q %q", c.State(), c.Err(), r.data[0], r.data[1])
			}
		})
	}
}

// flip changes one hex digit of each secret of a key log.
func flip(keyLog []byte) []byte {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(keyLog)), "\n") {
		f := strings.Fields(l)
		d := "0"
		if f[2][0] == '0' {
			d = "1"
		}
		out = append(out, f[0]+" "+f[1]+" "+d+f[2][1:])
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

// Without the secrets, with wrong ones, with some of them, after lost bytes, with a suite
// that cannot be decrypted: one final state, and no plaintext.
func TestConnCannotDecrypt(t *testing.T) {
	cm, sm := [][]byte{[]byte("secret request")}, [][]byte{[]byte("secret response")}
	s12 := runSession(t, sessionOptions{client: &tls.Config{MaxVersion: tls.VersionTLS12}, server: &tls.Config{}, clientMsgs: cm, serverMsgs: sm})
	s13 := runSession(t, sessionOptions{client: &tls.Config{}, server: &tls.Config{}, clientMsgs: cm, serverMsgs: sm})
	cbc := runSession(t, sessionOptions{
		client: &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}},
		server: &tls.Config{CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}}, clientMsgs: cm, serverMsgs: sm})
	only := func(s *session, prefix string) []byte {
		var out []byte
		for _, l := range strings.SplitAfter(string(s.keyLog), "\n") {
			if strings.HasPrefix(l, prefix) {
				out = append(out, l...)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		s       *session
		keys    []byte
		state   State
		missing int
		err     string
	}{
		{"TLS 1.2 no key log", s12, nil, NoKeys, 1, ""},
		{"TLS 1.3 no key log", s13, nil, NoKeys, 4, ""},
		{"TLS 1.3 other connection's keys", s13, s12.keyLog, NoKeys, 4, ""},
		{"TLS 1.3 traffic secrets only", s13, only(s13, "CLIENT_TRAFFIC"), NoKeys, 3, ""},
		{"TLS 1.2 wrong secret", s12, flip(s12.keyLog), Failed, 0, "authentication failed on the client's record 0 (keys from CLIENT_RANDOM)"},
		{"TLS 1.3 wrong secrets", s13, flip(s13.keyLog), Failed, 0, "authentication failed on the server's record 0 (keys from SERVER_HANDSHAKE_TRAFFIC_SECRET)"},
		{"TLS 1.3 wrong traffic secret", s13, append(append(only(s13, "CLIENT_"), only(s13, "SERVER_HANDSHAKE")...), flip(only(s13, "SERVER_TRAFFIC"))...),
			Failed, 0, "the server's record 0 (keys from SERVER_TRAFFIC_SECRET_0)"},
		{"CBC", cbc, cbc.keyLog, Unsupported, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := NewKeyLog()
			if tc.keys != nil {
				keys = mustKeys(t, tc.keys)
			}
			c, r := decrypt(t, tc.s, keys, false, 3)
			if c.State() != tc.state {
				t.Fatalf("state %v (%v), want %v", c.State(), c.Err(), tc.state)
			}
			if len(r.states) != 1 && !(len(r.states) == 2 && r.states[0] == Decrypting) {
				t.Errorf("states %v", r.states)
			}
			if len(r.data[0])+len(r.data[1]) > 0 && tc.name != "TLS 1.3 wrong traffic secret" {
				t.Errorf("plaintext: %q %q", r.data[0], r.data[1])
			}
			if n := len(c.Info().Missing); n != tc.missing {
				t.Errorf("missing %v", c.Info().Missing)
			}
			var de *DecryptError
			if tc.state == Failed && !errors.As(c.Err(), &de) {
				t.Errorf("error %v is not a DecryptError", c.Err())
			}
			if tc.err != "" && !strings.Contains(fmt.Sprint(c.Err()), tc.err) {
				t.Errorf("error %q, want %q", c.Err(), tc.err)
			}
		})
	}

	// Bytes lost before the handshake is complete.
	c := NewConn(mustKeys(t, s13.keyLog), Handler{})
	c.Feed(0, s13.chunks[0].data)
	c.Lost(1, 100)
	if c.State() != Failed || !strings.Contains(c.Err().Error(), "100 bytes") {
		t.Errorf("after a loss: %v %v", c.State(), c.Err())
	}
	// A connection whose handshake was not captured.
	c = NewConn(nil, Handler{})
	c.Feed(0, []byte{23, 3, 3, 0, 20})
	c.Feed(0, make([]byte, 20))
	if c.State() != Failed || !strings.Contains(c.Err().Error(), "handshake was not captured") {
		t.Errorf("mid-stream: %v %v", c.State(), c.Err())
	}
	// Not TLS after all.
	c = NewConn(nil, Handler{})
	c.Feed(0, []byte{22, 3, 1, 0, 5, 99, 0, 0, 1, 0})
	if c.State() != Failed || !strings.Contains(c.Err().Error(), "not a hello") {
		t.Errorf("not a hello: %v %v", c.State(), c.Err())
	}
}

// A followed key log that receives the secrets after the ServerHello was read: the
// connection waits for them (a live capture races the application writing its key log).
func TestConnWaitsForFollowedKeyLog(t *testing.T) {
	cm, sm := [][]byte{[]byte("late request")}, [][]byte{[]byte("late response")}
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(VersionName(v), func(t *testing.T) {
			s := runSession(t, sessionOptions{client: &tls.Config{MaxVersion: v}, server: &tls.Config{}, clientMsgs: cm, serverMsgs: sm})
			name := t.TempDir() + "/keys.log"
			if err := writeFile(name, nil); err != nil {
				t.Fatal(err)
			}
			keys, err := OpenKeyLog(name, true)
			if err != nil {
				t.Fatal(err)
			}
			var got [2][]byte
			c := NewConn(keys, Handler{Data: func(side int, d []byte, _ int64) { got[side] = append(got[side], d...) }})
			// The server's first flight: hello, certificate, and in TLS 1.3 encrypted records.
			c.Feed(0, s.chunks[0].data)
			c.Feed(1, s.chunks[1].data)
			if c.State() != Handshake {
				t.Fatalf("state %v before the secrets are written", c.State())
			}
			if err := writeFile(name, s.keyLog); err != nil {
				t.Fatal(err)
			}
			keys.follow.last = time.Time{}
			for _, ch := range s.chunks[2:] {
				c.Feed(ch.side, ch.data)
			}
			if c.State() != Decrypting || string(got[0]) != "late request" || string(got[1]) != "late response" {
				t.Fatalf("state %v (%v): %q %q", c.State(), c.Err(), got[0], got[1])
			}
		})
	}
}
