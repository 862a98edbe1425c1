package tlsdec

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"
)

// The labels of the NSS key log format (SSLKEYLOGFILE) that kdissect uses. Each line of a key
// log is "LABEL <client random, hex> <secret, hex>"; lines starting with # are comments.
const (
	// LabelClientRandom holds a TLS 1.2 (or older) master secret.
	LabelClientRandom = "CLIENT_RANDOM"
	// The TLS 1.3 traffic secrets.
	LabelClientHandshake = "CLIENT_HANDSHAKE_TRAFFIC_SECRET"
	LabelServerHandshake = "SERVER_HANDSHAKE_TRAFFIC_SECRET"
	LabelClientTraffic0  = "CLIENT_TRAFFIC_SECRET_0"
	LabelServerTraffic0  = "SERVER_TRAFFIC_SECRET_0"
)

// maxSecret bounds one secret of a key log line (TLS secrets are 32 to 48 bytes).
const maxSecret = 128

type keyID struct {
	label  string
	random [32]byte
}

// KeyLog holds TLS session secrets by label and client random. It is safe for concurrent use:
// a capture reader may add secrets (pcapng Decryption Secrets Blocks) while connections look
// them up. The zero value is not usable; a nil *KeyLog holds nothing.
type KeyLog struct {
	mu      sync.Mutex
	secrets map[keyID][]byte
	// follow, when set, is a key log file that is read again, from where the last read
	// stopped, when a lookup misses: during a live capture the application appends to it as
	// it connects.
	follow *follower
}

type follower struct {
	name string
	off  int64
	last time.Time
}

// NewKeyLog returns an empty key log.
func NewKeyLog() *KeyLog { return &KeyLog{secrets: map[keyID][]byte{}} }

// ParseKeyLog reads a key log in NSS format. It keeps every line it can read; the error, if
// any, names the first line it could not.
func ParseKeyLog(r io.Reader) (*KeyLog, error) {
	k := NewKeyLog()
	_, err := k.Parse(r)
	return k, err
}

// OpenKeyLog reads the key log file name. With follow, the file is read again from where the
// last read stopped whenever a lookup misses (for live captures), and it need not exist yet.
func OpenKeyLog(name string, follow bool) (*KeyLog, error) {
	f, err := os.Open(name)
	if err != nil {
		if follow && errors.Is(err, fs.ErrNotExist) {
			k := NewKeyLog()
			k.follow = &follower{name: name}
			return k, nil
		}
		return nil, err
	}
	defer f.Close()
	k := NewKeyLog()
	n, err := k.parse(f, follow)
	if err != nil {
		return k, fmt.Errorf("%s: %w", name, err)
	}
	if follow {
		k.follow = &follower{name: name, off: n}
	}
	return k, nil
}

// Parse adds the lines of a key log in NSS format and returns how many bytes it read. It keeps
// every line it can read; the error, if any, names the first line it could not.
func (k *KeyLog) Parse(r io.Reader) (int64, error) { return k.parse(r, false) }

// parse reads lines; with whole, a last line without its newline is left unread (it may still
// be being written) and not counted.
func (k *KeyLog) parse(r io.Reader, whole bool) (int64, error) {
	br := bufio.NewReader(r)
	var firstErr error
	var n int64
	for line := 1; ; line++ {
		s, err := br.ReadString('\n')
		if err == io.EOF && whole && s != "" {
			break
		}
		n += int64(len(s))
		if s != "" {
			if perr := k.parseLine(s); perr != nil && firstErr == nil {
				firstErr = fmt.Errorf("key log line %d: %w", line, perr)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, err
		}
	}
	return n, firstErr
}

func (k *KeyLog) parseLine(s string) error {
	s = strings.TrimSpace(s)
	if s == "" || s[0] == '#' {
		return nil
	}
	f := strings.Fields(s)
	if len(f) != 3 {
		return fmt.Errorf("%d fields, want 3 (LABEL CLIENT_RANDOM SECRET)", len(f))
	}
	if f[0] == "RSA" || f[0] == "PMS_CLIENT_RANDOM" {
		return nil // pre-master secrets: not used
	}
	cr, err := hex.DecodeString(f[1])
	if err != nil || len(cr) != 32 {
		return fmt.Errorf("%s: the client random is not 32 bytes of hex", f[0])
	}
	sec, err := hex.DecodeString(f[2])
	if err != nil || len(sec) == 0 || len(sec) > maxSecret {
		return fmt.Errorf("%s: the secret is not hex (1 to %d bytes)", f[0], maxSecret)
	}
	k.Add(f[0], cr, sec)
	return nil
}

// Add stores a secret.
func (k *KeyLog) Add(label string, clientRandom, secret []byte) {
	if len(clientRandom) != 32 {
		return
	}
	id := keyID{label: label}
	copy(id.random[:], clientRandom)
	k.mu.Lock()
	k.secrets[id] = bytes.Clone(secret)
	k.mu.Unlock()
}

// Len is the number of secrets held.
func (k *KeyLog) Len() int {
	if k == nil {
		return 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.secrets)
}

// Lookup returns the secret with the label for the connection with the client random.
func (k *KeyLog) Lookup(label string, clientRandom []byte) ([]byte, bool) {
	if k == nil || len(clientRandom) != 32 {
		return nil, false
	}
	id := keyID{label: label}
	copy(id.random[:], clientRandom)
	k.mu.Lock()
	s, ok := k.secrets[id]
	k.mu.Unlock()
	if !ok && k.refresh() {
		k.mu.Lock()
		s, ok = k.secrets[id]
		k.mu.Unlock()
	}
	return s, ok
}

// Following reports whether lookups that miss read the key log file again.
func (k *KeyLog) Following() bool { return k.following() }

func (k *KeyLog) following() bool {
	if k == nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.follow != nil
}

// refresh reads what has been appended to a followed key log file; it reports whether it
// found anything. It reads at most every 10 ms.
func (k *KeyLog) refresh() bool {
	k.mu.Lock()
	fl := k.follow
	if fl == nil || time.Since(fl.last) < 10*time.Millisecond {
		k.mu.Unlock()
		return false
	}
	fl.last = time.Now()
	name, off := fl.name, fl.off
	k.mu.Unlock()
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() <= off {
		return false
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return false
	}
	n, _ := k.parse(f, true)
	k.mu.Lock()
	fl.off += n
	k.mu.Unlock()
	return n > 0
}
