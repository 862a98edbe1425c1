package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASL users of the SASL scenarios. The passwords are in the clear in the
// PLAIN capture, so that tests can check that kdissect redacts them.
const (
	plainUser    = "alice"
	plainPass    = "alice-secret-pw"
	scramUser    = "bob"
	scramPass    = "bob-secret-pw"
	scram512User = "dave"
	scram512Pass = "dave-secret-pw"
)

// kgoSASL runs littleFlow on one broker on 9092 that requires SASL, with
// user (mechanism method, password pass) as its only user.
func kgoSASL(ctx context.Context, file, topic, clientPrefix, method, user, pass string, mech sasl.Mechanism) error {
	ports := []int{9092}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic), kfake.EnableSASL(), kfake.Superuser(method, user, pass))
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		return littleFlow(ctx, seeds, topic, 1, clientPrefix, kgo.SASL(mech))
	})
}

// kgoSASLPlain: SASL PLAIN (SaslHandshake v1 + SaslAuthenticate) on every
// connection, then littleFlow.
func kgoSASLPlain(ctx context.Context, file string) error {
	return kgoSASL(ctx, file, "kdissect-sasl-plain", "kdissect-sasl-plain", "PLAIN", plainUser, plainPass,
		plain.Auth{User: plainUser, Pass: plainPass}.AsMechanism())
}

// kgoSASLScram: SASL SCRAM-SHA-256 on every connection, then littleFlow.
func kgoSASLScram(ctx context.Context, file string) error {
	return kgoSASL(ctx, file, "kdissect-sasl-scram", "kdissect-sasl-scram", "SCRAM-SHA-256", scramUser, scramPass,
		scram.Auth{User: scramUser, Pass: scramPass}.AsSha256Mechanism())
}

// tlsPort is the port of the TLS scenarios and of their plaintext twin.
const tlsPort = 9093

// selfSigned makes a self-signed ECDSA P-256 certificate for 127.0.0.1 and
// localhost, and returns it with a pool that trusts it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kdissect test broker", Organization: []string{"kdissect"}},
		NotBefore:             time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}

// tlsCase is one TLS scenario's client settings.
type tlsCase struct {
	version uint16 // pinned as both the minimum and the maximum
	suite   uint16 // the TLS 1.2 suite to offer, and the suite to expect
	// user and pass, if set, are a SCRAM-SHA-512 user.
	user, pass string
}

// keylogFile returns the key log file that goes with a capture:
// kgo-tls12.pcap -> kgo-tls12.keylog.
func keylogFile(file string) string {
	return strings.TrimSuffix(file, filepath.Ext(file)) + ".keylog"
}

// kgoTLS: one broker with a TLS listener on tlsPort (self-signed ECDSA
// certificate); the clients pin the TLS version (and for TLS 1.2 the cipher
// suite), write their session secrets to the capture's .keylog file in NSS
// key log format, and run littleFlow. gen fails if a connection
// negotiates a suite other than tc.suite.
func kgoTLS(ctx context.Context, file, topic, clientPrefix string, tc tlsCase) error {
	cert, pool, err := selfSigned()
	if err != nil {
		return err
	}
	opts := []kfake.Opt{
		kfake.SeedTopics(1, topic),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}),
	}
	if tc.user != "" {
		opts = append(opts, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", tc.user, tc.pass))
	}
	ports := []int{tlsPort}
	c, seeds, err := newCluster(ports, opts...)
	if err != nil {
		return err
	}
	defer c.Close()

	keylog, err := os.Create(keylogFile(file))
	if err != nil {
		return err
	}
	defer keylog.Close()
	cfg := &tls.Config{
		RootCAs:      pool,
		MinVersion:   tc.version,
		MaxVersion:   tc.version,
		KeyLogWriter: keylog,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if cs.Version != tc.version || cs.CipherSuite != tc.suite {
				return fmt.Errorf("negotiated %s with %s, want %s with %s",
					tls.VersionName(cs.Version), tls.CipherSuiteName(cs.CipherSuite),
					tls.VersionName(tc.version), tls.CipherSuiteName(tc.suite))
			}
			return nil
		},
	}
	if tc.version == tls.VersionTLS12 {
		cfg.CipherSuites = []uint16{tc.suite}
	}
	clientOpts := []kgo.Opt{kgo.DialTLSConfig(cfg)}
	if tc.user != "" {
		clientOpts = append(clientOpts, kgo.SASL(scram.Auth{User: tc.user, Pass: tc.pass}.AsSha512Mechanism()))
	}
	err = withCapture(ctx, file, ports, func(ctx context.Context) error {
		return littleFlow(ctx, seeds, topic, 1, clientPrefix, clientOpts...)
	})
	if cerr := keylog.Close(); err == nil {
		err = cerr
	}
	return err
}

func kgoTLS12AES128(ctx context.Context, file string) error {
	return kgoTLS(ctx, file, "kdissect-tls", "kdissect-tls12", tlsCase{
		version: tls.VersionTLS12, suite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256})
}

func kgoTLS12AES256(ctx context.Context, file string) error {
	return kgoTLS(ctx, file, "kdissect-tls", "kdissect-tls12-aes256", tlsCase{
		version: tls.VersionTLS12, suite: tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384})
}

func kgoTLS12ChaCha(ctx context.Context, file string) error {
	return kgoTLS(ctx, file, "kdissect-tls", "kdissect-tls12-chacha", tlsCase{
		version: tls.VersionTLS12, suite: tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256})
}

// kgoTLS13: Go ignores CipherSuites in TLS 1.3; on a CPU with AES
// instructions both ends prefer TLS_AES_128_GCM_SHA256.
func kgoTLS13(ctx context.Context, file string) error {
	return kgoTLS(ctx, file, "kdissect-tls", "kdissect-tls13", tlsCase{
		version: tls.VersionTLS13, suite: tls.TLS_AES_128_GCM_SHA256})
}

// kgoTLS13ChaCha runs with GODEBUG=cpu.aes=off (see scenarios), so both
// ends prefer TLS_CHACHA20_POLY1305_SHA256.
func kgoTLS13ChaCha(ctx context.Context, file string) error {
	return kgoTLS(ctx, file, "kdissect-tls", "kdissect-tls13-chacha", tlsCase{
		version: tls.VersionTLS13, suite: tls.TLS_CHACHA20_POLY1305_SHA256})
}

// kgoSASLSSLScram: TLS 1.3 and SASL SCRAM-SHA-512 inside it.
func kgoSASLSSLScram(ctx context.Context, file string) error {
	return kgoTLS(ctx, file, "kdissect-sasl-ssl", "kdissect-sasl-ssl", tlsCase{
		version: tls.VersionTLS13, suite: tls.TLS_AES_128_GCM_SHA256, user: scram512User, pass: scram512Pass})
}

// kgoTLSTwinPlain is kgoTLS13 without TLS: the same port, topic, client
// ids, records and steps, in the clear.
func kgoTLSTwinPlain(ctx context.Context, file string) error {
	const topic = "kdissect-tls"
	ports := []int{tlsPort}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topic))
	if err != nil {
		return err
	}
	defer c.Close()
	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		return littleFlow(ctx, seeds, topic, 1, "kdissect-tls13")
	})
}
