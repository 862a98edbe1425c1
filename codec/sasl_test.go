package codec

import (
	"bytes"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestSASLTokens(t *testing.T) {
	tests := []struct {
		name, token, mech string
		want              map[string]string // node name -> value when shown
		secret            string            // the secret that must not appear when redacted
	}{
		{"plain", "\x00alice\x00s3cret-pw", mechPlain, map[string]string{"authzid": "", "user": "alice", "password": "s3cret-pw"}, "s3cret-pw"},
		{"scram client-first", "n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL", mechScram, map[string]string{"gs2 header": "n,,", "user": "alice", "nonce": "fyko+d2lbbFgONRv9qkxdawL"}, ""},
		{"scram server-first", "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096", mechScram, map[string]string{"salt": "QSXCR+Q6sek8bf92", "iterations": "4096"}, ""},
		{"scram client-final", "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=", mechScram, map[string]string{"channel binding": "biws", "proof": "v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="}, "v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="},
		{"scram server-final", "v=rmF9pqV8S7suAoZWja4dJRkFsKQ=", mechScram, map[string]string{"server signature": "rmF9pqV8S7suAoZWja4dJRkFsKQ="}, "rmF9pqV8S7suAoZWja4dJRkFsKQ="},
		{"oauthbearer", "n,,\x01auth=Bearer eyJhbGciOi.payload.sig\x01host=broker\x01\x01", mechOAuthBearer, map[string]string{"auth": "Bearer eyJhbGciOi.payload.sig", "host": "broker"}, "eyJhbGciOi"},
		{"gssapi", "\x60\x82\x02\x1a\x06\x09\x2a\x86\x48", mechOpaque, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, show := range []bool{true, false} {
				data := []byte(tt.token)
				parts, mech := saslToken(data, 100, show)
				if mech != tt.mech {
					t.Fatalf("mechanism %s, want %s", mech, tt.mech)
				}
				if d := checkTilingAt(parts, 100, len(data)); d != "" {
					t.Fatal(d)
				}
				for _, p := range parts {
					w, ok := tt.want[p.Name]
					if !ok {
						continue
					}
					got, _ := p.Value.(string)
					if show && got != w {
						t.Errorf("%s = %q, want %q", p.Name, got, w)
					}
					if !show && tt.secret != "" && strings.Contains(got, tt.secret) {
						t.Errorf("%s shows the secret %q", p.Name, got)
					}
				}
			}
		})
	}
}

// checkTilingAt requires nodes to cover [base, base+size) in order.
func checkTilingAt(nodes []*Node, base, size int) string {
	pos := base
	for _, n := range nodes {
		if n.Offset != pos {
			return n.Name + " does not start where the previous node ended"
		}
		pos += n.Size
	}
	if pos != base+size {
		return "nodes do not cover the token"
	}
	return ""
}

// TestSaslAuthenticateRedacted: a PLAIN password inside SaslAuthenticate appears nowhere: not in
// the tree, not in the bytes given to hex dumps.
func TestSaslAuthenticateRedacted(t *testing.T) {
	c := testCodec(t)
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version = 2
	req.SASLAuthBytes = []byte("\x00bob\x00hunter2hunter2")
	fr := frame(36, 2, true, false, 4, req.AppendTo(nil))
	m := c.DecodeRequest(fr)
	if len(m.Warnings) > 0 {
		t.Fatal(m.Warnings)
	}
	Walk(m.Fields, func(n *Node, _ int) bool {
		if s, ok := n.Value.(string); ok && strings.Contains(s, "hunter2") {
			t.Errorf("%s shows the password", n.Name)
		}
		if b, ok := n.Value.([]byte); ok && bytes.Contains(b, []byte("hunter2")) {
			t.Errorf("%s shows the password", n.Name)
		}
		return true
	})
	if bytes.Contains(m.Redact(fr), []byte("hunter2")) {
		t.Error("Redact leaves the password in the frame bytes")
	}
	if u := Find(m.Fields, "user"); u == nil || u.Value != "bob" {
		t.Errorf("user = %v", u)
	}
	c.ShowSecrets = true
	if p := Find(c.DecodeRequest(fr).Fields, "password"); p == nil || p.Value != "hunter2hunter2" {
		t.Errorf("with ShowSecrets, password = %v", p)
	}
}

// TestHmacRedacted: delegation token HMACs are credentials too.
func TestHmacRedacted(t *testing.T) {
	c := testCodec(t)
	req := kmsg.NewPtrRenewDelegationTokenRequest()
	req.Version = 2
	req.HMAC = []byte("secret-hmac-bytes")
	fr := frame(39, 2, true, false, 4, req.AppendTo(nil))
	m := c.DecodeRequest(fr)
	if n := Find(m.Fields, "Hmac"); n == nil || n.Value != Redacted || !n.Secret {
		t.Errorf("Hmac = %+v", n)
	}
	if bytes.Contains(m.Redact(fr), []byte("secret-hmac")) {
		t.Error("Redact leaves the HMAC in the frame bytes")
	}
}
