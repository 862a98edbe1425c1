package capture

import (
	"encoding/binary"
	"io"
)

// SecretsTLSKeyLog is the Secrets Type of a pcapng Decryption Secrets Block that holds a TLS
// key log in NSS format ("TLSK"; editcap --inject-secrets tls,FILE writes them).
const SecretsTLSKeyLog = 0x544c534b

// Secrets is the content of one pcapng Decryption Secrets Block.
type Secrets struct {
	Type uint32
	Data []byte
}

// Secrets returns the Decryption Secrets Blocks read since the last call; a pcap file and a
// live capture have none. A pcapng writer puts them before the packets they decrypt, and
// they are read ahead of the packets, so that each block is returned by the time its
// packets are.
func (r *Reader) Secrets() []Secrets {
	if r.dsb == nil || len(r.dsb.found) == 0 {
		return nil
	}
	s := r.dsb.found
	r.dsb.found = nil
	return s
}

// HoldsSecrets reports whether the capture's format can carry decryption secrets (pcapng's
// Decryption Secrets Blocks): a pcap file never gives Secrets any.
func (r *Reader) HoldsSecrets() bool { return r.dsb != nil }

// maxSecretsBlock bounds the Decryption Secrets Blocks that are kept.
const maxSecretsBlock = 64 << 20

// dsbScanner watches the bytes of a pcapng file go by on their way to gopacket's pcapng
// reader, which parses Decryption Secrets Blocks but keeps them to itself, and collects
// them. It follows only the block structure (type, length); the reader checks the rest, and
// on anything it does not understand the scanner stops watching.
type dsbScanner struct {
	r     io.Reader
	order binary.ByteOrder
	// hdr holds the first 12 bytes of the current block: type, length and the first body
	// word (the byte-order magic of a section header).
	hdr   [12]byte
	nhdr  int
	left  int64 // bytes of the current block after hdr
	keep  bool
	block []byte
	off   bool
	found []Secrets
}

func (d *dsbScanner) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.scan(p[:n])
	return n, err
}

func (d *dsbScanner) scan(b []byte) {
	for len(b) > 0 && !d.off {
		if d.nhdr < len(d.hdr) {
			n := copy(d.hdr[d.nhdr:], b)
			d.nhdr += n
			b = b[n:]
			if d.nhdr < len(d.hdr) {
				return
			}
			if !d.startBlock() {
				d.off = true
				return
			}
		}
		n := int(min(d.left, int64(len(b))))
		if d.keep {
			d.block = append(d.block, b[:n]...)
		}
		d.left -= int64(n)
		b = b[n:]
		if d.left == 0 {
			d.endBlock()
		}
	}
}

// startBlock reads the header of a block.
func (d *dsbScanner) startBlock() bool {
	if binary.BigEndian.Uint32(d.hdr[:4]) == magicPcapng {
		switch binary.BigEndian.Uint32(d.hdr[8:12]) {
		case 0x1a2b3c4d:
			d.order = binary.BigEndian
		case 0x4d3c2b1a:
			d.order = binary.LittleEndian
		default:
			return false
		}
	}
	if d.order == nil {
		return false
	}
	length := d.order.Uint32(d.hdr[4:8])
	if length < 12 || length%4 != 0 {
		return false
	}
	d.left = int64(length) - int64(len(d.hdr))
	d.keep = d.order.Uint32(d.hdr[:4]) == 0x0000000a && length <= maxSecretsBlock
	if d.keep {
		d.block = append(make([]byte, 0, length), d.hdr[8:]...)
	}
	if d.left == 0 {
		d.endBlock()
	}
	return true
}

// endBlock takes the secrets of a finished Decryption Secrets Block: secrets type, secrets
// length, the secrets, padding, options, and the block length again.
func (d *dsbScanner) endBlock() {
	if d.keep && len(d.block) >= 8 {
		typ := d.order.Uint32(d.block[:4])
		n := int64(d.order.Uint32(d.block[4:8]))
		if n <= int64(len(d.block))-8 {
			d.found = append(d.found, Secrets{Type: typ, Data: d.block[8 : 8+n]})
		}
	}
	d.nhdr, d.keep, d.block = 0, false, nil
}
